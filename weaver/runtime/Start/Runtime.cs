// Runtime.cs - one copy's start (settings, sites, registry), its writer thread, the summary and report at exit.
using System;
using System.Collections.Generic;
using System.Runtime.CompilerServices;
using System.Runtime.ExceptionServices;
using System.Threading;

namespace LockTime.Runtime
{
    /// <summary>
    /// The life of one copy of the run-time. <see cref="Start"/> runs once, from <see cref="Api"/>'s
    /// type initializer (the first timed lock): it reads the settings, loads the site table and joins
    /// the process's registry. The copy that creates the registry (the owner) starts the line writer
    /// thread and, at <c>AppDomain.ProcessExit</c> (also after <c>Environment.Exit</c>), at an unhandled
    /// exception (<c>AppDomain.UnhandledException</c>: ProcessExit does not run then) or at SIGTERM
    /// (<see cref="Signals"/>: nor then, on .NET 10+ and Mono), whichever comes first, writes the queued
    /// lines, the summary and the report for every copy. Nothing here throws.
    /// </summary>
    [CompilerGenerated]
    internal static class Runtime
    {
        /// <summary>This copy's state once started, else null (also while starting).</summary>
        internal static Collector Current;

        static object[] registry;
        static LineWriter writer;          /* the owner's only */
        static LockOrder order;            /* the owner's only: the process's lock order */
        static Timeline timeline;          /* the owner's only: the process's last slow locks, or null (LOCKTIME_TIMELINE=0) */
        static string cycleSink;           /* where the owner writes potential deadlocks */
        static DateTime startUtc;
        static long startTicks;
        static long intervalTicks;         /* between reports; 0 = at exit only */
        static long nextReport;
        static int finished;               /* Unfinished, Finished or FinishedAtSignal */
        const int Unfinished = 0, Finished = 1, FinishedAtSignal = 2;
        static object termination;         /* the owner's SIGTERM registration (Signals.RegisterDirect or Register), kept alive */
        static bool unloadingWatched;      /* the owner's exit handler is moved last just before the exit (ExitOrder) */
        static readonly object exitGate = new object(); /* held while the exit handler is moved (MoveExitLast) */
        static int namesChecked;           /* the environment's names: 0 not looked at, 1 being looked at, 2 warned of (CheckNames) */
        static int pid;                    /* read once, by the first report */
        static bool reportWarned;
        static Collector metricsOwner;     /* the owner's only: whose settings and thread record the Meter uses */
        static Func<bool, int>[] sweepers = new Func<bool, int>[0]; /* the owner's run-time thread's: every copy's sweep (registry entry 9) */
        static object meter;               /* the process's Meter "LockTime", or null (Metrics.Start) */
        static Thread writerThread;        /* the owner's: the only thread that writes lines to their sinks (registry entry 4) */
        static bool writerStuck;           /* an exit gave up waiting for the writer thread: later ones do not wait */
        static int writerStarted;          /* 1 once the writer thread is started (StartWriter) */
        static bool exitToo;               /* the exit handler registered now is OnExitToo, not OnExit (MoveExitLast) */
        static long nextRollUps;           /* the run-time thread's: when it next calls the copies' roll-ups (RollUps) */

        /// <summary>
        /// Seconds after the start at which the run-time's thread (<see cref="MainLoop"/>) does its late start: it warns
        /// of mistyped variable names (<see cref="CheckNames"/>) and creates the Meter: reading the
        /// environment's names took 2-4 ms of CPU at the start, while the program's threads ran
        /// their first locks on the same cores (bench/sink); loading System.Diagnostics.DiagnosticSource and System.Linq
        /// and reflecting over them takes CPU (and the loader's locks) that a program's first locks should not
        /// compete with - 50 nested locks were seen held 5 ms longer after the innermost when it did not wait;
        /// a listener finds a Meter made later as well (MeterListener, dotnet-counters and OpenTelemetry
        /// follow new instruments).
        /// </summary>
        internal const double LateStartS = 1;

