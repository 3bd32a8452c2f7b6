// TraceReader FILE.nettrace: one JSON object a line for each event of the provider LockTime in the trace -
// { "name", "thread", "payload": { field: value }, "stack": [ method, ... innermost first ] } - read with
// TraceEvent's TraceLog, which resolves the managed frames of EventPipe's stacks from the rundown.
using System;
using System.Collections.Generic;
using System.IO;
using System.Text.Json;
using Microsoft.Diagnostics.Tracing;
using Microsoft.Diagnostics.Tracing.Etlx;

static class Program
{
    static int Main(string[] args)
    {
        if (args.Length != 1) {
            Console.Error.WriteLine("usage: TraceReader FILE.nettrace");
            return 2;
        }
        string etlx = TraceLog.CreateFromEventPipeDataFile(args[0], Path.ChangeExtension(args[0], ".etlx"));
        using var log = new TraceLog(etlx);
        foreach (TraceEvent e in log.Events) {
            if (e.ProviderName != "LockTime")
                continue;
            var payload = new Dictionary<string, object>();
            for (int i = 0; i < e.PayloadNames.Length; i++)
                payload[e.PayloadNames[i]] = e.PayloadValue(i);
            /* a self-describing event's fields come as one unnamed struct */
            if (payload.Count == 1 && payload.TryGetValue("", out object only) && only is IDictionary<string, object> fields)
                payload = new Dictionary<string, object>(fields);
            var stack = new List<string>();
            for (TraceCallStack frame = e.CallStack(); frame != null; frame = frame.Caller)
                stack.Add(frame.CodeAddress.FullMethodName);
            Console.WriteLine(JsonSerializer.Serialize(new Dictionary<string, object> {
                ["name"] = e.EventName, ["thread"] = e.ThreadID, ["payload"] = payload, ["stack"] = stack }));
        }
        return 0;
    }
}
