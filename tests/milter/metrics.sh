#!/bin/sh
# MetricsSocket: the daemon serves /metrics on a free loopback port while
# milter-load sends mail over 4 milter connections (unix socket, no MTA).
#   idle     200 with the OpenMetrics content type and "# EOF", 404 for
#            another path, 405 for POST; the text/plain variant passes
#            `promtool check metrics`, the default one the OpenMetrics
#            parser of python3-prometheus-client (openmetrics-check.py)
#   load     scrapes made while mail flows, each checked the same way,
#            and at least one of them in the middle of the run
#   counts   after the run: the messages counted equal the messages sent,
#            and per kind, action and result the decision lines of the
#            log; both histograms count every message; a rule's findings
#            equal the decision lines naming it; the state's sizes shown
#   reload   SIGUSR1 raises slop_rules_generation to 2
#   slow     issue 32: 16 slowloris clients (slow-http.py) each sending a
#            header line every 4 s, reopened when closed: a scrape every
#            5 s is answered, 6 of 6, and the server closes the
#            tricklers; then 97 silent clients: scrapes still answered
#   start    a taken port or a UNIX socket as MetricsSocket: the daemon
#            refuses to start, with its exit status and one line
#   docs     docs/prometheus/*.yml pass `promtool check config` and
#            `promtool check rules`
# Usage: metrics.sh SLOP_MILTER MILTER_LOAD RULES_DIR
# Exits 77 (skipped) when a tool is missing, unless SLOP_REQUIRE_INTEGRATION
# is set. Loopback only; the daemon is stopped by its pid; waits bounded.
set -u
bin=$1 load=$2
rules=$(cd "$3" && pwd) || exit 64
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
msgs=$here/msgs
passed=0 failed=0
test_name=metrics
daemon_pid="" scraper_pid="" load_pid="" slow_pid=""
# shellcheck source-path=SCRIPTDIR source=testlib.sh
. "$here/testlib.sh"

N=4000 # messages of the load phase; long enough to scrape in its middle
python=/usr/bin/python3
[ -x "$python" ] || python=python3

if [ ! -x "$bin" ] || [ ! -x "$load" ]; then
    skip "slop-milter or milter-load not built"
fi
for tool in curl promtool timeout ss; do
    command -v "$tool" >/dev/null 2>&1 ||
        skip "$tool not found (scripts/install-deps --test installs it)"
done
"$python" -c 'import prometheus_client.openmetrics.parser' 2>/dev/null ||
    skip "no OpenMetrics parser (Debian package python3-prometheus-client)"

work=$(mktemp -d "${TMPDIR:-/tmp}/slop-metrics.XXXXXX") || exit 1
sock=$work/milter.sock