        /// <summary>
        /// The longest an exit, crash or SIGTERM waits for the writer thread to take another line (<see cref="AwaitLines"/>),
        /// in milliseconds: a writer blocked that long writes into a sink that takes nothing (a pipe or FIFO nobody
        /// reads), and the process ends without the lines it holds, counted in the report (<c>unwritten_lines</c>).
        /// </summary>
        internal const int WriterStallMs = 1000;

        /// <summary>The longest an exit waits for the writer thread in all, however slowly it goes on (a slow terminal), in milliseconds.</summary>
        internal const int WriterWaitMs = 3000;

        /// <summary>The longest a second SIGTERM waits for the summary and report the first one is writing (<see cref="Terminating"/>), in milliseconds.</summary>
        const int SignalWaitMs = 10000;

        /// <summary>Held while the summary and report at a SIGTERM are written.</summary>
        static readonly object signalGate = new object();

        /// <summary>The longest the exit waits for the writer thread's warnings of mistyped names (<see cref="CheckNames"/>), in milliseconds.</summary>
        const int NamesWaitMs = 1000;

        /// <summary>Starts from the environment and the baked site table. Returns true when timing is off.</summary>
        internal static bool Start()
        {
            if (Current != null)
                return false;
            try {
                Settings settings = Settings.FromEnvironment();
                if (settings.Disabled)
                    return true;
                SiteTable sites = new SiteTable();
                SiteList.Load(sites);
                return StartWith(sites, settings, Registry.Slot);
            } catch (Exception) {
                return true;
            }
        }

        /// <summary>
        /// Starts with the given sites and settings, meeting the other copies in AppDomain slot
        /// <paramref name="slot"/>. Returns true when timing is off (disabled, or the start failed).
        /// </summary>
        internal static bool StartWith(SiteTable sites, Settings settings, string slot)
        {
            try {
                if (Current != null)
                    return false;
                if (settings.Disabled)
                    return true;
                Collector c = new Collector(sites, settings, Clock.Frequency());
                string mismatch = null;
                AppDomain domain = AppDomain.CurrentDomain;
                /* The first copy to start makes Mono's Console before its threads exist, and before it locks the
                   domain: on a woven core library Console's own timed locks start that library's copy here, on
                   this thread, which must find the slot as it is (the lock is re-entrant: inside it, that copy found
                   it empty and owned a second registry - two summaries, and the report of the one that wrote last).
                   .NET's host always sets TRUSTED_PLATFORM_ASSEMBLIES, Mono never: .NET does not even compile Prepare */
                if (domain.GetData(slot) == null && domain.GetData("TRUSTED_PLATFORM_ASSEMBLIES") == null)
                    Consoles.Prepare();
                lock (domain) {
                    object data = domain.GetData(slot);
                    if (data != null && !Registry.IsCurrent(data)) {
                        /* another layout holds the slot: the copies of this one meet beside it */
                        mismatch = Registry.Describe(data);
                        slot = slot + ".v" + Registry.Version.ToString(System.Globalization.CultureInfo.InvariantCulture);
                        data = domain.GetData(slot);
                    }
                    if (data != null && Registry.IsCurrent(data)) {
                        registry = (object[])data;
                    } else {
                        Own(c);
                        if (data == null)
                            domain.SetData(slot, registry);
                    }
                }
                c.Lines = (Action<object[]>)registry[1];
                c.Records = Registry.Records(registry);
                c.Room = Registry.Room(registry);
                c.Writer = (Thread)registry[4];
                c.TimelineAdd = Registry.Timeline(registry);
                object[] events = Registry.Events(registry);
                if (events != null) {
                    c.Events = new Events(sites);
                    List<Action<object>> joins = (List<Action<object>>)events[1];
                    lock (joins)
                        joins.Add(new Action<object>(c.Events.Join));
                }
                if (order != null && c.Events != null) /* the owner: the lock order's cycles give their events through it */
                    order.CycleEvent = new Action<bool, string>(c.Events.Cycle);
                Registry.AddSource(registry, new Func<object[]>(c.Snapshot));
                List<Action> markers = Registry.Markers(registry);
                if (markers != null)
                    lock (markers)
                        markers.Add(new Action(c.MarkBusy));
                List<Func<bool>> holding = Registry.Holding(registry);
                if (holding != null)
                    lock (holding)
                        holding.Add(new Func<bool>(c.Holding));
                List<Func<bool, int>> sweeps = Registry.Sweeps(registry);
                if (sweeps != null)
                    lock (sweeps)
                        sweeps.Add(new Func<bool, int>(c.Sweep));
                c.JoinRollUps(Registry.RollUps(registry));
                c.Finders = Registry.Finders(registry);
                if (c.Finders != null)
                    lock (c.Finders)
                        c.Finders.Add(new Func<object, string[]>(c.Holder));
                object[] lockOrder = Registry.Order(registry);
                if (lockOrder != null && settings.LockOrder) {
                    c.OrderBase = ((Func<string[], string[], int>)lockOrder[0])(sites.Methods, sites.Locations);
                    c.OrderExit = (Action<object>)lockOrder[2];
                    c.OrderEnter = (Action<object, int>)lockOrder[1];
                    c.OrderWait = lockOrder.Length > 3 ? lockOrder[3] as Action<object, int, bool> : null;
                    c.Order = c.OrderEnter.Target as LockOrder; /* this copy's type only when this copy made it */
                }
                for (int i = 0; i < settings.Warnings.Count; i++)
                    Warn(settings.Warnings[i]);
                if (mismatch != null)
                    Warn("LockTime: warning: another LockTime run-time in this process uses " + mismatch +
                         " (this one: version 1); the assemblies of version 1 give a separate summary and report");
                Current = c;
                Warm(c);
                return false;
            } catch (Exception) {
                return true;
            }
        }

