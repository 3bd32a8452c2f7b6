// Takes locks inside Newtonsoft.Json and Serilog (woven by LockTimePackages) and inside Polly.Core (not named, so
// not woven: no report may come from it).
using System;
using Newtonsoft.Json;
using Polly;
using Polly.CircuitBreaker;
using Serilog.Core;
using Serilog.Events;

namespace UsesPackages
{
    public sealed class Order
    {
        public int Id { get; set; }
    }

    static class Program
    {
        static void Main()
        {
            Console.WriteLine("json: " + JsonConvert.SerializeObject(new Order { Id = 3 }));
            var level = new LoggingLevelSwitch();
            level.MinimumLevel = LogEventLevel.Debug;
            Console.WriteLine("serilog level: " + level.MinimumLevel);
            var pipeline = new ResiliencePipelineBuilder().AddCircuitBreaker(new CircuitBreakerStrategyOptions()).Build();
            Console.WriteLine("polly: " + pipeline.Execute(() => 42));
        }
    }
}
