// OrderGraphTests.cs - the lock order's graph against a plain reachability search: which edge closes a
// cycle, the components and their order, the paths it gives, and what a sweep keeps.
using LockTime.Runtime;
using Xunit;

namespace LockTime.Runtime.Tests;

public class OrderGraphTests
{
    // Whether `from` reaches `to` along `edges` (breadth first, every edge).
    private static bool Reaches(List<(int From, int To)> edges, int from, int to)
    {
        var seen = new HashSet<int> { from };
        var todo = new Queue<int>();
        todo.Enqueue(from);
        while (todo.Count > 0)
        {
            int n = todo.Dequeue();
            if (n == to)
                return true;
            foreach (var e in edges)
                if (e.From == n && seen.Add(e.To))
                    todo.Enqueue(e.To);
        }
        return false;
    }

    [Theory]
    [InlineData(1, 40, 200)]
    [InlineData(2, 60, 150)]
    [InlineData(3, 100, 400)]
    [InlineData(4, 12, 100)]
    public void EachEdgeClosesACycleExactlyWhenItsEndReachesItsStart(int seed, int nodes, int edges)
    {
        var graph = new OrderGraph();
        for (int n = 0; n < nodes; n++)
            graph.AddNode(n);
        var random = new Random(seed);
        var added = new List<(int From, int To)>();
        int cycles = 0;
        for (int k = 0; k < edges; k++)
        {
            int from = random.Next(nodes), to = random.Next(nodes);
            if (from == to || added.Contains((from, to)))
                continue;
            bool expected = Reaches(added, to, from);
            int e = graph.AddEdge(from, to, from, to, 1, out bool cycle);
            added.Add((from, to));
            Assert.Equal(expected, cycle);
            Assert.Equal(from, graph.From[e]);
            Assert.Equal(to, graph.To[e]);
            if (cycle)
            {
                cycles++;
                var path = graph.Path(to, from, nodes, nodes);
                Assert.NotNull(path); // a real path back, edge after edge
                int at = to;
                foreach (int p in path!)
                {
                    Assert.Equal(at, graph.From[p]);
                    at = graph.To[p];
                }
                Assert.Equal(from, at);
            }
        }
        // The components are the strongly connected ones, in a topological order.
        foreach (var (from, to) in added)
        {
            bool together = Reaches(added, to, from);
            Assert.Equal(together, graph.Find(from) == graph.Find(to));
            if (!together)
                Assert.True(graph.Place(from) < graph.Place(to), $"{from} -> {to}: places {graph.Place(from)}, {graph.Place(to)}");
        }
        Assert.True(cycles > 0 || edges < nodes, $"seed {seed}: no cycle at all");
    }

    [Fact]
    public void ASweepDropsDeadNodesAndTheirEdgesAndKeepsTheOrder()
    {
        var graph = new OrderGraph();
        for (int n = 0; n < 6; n++)
            graph.AddNode(n);
        graph.AddEdge(0, 1, 0, 0, 1, out bool c1);
        graph.AddEdge(1, 2, 0, 0, 1, out bool c2);
        graph.AddEdge(2, 1, 0, 0, 1, out bool c3); // 1 and 2: one component
        graph.AddEdge(3, 0, 0, 0, 1, out bool c4); // against the first order: 3 moves before 0
        graph.AddEdge(2, 4, 0, 0, 1, out bool c5);
        Assert.Equal(new[] { false, false, true, false, false }, new[] { c1, c2, c3, c4, c5 });
        var dead = new bool[6];
        dead[1] = true; // the component's representative or not, 2 stays in it
        int dropped = graph.Compact(dead, 6);
        Assert.Equal(3, dropped); // 0 -> 1, 1 -> 2, 2 -> 1
        Assert.Equal(-1, graph.From[0]);
        Assert.True(graph.Place(3) < graph.Place(0));
        Assert.True(graph.Place(2) < graph.Place(4));
        // A free edge id is used again; the new edge against the order closes no cycle.
        graph.AddNode(1);
        int e = graph.AddEdge(4, 3, 4, 3, 1, out bool c6);
        Assert.False(c6);
        Assert.True(e < 5, $"edge id {e}");
        Assert.True(graph.Place(4) < graph.Place(3));
        graph.AddEdge(0, 2, 0, 2, 1, out bool c7); // 2 -> 4 -> 3 -> 0 -> 2
        Assert.True(c7);
        Assert.Equal(graph.Find(0), graph.Find(4));
    }
}