        /// <summary>
        /// Runs an acquisition and release of a lock object of its own through the entry points once, as
        /// site -1 (no statistics, no line), and records a hold in a histogram of its own: each method is
        /// compiled at its first call, and without this the first lock of the process would count that
        /// compiling in its hold (about a millisecond, seen as a slow lock at the default threshold). A copy
        /// that does not own the lock order leaves it out: it may start inside another copy's lock, and
        /// the order would keep an edge to the object of its own (the owner's code it calls is compiled).
        /// </summary>
        static void Warm(Collector c)
        {
            Action<object, int> enter = c.OrderEnter;
            Action<object> exit = c.OrderExit;
            if (c.Order == null) {
                c.OrderEnter = null;
                c.OrderExit = null;
            }
            object own = new object();
            long now = Clock.Ticks();
            Api.Acquired(own, -1, now, now, false);
            Api.Released(own, Clock.Ticks());
            c.OrderEnter = enter;
            c.OrderExit = exit;
            new Histogram().Record(c.Ns(1));
        }

        /// <summary>
        /// Makes this copy the owner: a new registry, the exit and crash handlers, the end of a thread's announced
        /// wait at an exception it throws (<see cref="Deadlocks.Thrown"/>), the SIGTERM handler and the watch that
        /// puts the exit handler last (by direct calls on .NET 6+: <see cref="Signals.RegisterDirect"/>,
        /// <see cref="ExitOrder.WatchUnloading"/>, unless <see cref="ExitOrder.Watch"/> did before the program ran), and the run-time's thread (<see cref="MainLoop"/>, which starts
        /// the writer thread when the first line comes).
        /// </summary>
        static void Own(Collector c)
        {
            writer = new LineWriter();
            writerThread = new Thread(new ThreadStart(WriterLoop));
            writerThread.IsBackground = true;
            writerThread.Name = "LockTime writer";
            Thread thread = new Thread(new ThreadStart(MainLoop));
            thread.IsBackground = true;
            thread.Name = "LockTime";
            order = new LockOrder();
            cycleSink = c.Settings.Output;
            metricsOwner = c;
            order.CycleLine = new Action<string>(Cycle);
            timeline = c.Settings.Timeline > 0 ? new Timeline(c.Settings.Timeline) : null;
            registry = Registry.Create(writer, writerThread, order, timeline, new Action(Terminating));
            startUtc = DateTime.UtcNow;
            startTicks = Clock.Ticks();
            double interval = c.Settings.ReportPath != null ? c.Settings.ReportIntervalS * Clock.Frequency() : 0;
            intervalTicks = interval >= long.MaxValue / 2 ? long.MaxValue / 2 : (long)interval;
            nextReport = startTicks + intervalTicks;
            AppDomain.CurrentDomain.ProcessExit += new EventHandler(OnExit);
            AppDomain.CurrentDomain.UnhandledException += new UnhandledExceptionEventHandler(OnUnhandled);
            AppDomain.CurrentDomain.FirstChanceException += new EventHandler<FirstChanceExceptionEventArgs>(Deadlocks.Thrown);
            try {
                termination = Signals.RegisterDirect();
            } catch (Exception) {
            }
            unloadingWatched = ExitOrder.Watch();
            StartUnflowed(thread);
        }

