#!/usr/bin/env bash
# The Meter "LockTime" watched as a fleet of services is (docs/metrics.md, "A real metrics backend"): a woven
# ASP.NET Core app (tests/prometheus) with the OpenTelemetry SDK and its Prometheus exporter, scraped every
# second by a real Prometheus server (Debian's prometheus, started here on 127.0.0.1 with a generated config,
# stopped after), sent an order and a price read, then 199 orders (8 at a time, each holding the order lock
# 2 ms) and 49 price reads:
#   - Prometheus has each site's acquisitions and hold-histogram count as the app's report (LOCKTIME_REPORT,
#     written at the SIGTERM that ends it) counts them (200 orders, 50 prices, read one at a time);
#   - PromQL's histogram_quantile(0.99, ...) by code_line_number gives the order site's wait and hold p99 inside
#     the advised bucket that holds the report's p99 (the same acquisitions, the run-time's own histogram);
#   - the wait rate by code_line_number: the order site waited, the price site never.
source "$(dirname "$0")/../lib.sh"
LT=${LOCKTIME:-$LT_BUILD/san/locktime}
export MSBUILDDISABLENODEREUSE=1 DOTNET_CLI_USE_MSBUILD_SERVER=0
unset LOCKTIME_DISABLED LOCKTIME_THRESHOLD_MS LOCKTIME_OUTPUT LOCKTIME_REPORT LOCKTIME_REPORT_INTERVAL_S LOCKTIME_LOCK_ORDER LOCKTIME_METRICS

if ! command -v prometheus >/dev/null; then
	skip "prometheus server" "Debian's prometheus is not installed (make deps installs it as root)"
	done_testing
	exit 0
fi
if ! dotnet --list-runtimes | grep -q '^Microsoft.AspNetCore.App '; then
	skip "prometheus server" "this .NET has no ASP.NET Core runtime (Microsoft.AspNetCore.App)"
	done_testing
	exit 0
fi

cp -r "$LT_ROOT/tests/prometheus" "$LT_TMP/src"
check "the shop builds (OpenTelemetry and its Prometheus exporter from the configured NuGet sources)" \
	timeout "$LT_DOTNET_TIMEOUT" dotnet build "$LT_TMP/src/Shop.csproj" -c Release -nologo -v q -nodeReuse:false \
	-p:UseSharedCompilation=false -o "$LT_TMP/shop" || exit 1
check "weave the shop" "$LT" weave -q "$LT_TMP/shop/Shop.dll" || exit 1
line_of() { # TEXT: the line of Program.cs that holds TEXT
	grep -nF -- "$1" "$LT_TMP/src/Program.cs" | head -n 1 | cut -d: -f1
}
order_line=$(line_of '// orders wait here')
price_line=$(line_of '// no one waits here')

free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
app_port=$(free_port)
prom_port=$(free_port)
cat >"$LT_TMP/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
scrape_configs:
  - job_name: shop
    static_configs:
      - targets: ['127.0.0.1:$app_port']
EOF
(cd "$LT_TMP" && ASPNETCORE_URLS="http://127.0.0.1:$app_port" LOCKTIME_REPORT="$LT_TMP/shop.json" exec dotnet "$LT_TMP/shop/Shop.dll" \
	>"$LT_TMP/shop.out" 2>"$LT_TMP/shop.err") &
app_pid=$!
prometheus --config.file="$LT_TMP/prometheus.yml" --storage.tsdb.path="$LT_TMP/tsdb" \
	--web.listen-address="127.0.0.1:$prom_port" >"$LT_TMP/prometheus.log" 2>&1 &
prom_pid=$!
trap 'kill "$app_pid" "$prom_pid" 2>/dev/null; rm -rf "$LT_TMP"' EXIT

# answers URL: URL answers (retried for 30 s while the server starts)
answers() {
	python3 - "$1" <<'PY'
import sys, time, urllib.request
for _ in range(300):
    try:
        urllib.request.urlopen(sys.argv[1], timeout=5).read()
        sys.exit(0)
    except Exception as e:
        last = e
        time.sleep(0.1)
sys.exit("%s: %s" % (sys.argv[1], last))
PY
}
check "the shop serves its metrics" answers "http://127.0.0.1:$app_port/metrics" || exit 1
check "prometheus is ready" answers "http://127.0.0.1:$prom_port/-/ready" || exit 1

