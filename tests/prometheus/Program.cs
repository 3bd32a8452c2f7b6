// A shop whose orders serialize on one lock held 2 ms (GET /order), beside a price lookup whose lock no one
// else takes (GET /price); OpenTelemetry's SDK exports the Meter "LockTime" at /metrics, as a service would.
using OpenTelemetry.Metrics;

var builder = WebApplication.CreateBuilder(args);
builder.Logging.ClearProviders();
builder.Services.AddOpenTelemetry().WithMetrics(metrics => metrics.AddMeter("LockTime").AddPrometheusExporter());
var app = builder.Build();
app.MapPrometheusScrapingEndpoint();
app.MapGet("/order", Shop.Order);
app.MapGet("/price", Shop.Price);
app.Run();

static class Shop
{
    static readonly object Orders = new();
    static readonly object Prices = new();
    static int count;

    public static string Order()
    {
        lock (Orders) // orders wait here
        {
            Thread.Sleep(2);
            return (++count).ToString();
        }
    }

    public static string Price()
    {
        lock (Prices) // no one waits here
            return "0.5";
    }
}