        /// <summary>
        /// Starts <paramref name="thread"/>, one of the run-time's own, without the calling thread's execution context: it
        /// takes no <c>AsyncLocal</c> value of the program's locking code (nor keeps it alive). The owner's, at
        /// the start, whatever the program does next: a service whose first lock is never released still gets
        /// its periodic reports (with the hold in progress) and its Meter. <c>Thread.Start</c> returns once the
        /// new thread runs: about a millisecond on a loaded machine, which every thread's first lock waits.
        /// </summary>
        internal static void StartUnflowed(Thread thread)
        {
            if (ExecutionContext.IsFlowSuppressed()) {
                thread.Start();
                return;
            }
            AsyncFlowControl flow = ExecutionContext.SuppressFlow();
            try {
                thread.Start();
            } finally {
                flow.Undo();
            }
        }

        /// <summary>Queues the line of a potential deadlock, to the owner's sink.</summary>
        static void Cycle(string line)
        {
            writer.Enqueue(LineWriter.TextEntry(cycleSink, line));
        }

        /// <summary>
        /// Warns of every other LOCKTIME_* name in the environment (<see cref="Settings.Unknown()"/>), once per
        /// process: the owner's run-time thread <see cref="LateStartS"/> after the start, or the exit when
        /// that comes first (a short program is warned of at its end, a service a second after it starts). The
        /// exit (<paramref name="atExit"/>) that finds the writer thread still at it waits up to
        /// <see cref="NamesWaitMs"/> for its warnings: the process ends with the exit, and would end
        /// that thread before it prints.
        /// </summary>
        static void CheckNames(bool atExit)
        {
            if (Interlocked.CompareExchange(ref namesChecked, 1, 0) != 0) {
                for (int ms = 0; atExit && ms < NamesWaitMs && Volatile.Read(ref namesChecked) != 2; ms++)
                    Thread.Sleep(1);
                return;
            }
            try {
                List<string> warnings = Settings.Unknown();
                for (int i = 0; i < warnings.Count; i++)
                    Warn(warnings[i]);
            } catch (Exception) {
            }
            Volatile.Write(ref namesChecked, 2);
        }

        /// <summary>Queues a warning for stderr (the writer thread prints it) unless a copy in this process queued it already.</summary>
        static void Warn(string warning)
        {
            try {
                if (Registry.FirstTime(registry, warning))
                    ((Action<object[]>)registry[1])(LineWriter.TextEntry("stderr", warning));
            } catch (Exception) {
            }
        }