send() { # FIRST ORDERS PRICES: ORDERS orders 8 at a time (numbered from FIRST), then PRICES price reads one at a time
	python3 - "http://127.0.0.1:$app_port" "$@" <<'PY'
import sys, concurrent.futures, urllib.request
first, orders, prices = (int(a) for a in sys.argv[2:5])
def get(path):
    return urllib.request.urlopen(sys.argv[1] + path, timeout=60).read().decode()
with concurrent.futures.ThreadPoolExecutor(8) as pool:
    numbers = sorted(int(n) for n in pool.map(get, ["/order"] * orders))
answers = [get("/price") for _ in range(prices)] # one at a time: read 8 at a time, the price lock is contended now and then
assert numbers == list(range(first, first + orders)) and answers == ["0.5"] * prices, (numbers, answers)
PY
}

# query PROMQL: the instant vector, one "code_line_number value" line each
query() {
	python3 - "http://127.0.0.1:$prom_port/api/v1/query" "$1" <<'PY'
import json, sys, urllib.parse, urllib.request
url = sys.argv[1] + "?" + urllib.parse.urlencode({"query": sys.argv[2]})
r = json.load(urllib.request.urlopen(url, timeout=10))
assert r["status"] == "success", r
for s in r["data"]["result"]:
    print(s["metric"].get("code_line_number", "-"), s["value"][1])
PY
}
# scraped ORDERS PRICES: until Prometheus has that many acquisitions of each site, in the counter and in the hold histogram
scraped() {
	local i want
	want=$(printf '%s %s\n%s %s' "$order_line" "$1" "$price_line" "$2" | sort)
	for i in $(seq 1 60); do
		[ "$(query 'sum by (code_line_number) (locktime_acquisitions_total)' | sort)" = "$want" ] &&
			[ "$(query 'sum by (code_line_number) (locktime_hold_duration_seconds_count)' | sort)" = "$want" ] && return 0
		sleep 0.5
	done
	query 'locktime_acquisitions_total'
	query 'locktime_hold_duration_seconds_count'
	return 1
}
# One order and one price first, scraped, so that the rates have a sample before the load.
check "the shop takes an order and a price read" send 1 1 1
check "prometheus scraped them" scraped 1 1
check "the shop takes 199 orders and 49 price reads" send 2 199 49
check "prometheus scraped every acquisition: the counters and the hold histograms' counts" scraped 200 50
q='histogram_quantile(0.99, sum by (le, code_line_number) (locktime_%s_duration_seconds_bucket))'
wait_p99=$(query "$(printf "$q" wait)")
hold_p99=$(query "$(printf "$q" hold)")
rates=$(query 'sum by (code_line_number) (rate(locktime_wait_time_seconds_total[1m]))')

kill -TERM "$app_pid"
wait "$app_pid"
check "the shop's report at SIGTERM" test -s "$LT_TMP/shop.json"
check "PromQL: the p99 of wait and hold by code.line.number, in the advised bucket of the report's p99; the wait rate" \
	python3 - "$LT_TMP/shop.json" "$order_line" "$price_line" "$wait_p99" "$hold_p99" "$rates" <<'PY'
import json, sys
report, order, price = json.load(open(sys.argv[1])), sys.argv[2], sys.argv[3]
def vector(text):
    return {line: float(v) for line, v in (l.split() for l in text.splitlines())}
wait_p99, hold_p99, rates = (vector(t) for t in sys.argv[4:7])
sites = {str(s["line"]): s for s in report["sites"]}
assert sites[order]["acquisitions"] == 200 and sites[price]["acquisitions"] == 50, sites
bounds = [m * 10.0 ** e for e in range(-6, 1) for m in (1, 2, 5)] + [10.0]
def bucket(seconds): # the advised bucket (lower, upper] that holds a duration
    for lower, upper in zip([0.0] + bounds, bounds):
        if seconds <= upper:
            return lower, upper
for name, got in (("wait_ms", wait_p99), ("hold_ms", hold_p99)):
    p99 = sites[order][name]["p99"] / 1000
    lower, upper = bucket(p99)
    print(name, "report p99", p99, "PromQL", got[order], "bucket", (lower, upper))
    assert lower <= got[order] <= upper, (name, p99, got)
assert sites[order]["hold_ms"]["p99"] >= 2 and sites[order]["contended"] > 0, sites[order]
print("wait rates", rates)
assert rates[order] > 0 and rates[price] == 0, rates
PY
kill -TERM "$prom_pid"
wait "$prom_pid"
done_testing
