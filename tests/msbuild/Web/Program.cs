// A web app as LockTime's users write them: GET /order/{id} places an order behind one SemaphoreSlim
// that each request holds across an await (the requests serialize on it); GET /price/{item} reads a
// cache under a ReaderWriterLockSlim read lock, which a background service takes for writing every
// 100 ms and holds 80 ms (the readers starve meanwhile).
var builder = WebApplication.CreateBuilder(args);
builder.Services.AddSingleton<Orders>();
builder.Services.AddSingleton<PriceCache>();
builder.Services.AddHostedService<PriceRefresher>();
var app = builder.Build();
app.MapGet("/order/{id:int}", async (int id, Orders orders) => await orders.Place(id));
app.MapGet("/price/{item}", (string item, PriceCache cache) => cache.Get(item));
app.Run();

sealed class Orders
{
    private readonly SemaphoreSlim _gate = new(1, 1);
    private int _placed;

    public async Task<string> Place(int id)
    {
        await _gate.WaitAsync(); // requests wait here
        try
        {
            await Task.Delay(40);
            return $"order {id} placed #{++_placed}";
        }
        finally
        {
            _gate.Release();
        }
    }
}

sealed class PriceCache
{
    private readonly ReaderWriterLockSlim _lock = new();
    private readonly Dictionary<string, decimal> _prices = new();

    public string Get(string item)
    {
        _lock.EnterReadLock(); // readers wait here
        try
        {
            return _prices.TryGetValue(item, out var price) ? $"{item} {price}" : $"{item} unknown";
        }
        finally
        {
            _lock.ExitReadLock();
        }
    }

    public void Refresh()
    {
        _lock.EnterWriteLock(); // the writer that starves them
        try
        {
            Thread.Sleep(80);
            _prices["apple"] = 1.25m;
        }
        finally
        {
            _lock.ExitWriteLock();
        }
    }
}

sealed class PriceRefresher(PriceCache cache) : BackgroundService
{
    protected override async Task ExecuteAsync(CancellationToken stop)
    {
        while (!stop.IsCancellationRequested)
        {
            cache.Refresh();
            try
            {
                await Task.Delay(100, stop);
            }
            catch (OperationCanceledException)
            {
            }
        }
    }
}