        /// <summary>
        /// The run-time's thread, which never writes to a sink (a sink that blocks stops only the writer thread). First it
        /// registers the SIGTERM handler through reflection when the start could not register it directly
        /// (<see cref="Signals.Register"/>: 11-40 ms of CPU, off the first lock's path); then every 10 ms it starts the
        /// writer thread and makes the EventSource once the first line is queued (<see cref="StartWriter"/>,
        /// <see cref="MakeEvents"/>: a program without slow locks needs neither; a line written means the handler is
        /// there), sweeps what the threads that ended left (<see cref="SweepDue"/>), moves the exit handler last where
        /// the exit's own hook cannot (<see cref="MoveExitLast"/>) and writes the periodic report; once a second it calls
        /// the copies' roll-ups of held-back lines (<see cref="RollUps"/>); one second after the
        /// start it warns of mistyped variable names (<see cref="CheckNames"/>) and creates the process's Meter
        /// (<see cref="LateStartS"/>).
        /// </summary>
        static void MainLoop()
        {
            ThreadRecord.MakeOwn();
            if (termination == null)
                termination = Signals.Register();
            if (TracedFromStart())
                MakeEvents();
            long lateAt = Clock.Ticks() + (long)(LateStartS * Clock.Frequency());
            bool lateDone = false, lines = false;
            while (true) {
                try {
                    if (!lines && writer.Queued() > 0 && Volatile.Read(ref finished) == Unfinished) { /* a line queued before the exit began (it sets finished, then queues its summary) */
                        lines = true;
                        StartWriter();
                        MakeEvents();
                    }
                    if (!lateDone && Clock.Ticks() >= lateAt) {
                        lateDone = true;
                        CheckNames(false);
                        meter = Metrics.Start(metricsOwner, metricsOwner.Settings.MetricsSites);
                    }
                    JoinEvents();
                    SweepDue();
                    if (Clock.Ticks() >= nextRollUps) {
                        nextRollUps = Clock.Ticks() + Clock.Frequency();
                        RollUps(false);
                    }
                    if (!unloadingWatched)
                        MoveExitLast();
                    if (intervalTicks > 0 && Clock.Ticks() >= nextReport) {
                        nextReport = Clock.Ticks() + intervalTicks;
                        BecomeBusy();
                        WriteReport(Gather(), false);
                    }
                    Thread.Sleep(10);
                } catch (Exception) {
                    Thread.Sleep(100);
                }
            }
        }

        /// <summary>
        /// Makes the process's EventSource (<see cref="Events.Create"/>) into the registry's entry 10 unless it is there,
        /// on the run-time's thread: as that thread starts when the process was started with a trace session
        /// (<see cref="TracedFromStart"/>: dotnet-trace's sees the events from then on, a deadlock that is the process's
        /// first line included), else when the first line is queued (every event comes with a line: a program without
        /// slow locks, potential deadlocks or deadlocks does not pay its 35 ms of CPU; a session attached later enables
        /// the source when it is made). Never throws.
        /// </summary>
        static void MakeEvents()
        {
            try {
                object[] events = Registry.Events(registry);
                if (events != null && events[0] == null)
                    events[0] = Events.Create();
            } catch (Exception) {
            }
        }

        /// <summary>
        /// True when the process was started with an EventPipe session or a diagnostic port to open one (dotnet-trace
        /// collect and dotnet-monitor set <c>DOTNET_DiagnosticPorts</c> for the process they start;
        /// <c>DOTNET_EnableEventPipe</c> starts a session; <c>COMPlus_</c> is the older prefix). Never throws.
        /// </summary>
        static bool TracedFromStart()
        {
            try {
                string[] names = { "DOTNET_DiagnosticPorts", "COMPlus_DiagnosticPorts", "DOTNET_EnableEventPipe", "COMPlus_EnableEventPipe" };
                for (int i = 0; i < names.Length; i++) {
                    string value = Environment.GetEnvironmentVariable(names[i]);
                    if (!string.IsNullOrEmpty(value) && value != "0")
                        return true;
                }
            } catch (Exception) {
            }
            return false;
        }

        /// <summary>
        /// Calls the joins the copies added to the registry's entry 10 since the last call with the process's EventSource
        /// (<see cref="Events.Join"/>), if there is one: on the run-time's thread every 10 ms, so that the reflection over
        /// the source never runs on a lock's thread. A join leaves the list once it is done (the copies only add to it;
        /// this thread alone takes from it): a copy whose join is no longer listed gives its events. Never throws.
        /// </summary>
        static void JoinEvents()
        {
            try {
                object[] events = Registry.Events(registry);
                if (events == null || events[0] == null)
                    return;
                List<Action<object>> joins = (List<Action<object>>)events[1];
                Action<object>[] due;
                lock (joins) {
                    if (joins.Count == 0)
                        return;
                    due = joins.ToArray();
                }
                for (int i = 0; i < due.Length; i++)
                    due[i](events[0]);
                lock (joins)
                    joins.RemoveRange(0, due.Length);
            } catch (Exception) {
            }
        }

