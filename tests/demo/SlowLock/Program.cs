// A small shop whose inventory lock is held too long: one thread reserves stock while
// "talking to the warehouse" inside the lock, and the others queue up behind it.
namespace Shop;

class Inventory
{
    private readonly object _gate = new();
    private readonly Lock _prices = new();
    private readonly Dictionary<string, int> _stock = new() { ["apple"] = 10, ["pear"] = 5 };
    private readonly Dictionary<string, decimal> _price = new() { ["apple"] = 0.5m, ["pear"] = 0.8m };

    public bool Reserve(string item, int count, bool slowWarehouse)
    {
        lock (_gate)
        {
            if (slowWarehouse)
                Thread.Sleep(150); // the slow call that should never sit inside a lock
            if (_stock[item] < count)
                return false;
            _stock[item] -= count;
            return true;
        }
    }

    public int Count(string item)
    {
        lock (_gate)
            return _stock[item];
    }

    public decimal Price(string item)
    {
        lock (_prices) // C# 13: lock on System.Threading.Lock
            return _price[item];
    }
}

static class Program
{
    static void Main()
    {
        var inventory = new Inventory();
        var slow = new Thread(() => inventory.Reserve("apple", 2, slowWarehouse: true));
        slow.Start();
        Thread.Sleep(20);
        var buyers = Enumerable.Range(0, 3)
            .Select(_ => new Thread(() => inventory.Reserve("pear", 1, slowWarehouse: false)))
            .ToList();
        buyers.ForEach(t => t.Start());
        slow.Join();
        buyers.ForEach(t => t.Join());
        Console.WriteLine($"apples left: {inventory.Count("apple")}, pears left: {inventory.Count("pear")}");
        Console.WriteLine($"pear price: {inventory.Price("pear")}");
    }
}
