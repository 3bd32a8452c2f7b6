// Ledger.cs - the library's lock: one site, taken 100 times by the app.
namespace Woven.Lib
{
    public sealed class Ledger
    {
        private readonly object gate = new object();
        private long total;

        public void Post(long amount)
        {
            lock (gate)
                total += amount;
        }

        public long Total
        {
            get { lock (gate) return total; }
        }
    }
}