        /// <summary>
        /// Starts the writer thread unless it was started: the run-time's thread when the first line is queued (after the
        /// SIGTERM handler is registered: a slow-lock line on a sink means the handler is there), or the exit, a crash or
        /// SIGTERM that comes first, once it queued what it waits for (<see cref="AwaitLines"/>). Never throws.
        /// </summary>
        static void StartWriter()
        {
            if (Interlocked.CompareExchange(ref writerStarted, 1, 0) != 0)
                return;
            try {
                StartUnflowed(writerThread);
            } catch (Exception) {
            }
        }

        /// <summary>
        /// The writer thread: writes the queued lines to their sinks (<see cref="LineWriter.TryDrain"/>), sleeping
        /// 10 ms when there are none. The only thread that writes to a sink: when one blocks (a pipe nobody reads),
        /// this thread blocks, and nothing else waits for it more than <see cref="WriterStallMs"/>.
        /// </summary>
        static void WriterLoop()
        {
            ThreadRecord.MakeOwn();
            while (true) {
                try {
                    if (!writer.TryDrain())
                        Thread.Sleep(10);
                } catch (Exception) {
                    Thread.Sleep(100);
                }
            }
        }

        /// <summary>
        /// Every copy's sweep of the records of threads that ended, and the lock order's of their held-lock
        /// lists, each when its list doubled since its last sweep (<see cref="Collector.Sweep"/>): the
        /// writer thread's, between drains, so that no lock's thread sweeps.
        /// </summary>
        static void SweepDue()
        {
            List<Func<bool, int>> all = Registry.Sweeps(registry);
            if (all != null) {
                lock (all)
                    if (all.Count != sweepers.Length)
                        sweepers = all.ToArray();
                for (int i = 0; i < sweepers.Length; i++)
                    sweepers[i](true);
            }
            order.SweepThreads(true);
        }

        /// <summary>
        /// Every copy's roll-up of the slow-lock lines its limit held back (<see cref="Collector.RollUp"/>, registry entry
        /// 11): the due ones from the run-time's thread, once a second; all of them at the exit (<paramref name="atExit"/>),
        /// before the summary. Never throws.
        /// </summary>
        static void RollUps(bool atExit)
        {
            try {
                List<Action<bool>> all = Registry.RollUps(registry);
                if (all == null)
                    return;
                Action<bool>[] each;
                lock (all)
                    each = all.ToArray();
                for (int i = 0; i < each.Length; i++)
                    each[i](atExit);
            } catch (Exception) {
            }
        }

        static void OnExit(object sender, EventArgs e)
        {
            Finish();
        }

        /// <summary>The same as <see cref="OnExit"/>, a delegate of its own (<see cref="MoveExitLast"/>).</summary>
        static void OnExitToo(object sender, EventArgs e)
        {
            Finish();
        }

        /// <summary>
        /// Moves the exit handler to the end of <c>ProcessExit</c>'s handlers (<see cref="ExitOrder"/>: just before the
        /// exit calls them, else the run-time's thread every 10 ms): <c>ProcessExit</c> calls its handlers in the order
        /// they were added, so a handler the program adds after the first timed lock would run after the summary and
        /// report, its locks in neither. The other of two equal handlers is added, then the one registered removed
        /// (removing the one just added would take the last of two equal delegates: the new one); between the two,
        /// both run, and <see cref="Finish"/> runs once. Never throws.
        /// </summary>
        internal static void MoveExitLast()
        {
            try {
                EventHandler exit = new EventHandler(OnExit), exitAgain = new EventHandler(OnExitToo);
                AppDomain domain = AppDomain.CurrentDomain;
                lock (exitGate) {
                    domain.ProcessExit += exitToo ? exit : exitAgain;
                    domain.ProcessExit -= exitToo ? exitAgain : exit;
                    exitToo = !exitToo;
                }
            } catch (Exception) {
            }
        }

        /// <summary>
        /// An exception no code caught: the process ends without ProcessExit, so the summary and report are
        /// written now (<see cref="Finish"/>: once). The runtime then prints the exception and exits as it
        /// would without LockTime.
        /// </summary>
        static void OnUnhandled(object sender, UnhandledExceptionEventArgs e)
        {
            Finish();
        }