cleanup() {
    stop_pid "$slow_pid"
    stop_pid "$scraper_pid"
    stop_pid "$load_pid"
    stop_daemon
    remove_workdir "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

port=$(free_port 29300) || skip "no free loopback port"
url=http://127.0.0.1:$port/metrics

write_conf() { # FILE MILTER_SOCKET METRICS_SOCKET
    {
        echo "Socket unix:$2"
        echo "SocketMode 0600"
        echo "Syslog no"
        echo "RulesDir $rules"
        echo "StateDir $work/state"
        echo "ReplyThreshold 0"
        echo "MetricsSocket $3"
    } >"$1"
}

# scrape FILE [ACCEPT]: the body in FILE, the headers in FILE.h; 0 on 200.
scrape() {
    curl -sS -m 20 -D "$1.h" -o "$1" ${2:+-H "Accept: $2"} "$url" 2>>"$work/curl.err" &&
        head -n 1 "$1.h" | grep -q ' 200'
}

promtool_ok() { # FILE...
    for f in "$@"; do
        if ! promtool check metrics <"$f" >"$f.promtool" 2>&1; then
            sed "s|^|  $f: |" "$f.promtool"
            return 1
        fi
    done
}

om_ok() { # FILE...
    "$python" "$here/openmetrics-check.py" "$@"
}

value() { # FILE SERIES: its value, or "" when the line is absent
    awk -v s="$2" 'index($0, s " ") == 1 { print $2; exit }' "$1"
}

total() { # FILE NAME: the sum of every sample of NAME (any labels)
    awk -v n="$1" 'BEGIN { t = 0 }
        index($0, n "{") == 1 || index($0, n " ") == 1 { t += $NF } END { print t }' "$2"
}

echo "== idle"
write_conf "$work/main.conf" "$sock" "inet:$port@127.0.0.1"
"$bin" -f -c "$work/main.conf" >"$work/daemon.log" 2>&1 &
daemon_pid=$!
n=0
until scrape "$work/idle.om"; do
    n=$((n + 1))
    if [ "$n" -ge 100 ] || ! kill -0 "$daemon_pid" 2>/dev/null; then
        break
    fi
    sleep 0.1
done
check "idle: /metrics answers 200" scrape "$work/idle.om"
check "idle: OpenMetrics content type" \
    grep -qi '^Content-Type: application/openmetrics-text; version=1.0.0; charset=utf-8' \
    "$work/idle.om.h"
check "idle: ends with # EOF" [ "$(tail -n 1 "$work/idle.om")" = "# EOF" ]
check "idle: OpenMetrics parser accepts it" om_ok "$work/idle.om"
check "idle: text/plain gets the Prometheus format" scrape "$work/idle.txt" "text/plain"
check "idle: Prometheus content type" \
    grep -qi '^Content-Type: text/plain; version=0.0.4' "$work/idle.txt.h"
check "idle: promtool check metrics" promtool_ok "$work/idle.txt"
check "idle: the OpenMetrics text is not Prometheus text (promtool sees it)" \
    sh -c '! promtool check metrics <"$1" >/dev/null 2>&1' sh "$work/idle.om"
check "idle: 404 for another path" \
    [ "$(curl -s -m 20 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/")" = 404 ]
check "idle: 405 for POST" \
    [ "$(curl -s -m 20 -o /dev/null -w '%{http_code}' -X POST -d x "$url")" = 405 ]
check "idle: no message counted yet" [ "$(total slop_messages_total "$work/idle.om")" = 0 ]
check "idle: rule set generation 1" [ "$(value "$work/idle.om" slop_rules_generation)" = 1 ]

echo "== load: $N messages over 4 milter connections, scraped meanwhile"
# The scraper runs until the load is over, alternating the two formats;
# it starts first so that the run cannot end before the first scrape.
(
    i=0
    while [ ! -e "$work/load.done" ] && [ "$i" -lt 3000 ]; do
        if [ $((i % 2)) -eq 0 ]; then
            scrape "$work/during.$i.om" || echo "scrape $i failed" >>"$work/scrape.err"
        else
            scrape "$work/during.$i.txt" "text/plain" ||
                echo "scrape $i failed" >>"$work/scrape.err"
        fi
        i=$((i + 1))
    done
) &
scraper_pid=$!
n=0
while [ ! -e "$work/during.0.om" ] && [ "$n" -lt 100 ]; do
    sleep 0.1
    n=$((n + 1))
done
timeout 300 "$load" -n "$N" -c 4 -t 240 "unix:$sock" \
    "$msgs/genuine-patch.eml" "$msgs/lock-swap.eml" "$msgs/slop-patch.eml" \
    "$msgs/slop-report.eml" "$msgs/short-report.eml" >"$work/load.out" 2>"$work/load.err"
rc=$?
touch "$work/load.done"
wait "$scraper_pid"
scraper_pid=""
out=$(cat "$work/load.out")
echo "  milter-load: $out (exit $rc)"
sent=$(printf '%s\n' "$out" | tr ' ' '\n' | sed -n 's/^messages=//p')
check "load: milter-load exits 0" [ "$rc" -eq 0 ]
check "load: $N messages answered" [ "$sent" = "$N" ]
check "load: every scrape answered 200" [ ! -s "$work/scrape.err" ]
set -- "$work"/during.*.om
n_om=$#
check "load: OpenMetrics scrapes during the run parse ($n_om)" om_ok "$@"
set -- "$work"/during.*.txt
n_txt=$#
check "load: promtool check metrics on scrapes during the run ($n_txt)" promtool_ok "$@"
mid=0
for f in "$work"/during.*.om "$work"/during.*.txt; do
    t=$(total slop_messages_total "$f")
    if [ "$t" -gt 0 ] && [ "$t" -lt "$N" ]; then
        mid=$((mid + 1))
    fi
done
check "load: scrapes made while mail flowed ($mid with 0 < messages < $N)" [ "$mid" -gt 0 ]

echo "== counts"
scrape "$work/after.om"
check "counts: messages counted = messages sent" \
    [ "$(total slop_messages_total "$work/after.om")" = "$N" ]
# The decision lines: kind=K ... action=A ... result=R, as metric lines.
sed -n 's/.* kind=\([a-z]*\) .* action=\([a-z]*\) .*result=\([a-z]*\) .*/\1 \2 \3/p' \
    "$work/daemon.log" | sort | uniq -c |
    awk '{ printf "slop_messages_total{kind=\"%s\",action=\"%s\",result=\"%s\",mode=\"enforce\"} %s\n", $2, $3, $4, $1 }' \
    >"$work/expected"
check "counts: decision lines = messages sent" [ "$(total slop_messages_total "$work/expected")" = "$N" ]
grep '^slop_messages_total{' "$work/after.om" | sort >"$work/counted"
sort "$work/expected" >"$work/expected.sorted"
check "counts: per kind, action and result as the decision lines" \
    cmp -s "$work/counted" "$work/expected.sorted"
diff "$work/expected.sorted" "$work/counted" | sed 's/^/  /'
check "counts: at least two kinds among them" \
    [ "$(grep -c '^slop_messages_total{kind="patch"\|^slop_messages_total{kind="report"' "$work/counted")" -ge 2 ]
check "counts: end-of-message histogram counts every message" \
    [ "$(value "$work/after.om" slop_eom_seconds_count)" = "$N" ]
check "counts: scan histogram counts every message" \
    [ "$(value "$work/after.om" slop_scan_seconds_count)" = "$N" ]
lock=$(grep -c 'tests=[^ ]*LOCK_UNLOCK_TO_DESTROY' "$work/daemon.log")
check "counts: LOCK_UNLOCK_TO_DESTROY findings = decision lines naming it ($lock)" \
    [ "$(value "$work/after.om" 'slop_findings_total{rule="LOCK_UNLOCK_TO_DESTROY"}')" = "$lock" ]
check "counts: no errors" [ "$(total slop_errors_total "$work/after.om")" = 0 ]
check "counts: state generation shown" [ "$(value "$work/after.om" slop_state_generation)" -gt 0 ]
check "counts: seen fingerprints in the state" \
    [ "$(value "$work/after.om" 'slop_state_entries{db="seen_fp"}')" -gt 0 ]

echo "== reload"
kill -USR1 "$daemon_pid"
n=0
while ! grep -q 'reloaded' "$work/daemon.log" && [ "$n" -lt 100 ]; do
    sleep 0.1
    n=$((n + 1))
done
scrape "$work/reload.om"
check "reload: rule set generation 2" [ "$(value "$work/reload.om" slop_rules_generation)" = 2 ]
check "reload: counts kept" [ "$(total slop_messages_total "$work/reload.om")" = "$N" ]

# slow_clients MODE ARGS...: start slow-http.py, wait (bounded) until its
# connections are open.
slow_clients() {
    rm -f "$work/slow.ready"
    "$python" "$here/slow-http.py" "$@" "$work/slow.ready" >"$work/slow.out" 2>&1 &
    slow_pid=$!
    n=0
    while [ ! -s "$work/slow.ready" ] && [ "$n" -lt 200 ]; do
        sleep 0.1
        n=$((n + 1))
    done
}

# quick_scrapes COUNT PAUSE TAG: COUNT scrapes PAUSE s apart, each given
# 8 s (the unbounded server kept them waiting for good); prints how many
# were answered 200.
quick_scrapes() {
    _ok=0 _i=0
    while [ "$_i" -lt "$1" ]; do
        _i=$((_i + 1))
        sleep "$2"
        code=$(curl -s -m 8 -o "$work/$3.$_i.om" -w '%{http_code}' "$url" 2>/dev/null)
        [ "$code" = 200 ] && _ok=$((_ok + 1))
    done
    echo "$_ok"
}

echo "== slow: 16 slowloris clients, a header line every 4 s; a scrape every 5 s"
slow_clients slowloris "$port" 16 4 120
check "slow: slowloris clients connected" [ -s "$work/slow.ready" ]
ok=$(quick_scrapes 6 5 slowloris)
stop_pid "$slow_pid"
slow_pid=""
closed=$(sed -n 's/^closed-by-server //p' "$work/slow.out")
check "slow: scrapes answered under slowloris: $ok of 6" [ "$ok" -eq 6 ]
check "slow: the server closed trickling clients (${closed:-none})" [ "${closed:-0}" -gt 0 ]
check "slow: the last scrape parses" om_ok "$work/slowloris.6.om"

echo "== slow: 97 silent clients"
slow_clients silent "$port" 97 120
check "slow: silent clients connected" [ -s "$work/slow.ready" ]
ok=$(quick_scrapes 3 1 silent)
stop_pid "$slow_pid"
slow_pid=""
check "slow: scrapes answered among 97 silent clients: $ok of 3" [ "$ok" -eq 3 ]

echo "== start: MetricsSocket that cannot be served"
write_conf "$work/taken.conf" "$work/taken.sock" "inet:$port@127.0.0.1"
timeout 60 "$bin" -f -c "$work/taken.conf" >"$work/taken.log" 2>&1
rc=$?
check "start: port taken: exit 69 (EX_UNAVAILABLE)" [ "$rc" -eq 69 ]
check "start: port taken: says so" grep -q "cannot listen on MetricsSocket" "$work/taken.log"
write_conf "$work/unix.conf" "$work/unix.sock" "unix:$work/metrics.sock"
timeout 60 "$bin" -f -c "$work/unix.conf" >"$work/unix.log" 2>&1
rc=$?
check "start: UNIX socket: exit 78 (EX_CONFIG)" [ "$rc" -eq 78 ]
check "start: UNIX socket: says so" grep -q "MetricsSocket: .* is not a TCP socket" "$work/unix.log"
check "start: running daemon unharmed" scrape "$work/last.om"
stop_daemon

echo "== docs: the example scrape configuration and alerts"
check "docs: promtool check config" \
    promtool check config "$src/docs/prometheus/prometheus.yml"
check "docs: promtool check rules" \
    promtool check rules "$src/docs/prometheus/slop-milter-alerts.yml"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
