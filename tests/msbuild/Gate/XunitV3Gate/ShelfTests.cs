// An xunit.v3 test that holds a lock 120 ms (the gate's line is the lock statement), and one that fails on request.
using System;
using System.Threading;
using Xunit;

public class ShelfTests
{
    static readonly object Shelf = new object();

    [Fact]
    public void HoldsTheShelfLock()
    {
        lock (Shelf) // held 120 ms
        {
            Thread.Sleep(120);
        }
    }

    [Fact]
    public void FailsWhenAsked()
    {
        Assert.Null(Environment.GetEnvironmentVariable("GATE_TEST_FAIL"));
    }
}