        /// <summary>
        /// The end of the process (the owner's exit or crash handler): writes every queued line, then the summary
        /// to the owner's sink (unless its rows are 0), then the report. Runs once; later calls do nothing, but
        /// for the exit of a process that went on after a SIGTERM (<see cref="Terminating"/> wrote the summary
        /// and report then; a handler of the program's cancelled the signal): its report is written again, with
        /// the final figures, and the summary is not repeated (<see cref="Rewrite"/>).
        /// </summary>
        internal static void Finish()
        {
            try {
                if (writer == null)
                    return;
                int before = Interlocked.CompareExchange(ref finished, Finished, Unfinished);
                if (before == Unfinished)
                    WriteAll();
                else if (before == FinishedAtSignal && Interlocked.CompareExchange(ref finished, Finished, FinishedAtSignal) == FinishedAtSignal)
                    Rewrite();
            } catch (Exception) {
            }
        }

        /// <summary>
        /// SIGTERM, or SIGINT (<see cref="Interrupted"/>), (<see cref="Signals"/>): what <see cref="Finish"/> writes, now, while the program's threads go on;
        /// the process ends when this returns unless a handler of the program's cancels the signal. Written on a
        /// thread of its own (<see cref="AtSignal"/>), which this one waits for: the signal's thread then runs the
        /// program's own handlers, whose locks are the program's (a thread that wrote for the run-time stays its own).
        /// A second SIGTERM after one that a handler of the program's cancelled writes the report again, with the
        /// figures of now; one while the first's summary is being written (<c>timeout</c> sends one to the program
        /// and one to its process group; .NET runs their handlers at once) waits for it, at most
        /// <see cref="SignalWaitMs"/>: its return would end the process in the middle of it.
        /// </summary>
        internal static void Terminating()
        {
            try {
                if (writer == null || !Monitor.TryEnter(signalGate, SignalWaitMs))
                    return;
                try {
                    Thread thread = new Thread(new ThreadStart(AtSignal));
                    thread.IsBackground = true;
                    thread.Name = "LockTime signal";
                    StartUnflowed(thread);
                    thread.Join(SignalWaitMs);
                } finally {
                    Monitor.Exit(signalGate);
                }
            } catch (Exception) {
            }
        }

        /// <summary>
        /// SIGINT that no handler of the program's cancelled (<see cref="Signals.WatchInterrupt"/>): what
        /// <see cref="Terminating"/> writes, by the copy that owns the registry (its entry 15), whichever copy registered
        /// the handler; nothing when no copy started (no timed lock taken yet). Never throws.
        /// </summary>
        internal static void Interrupted()
        {
            try {
                object[] r = registry ?? AppDomain.CurrentDomain.GetData(Registry.Slot) as object[];
                Action atSignal = r != null && Registry.IsCurrent(r) ? Registry.AtSignal(r) : null;
                if (atSignal != null)
                    atSignal();
            } catch (Exception) {
            }
        }

        /// <summary>The writing of a SIGTERM (<see cref="Terminating"/>): all of it the first time, the report again after a cancelled one.</summary>
        static void AtSignal()
        {
            try {
                int before = Interlocked.CompareExchange(ref finished, FinishedAtSignal, Unfinished);
                if (before == Unfinished)
                    WriteAll();
                else if (before == FinishedAtSignal)
                    Rewrite();
            } catch (Exception) {
            }
        }

        /// <summary>The report written again with the figures of now, after the lines queued meanwhile (the summary is not repeated).</summary>
        static void Rewrite()
        {
            BecomeBusy();
            AwaitLines(writer.Queued());
            WriteReport(Gather(), true);
        }

        /// <summary>
        /// The summary (unless its rows are 0) queued after the lines, written by the writer thread while this one
        /// waits for it (<see cref="AwaitLines"/>, bounded), then the report, with the lines not written. The sites are
        /// gathered only for a summary or a report: an exit with neither does not compile the gathering (about 4,500
        /// bytes of IL, several milliseconds of JIT in a JIT-compiled process).
        /// </summary>
        static void WriteAll()
        {
            Collector c = BecomeBusy();
            CheckNames(true);
            RollUps(true);
            int rows = c != null ? c.Settings.SummaryRows : 0;
            bool report = c != null && c.Settings.ReportPath != null;
            List<SiteTotals> sites = rows > 0 || report ? Gather() : null;
            AwaitLines(rows > 0 ? writer.Queue(c.Settings.Output, Summary.Format(sites, rows, writer.Dropped(), order)) : writer.Queued());
            if (report)
                WriteReport(sites, true);
        }

