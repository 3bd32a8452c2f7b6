// StderrCapture.cs - Console.Error captured for the length of a using block (tests run one at a time).
namespace LockTime.Runtime.Tests;

internal sealed class StderrCapture : IDisposable
{
    private readonly TextWriter old = Console.Error;
    private readonly StringWriter text = new();

    public StderrCapture()
    {
        Console.SetError(text);
        LockTime.Runtime.Consoles.ErrorOverride = text; // the run-time writes stderr through a stream of its own
    }

    public string Text => text.ToString();

    public void Dispose()
    {
        Console.SetError(old);
        LockTime.Runtime.Consoles.ErrorOverride = null;
    }
}
