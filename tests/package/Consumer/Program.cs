// Calls into each woven library in a way that takes one of its locks (see `locktime list` on the
// package), and prints deterministic results on stdout; LockTime's reports go to stderr.
using System;
using System.Reflection;
using Newtonsoft.Json;
using Newtonsoft.Json.Serialization;
using Polly;
using Polly.CircuitBreaker;
using Serilog;
using Serilog.Core;
using Serilog.Events;

namespace Consumer
{
    public sealed class Order
    {
        public int Id { get; set; }
        public string[] Items { get; set; }
    }

    sealed class CountingSink : ILogEventSink
    {
        public int Count;
        public void Emit(LogEvent logEvent) => Count++;
    }

    static class Program
    {
        // Newtonsoft.Json: the contract resolvers lock while they build and cache a contract.
        static void Json()
        {
            var order = new Order { Id = 7, Items = new[] { "a", "b" } };
            Console.WriteLine("json: " + JsonConvert.SerializeObject(order));
            var camel = new JsonSerializerSettings { ContractResolver = new CamelCasePropertyNamesContractResolver() };
            Console.WriteLine("json camel: " + JsonConvert.SerializeObject(order, camel));
            Console.WriteLine("json back: " + JsonConvert.DeserializeObject<Order>("{\"Id\":8}").Id);
        }

        // Serilog: a level switch locks when set; the message template cache when it adds a template.
        static void Serilog()
        {
            var level = new LoggingLevelSwitch();
            level.MinimumLevel = LogEventLevel.Debug;
            var sink = new CountingSink();
            using (var log = new LoggerConfiguration().MinimumLevel.ControlledBy(level).WriteTo.Sink(sink).CreateLogger())
            {
                log.Information("Hello {Name}", "Serilog");
                log.Debug("Order {Id} has {Count} items", 7, 2);
            }
            Console.WriteLine("serilog events: " + sink.Count);
        }

        // NLog: the log factory locks around its configuration and logger cache; targets around writes.
        static void NLog()
        {
            var config = new global::NLog.Config.LoggingConfiguration();
            var memory = new global::NLog.Targets.MemoryTarget("memory") { Layout = "${message}" };
            config.AddRuleForAllLevels(memory);
            global::NLog.LogManager.Configuration = config;
            var logger = global::NLog.LogManager.GetLogger("Consumer");
            logger.Info("Hello {0}", "NLog");
            global::NLog.LogManager.Shutdown();
            Console.WriteLine("nlog events: " + memory.Logs.Count);
        }

        // log4net: the repository selector and the hierarchy lock; appenders lock around each event.
        static void Log4net()
        {
            var repository = log4net.LogManager.GetRepository(Assembly.GetEntryAssembly());
            var memory = new log4net.Appender.MemoryAppender();
            memory.ActivateOptions();
            log4net.Config.BasicConfigurator.Configure(repository, memory);
            log4net.LogManager.GetLogger(typeof(Program)).Info("Hello log4net");
            Console.WriteLine("log4net events: " + memory.GetEvents().Length);
        }

        // Polly: the circuit breaker's state controller locks around every execution.
        static void Polly()
        {
            var pipeline = new ResiliencePipelineBuilder().AddCircuitBreaker(new CircuitBreakerStrategyOptions()).Build();
            Console.WriteLine("polly: " + pipeline.Execute(() => 42));
        }

        static void Main()
        {
            Json();
            Serilog();
            NLog();
            Log4net();
            Polly();
        }
    }
}