        /// <summary>
        /// Waits for the writer thread to write the lines queued before <paramref name="end"/>, giving up when it takes
        /// none for <see cref="WriterStallMs"/> or after <see cref="WriterWaitMs"/>; once it gave up, a later exit
        /// (the <c>ProcessExit</c> after a cancelled SIGTERM) does not wait again: about 1 s in all for a stuck sink.
        /// Starts the writer thread when it was not (<see cref="StartWriter"/>), after the lines are queued: it writes
        /// them at once, not after a sleep; nothing to write starts nothing.
        /// </summary>
        static void AwaitLines(long end)
        {
            if (writer.Written() >= end)
                return;
            StartWriter();
            if (!writerStuck && !writer.AwaitWritten(end, WriterStallMs, WriterWaitMs))
                writerStuck = true;
        }

        /// <summary>
        /// Makes the calling thread the run-time's own in every copy (<see cref="Registry.Markers"/>; this one's
        /// at least): the locks its writing takes are not recorded. Returns this copy's state.
        /// </summary>
        static Collector BecomeBusy()
        {
            Collector c = Current;
            if (c != null)
                c.MarkBusy();
            List<Action> markers = Registry.Markers(registry);
            if (markers == null)
                return c;
            Action[] all;
            lock (markers)
                all = markers.ToArray();
            for (int i = 0; i < all.Length; i++)
                all[i]();
            return c;
        }

        /// <summary>Every copy's sites that recorded anything, in the summary's order.</summary>
        internal static List<SiteTotals> Gather()
        {
            List<SiteTotals> sites = new List<SiteTotals>();
            Func<object[]>[] sources = Registry.Sources(registry);
            for (int i = 0; i < sources.Length; i++) {
                try {
                    object[] rows = sources[i]();
                    for (int k = 0; k < rows.Length; k++) {
                        SiteTotals t = SiteTotals.FromRow(rows[k]);
                        if (t != null)
                            sites.Add(t);
                    }
                } catch (Exception) {
                }
            }
            SiteTotals.Blame(sites);
            sites.Sort(new Comparison<SiteTotals>(SiteTotals.Compare));
            return sites;
        }

        /// <summary>
        /// Writes the report when a path is set; the first failure warns, naming the path. One report at a
        /// time: the writer thread's (<paramref name="wait"/> false) is left out while the exit writes one, as
        /// it never waits for a lock the exit holds (<see cref="LineWriter.TryDrain"/>).
        /// </summary>
        static void WriteReport(List<SiteTotals> sites, bool wait)
        {
            Collector c = Current;
            if (c == null || c.Settings.ReportPath == null)
                return;
            bool taken = false;
            try {
                if (wait)
                    Monitor.Enter(writer, ref taken);
                else
                    Monitor.TryEnter(writer, ref taken);
                if (!taken)
                    return;
                if (pid == 0)
                    pid = Platform.ProcessId();
                string path = c.Settings.ReportFile(pid);
                ProcessInfo p = new ProcessInfo();
                p.Name = Platform.ProcessName();
                p.Pid = pid;
                p.StartUtc = startUtc;
                p.DurationNs = c.Ns(Clock.Ticks() - startTicks);
                p.UnwrittenLines = writer.Unwritten();
                string error = Report.Write(path, Report.Format(p, sites, writer.Dropped(), order, timeline, startTicks, c.NsPerTick), pid);
                if (error != null && !reportWarned) {
                    reportWarned = true;
                    Warn("LockTime: warning: " + c.Settings.ReportSetting() + ": cannot write " + path +
                         " (" + error + "); using no report");
                    if (wait)
                        AwaitLines(writer.Queued()); /* the exit's: the process ends when it returns */
                }
            } finally {
                if (taken)
                    Monitor.Exit(writer);
            }
        }
    }
}
