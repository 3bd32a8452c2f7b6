// Ledger.cs - the library's lock: Post taken 100 times by the app; Under runs the app's code inside it.
namespace Woven.Lib
{
    public sealed class Ledger
    {
        private readonly object gate = new object();
        private long total;

        /// <summary>Set by the library's module initializer (Init.cs).</summary>
        public static string Opened;

        public void Post(long amount)
        {
            lock (gate)
                total += amount;
        }

        /// <summary>Runs <paramref name="action"/> while holding the ledger's lock.</summary>
        public void Under(System.Action action)
        {
            lock (gate)
                action();
        }

        public long Total
        {
            get { lock (gate) return total; }
        }
    }
}
