// Json.cs - the JSON text the report is made of: strings escaped, numbers in the invariant culture.
using System.Globalization;
using System.Runtime.CompilerServices;
using System.Text;

namespace LockTime.Runtime
{
    /// <summary>Appends JSON values (RFC 8259) to a StringBuilder.</summary>
    [CompilerGenerated]
    internal static class Json
    {
        /// <summary>
        /// Appends <paramref name="s"/> as a JSON string (null as <c>null</c>): quote, backslash and
        /// every control character escaped, U+2028/U+2029 and unpaired surrogates as <c>\uXXXX</c>
        /// (so the file is valid UTF-8 whatever a method name holds), every other character as is.
        /// </summary>
        internal static void String(StringBuilder sb, string s)
        {
            if (s == null) {
                sb.Append("null");
                return;
            }
            sb.Append('"');
            for (int i = 0; i < s.Length; i++) {
                char c = s[i];
                switch (c) {
                case '"': sb.Append("\\\""); continue;
                case '\\': sb.Append("\\\\"); continue;
                case '\n': sb.Append("\\n"); continue;
                case '\r': sb.Append("\\r"); continue;
                case '\t': sb.Append("\\t"); continue;
                case '\b': sb.Append("\\b"); continue;
                case '\f': sb.Append("\\f"); continue;
                }
                bool paired = char.IsHighSurrogate(c) && i + 1 < s.Length && char.IsLowSurrogate(s[i + 1]);
                if (paired) {
                    sb.Append(c).Append(s[i + 1]);
                    i++;
                } else if (c < ' ' || c == '\u2028' || c == '\u2029' || char.IsSurrogate(c)) {
                    sb.Append("\\u").Append(((int)c).ToString("x4", CultureInfo.InvariantCulture));
                } else {
                    sb.Append(c);
                }
            }
            sb.Append('"');
        }

        /// <summary>Appends a whole number.</summary>
        internal static void Integer(StringBuilder sb, long n)
        {
            sb.Append(n.ToString(CultureInfo.InvariantCulture));
        }

        /// <summary>Appends nanoseconds as milliseconds, up to six decimals (exact to the nanosecond).</summary>
        internal static void Ms(StringBuilder sb, long ns)
        {
            sb.Append((ns / 1e6).ToString("0.######", CultureInfo.InvariantCulture));
        }

        /// <summary>Appends <c>"name": </c>.</summary>
        internal static void Key(StringBuilder sb, string name)
        {
            String(sb, name);
            sb.Append(": ");
        }
    }
}
