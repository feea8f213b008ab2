#!/bin/sh
# The memory budget (MaxMemory, OnBusy) end to end: 100 messages of ~10 MB
# reach the daemon at once through two private Postfix instances on
# loopback, and none is lost.
#
#   python smtplib --> front Postfix (no milter) --smtp, up to 100 at once-->
#   back Postfix (milter: the daemon under test) --> pipe, one file a message
#
# The front holds the 100 messages (defer_transports) until all are queued,
# then releases them together. The daemon, with MaxMemory 512M, takes what
# fits its budget and answers the rest 451 at MAIL (OnBusy tempfail, from
# the SIZE= the front announces); the front defers those and retries them
# on `postqueue -f` (bounded loop) until every message has arrived.
#
# Checks: the daemon's peak RSS (VmHWM) stays under MaxMemory plus
# OVERHEAD_MB (rules, state map, libraries, thread stacks, allocator slack:
# 16 MB after the burst and a 427 MB peak measured, 128 MB allowed); some messages were tempfailed
# (deferred by the front, "cause=busy" and the rate-limited "memory budget
# full" line in the daemon's log); every message delivered exactly once.
# No timing is asserted. Prints "membudget figures:" with the peak RSS,
# the RSS after the burst, the number tempfailed and delivered.
#
# Measuring: SLOP_MEM_MAXMEMORY (default 512M; e.g. 1T for no budget) and
# SLOP_MEM_TRIM (TrimMemory, default yes) change the daemon's settings;
# with a MaxMemory other than 512M only delivery is checked.
#
# Usage: membudget.sh SLOP_MILTER RULES_DIR
# Needs root and Postfix (exit 77 otherwise unless SLOP_REQUIRE_INTEGRATION
# is set). Every process started here is stopped by its pid.
set -u
bin=$1 rules=$(cd "$2" && pwd) || exit 64
here=$(cd "$(dirname "$0")" && pwd)
harness=$here/postfix-harness.sh
passed=0 failed=0
test_name=membudget
n_msgs=${SLOP_MEM_MESSAGES:-100}
msg_bytes=10000000
maxmemory=${SLOP_MEM_MAXMEMORY:-512M}
trim=${SLOP_MEM_TRIM:-yes}
OVERHEAD_MB=128
# shellcheck source-path=SCRIPTDIR source=testlib.sh
. "$here/testlib.sh"

[ "$(id -u)" -eq 0 ] || skip "needs root (Postfix binds, changes users and owns its queue)"
[ -x /usr/sbin/postfix ] || skip "postfix not found (Debian package postfix)"
command -v python3 >/dev/null 2>&1 || skip "python3 not found"

root=$(mktemp -d "${TMPDIR:-/tmp}/slop-membudget.XXXXXX") || exit 1
chmod 755 "$root"
front=$root/front back=$root/back d=$root/daemon
mkdir -p "$front" "$back" "$d"
chmod 755 "$d"
daemon_pid=""
sock=$root/milter.sock

cleanup() {
    sh "$harness" stop "$front" >/dev/null 2>&1
    sh "$harness" stop "$back" >/dev/null 2>&1
    stop_daemon
    remove_workdir "$root" "${SLOP_KEEP:-}"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

hf() {
    c=$1
    shift
    sh "$harness" "$c" "$front" "$@"
}
hb() {
    c=$1
    shift
    sh "$harness" "$c" "$back" "$@"
}

pf=$(free_port 26025) || skip "no free port"
hf init "$pf" "$root/none.sock" || exit 1
pb=$(free_port $((pf + 1))) || skip "no free port"
hb init "$pb" "$sock" tempfail || exit 1
# Both: room for the messages; the back waits for slow scans on a busy
# machine rather than applying milter_default_action.
for r in "$front" "$back"; do
    sh "$harness" set "$r" message_size_limit=50000000 default_process_limit=250 \
        milter_content_timeout=600s smtpd_timeout=600s smtp_data_done_timeout=1200s
done
# The front relays everything to the back, up to 100 sessions at once from
# the first delivery, and holds mail (defer_transports) until released.
hf set smtpd_milters= non_smtpd_milters= mydestination= "relayhost=[127.0.0.1]:$pb" \
    initial_destination_concurrency=100 default_destination_concurrency_limit=100 \
    smtp_destination_concurrency_limit=100 defer_transports=smtp

cat >"$d/slop-milter.conf" <<EOF
Socket unix:$sock
SocketMode 0666
Syslog no
RulesDir $rules
StateDir $d/state
ReplyEnable no
ScanTimeout 600000
MaxMemory $maxmemory
TrimMemory $trim
EOF
log=$d/daemon.log
"$bin" -f -c "$d/slop-milter.conf" >"$log" 2>&1 &
daemon_pid=$!
poll_log() { grep -q ' starting: ' "$log" 2>/dev/null || ! kill -0 "$daemon_pid" 2>/dev/null; }
n=0
while ! poll_log && [ "$n" -lt 300 ]; do
    sleep 0.1
    n=$((n + 1))
done
sleep 0.3
check "daemon starts" kill -0 "$daemon_pid"
# start_on NAME ROOT PORT_VAR: start an instance; when another test took its
# port between free_port and the bind, move it to a new one (5 tries).
start_on() {
    _try=0
    while ! sh "$harness" start "$2" >/dev/null 2>&1; do
        _try=$((_try + 1))
        [ "$_try" -lt 5 ] || return 1
        _p=$(free_port $(($(cat "$2/port") + 11))) || return 1
        sed -i "s/^127\.0\.0\.1:[0-9]* inet/127.0.0.1:$_p inet/" "$2/etc/master.cf"
        echo "$_p" >"$2/port"
    done
}
check "back Postfix starts" start_on back "$back"
pb=$(cat "$back/port")
hf set "relayhost=[127.0.0.1]:$pb"
check "front Postfix starts" start_on front "$front"
[ "$failed" -eq 0 ] || { echo "$passed passed, $failed failed"; exit 1; }

status_kb() { # FIELD: the daemon's VmHWM or VmRSS in kB
    awk -v f="$1:" '$1 == f { print $2 }' "/proc/$daemon_pid/status" 2>/dev/null
}
rss_start=$(status_kb VmRSS)

# ---- queue the messages at the front ------------------------------------
check "front accepts $n_msgs messages" python3 - "$pf" "$n_msgs" "$msg_bytes" <<'EOF'
import random, smtplib, sys
from concurrent.futures import ThreadPoolExecutor

port, count, size = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
words = "the quick brown fox jumps over a lazy patch review kernel memory".split()
rng = random.Random(13)
lines, n = [], 0
while n < size:
    line = " ".join(rng.choice(words) for _ in range(12))
    lines.append(line)
    n += len(line) + 2
body = "\r\n".join(lines) + "\r\n"

def send(i):
    msg = ("From: dana@example.test\r\nTo: big@slop.test\r\nSubject: big %d\r\n"
           "Message-ID: <big-%d@example.test>\r\n\r\n" % (i, i)) + body
    with smtplib.SMTP("127.0.0.1", port, timeout=600) as s:
        s.sendmail("dana@example.test", ["big@slop.test"], msg)

with ThreadPoolExecutor(4) as pool:
    list(pool.map(send, range(count)))
EOF
check "front holds them all" hf settle 120

# ---- release them together; retry the deferred ones ---------------------
hf set defer_transports=
hf flush
# Bounded: up to 120 rounds of 10 s. Each round lets the front's deferred
# mail go again; the back's queue drains to the pipe.
round=0
while [ "$round" -lt 120 ]; do
    [ "$(hb count big@slop.test)" -ge "$n_msgs" ] && [ "$(hf queue)" -eq 0 ] && break
    sleep 10
    hf flush >/dev/null 2>&1
    round=$((round + 1))
done
hb settle 120
hwm=$(status_kb VmHWM)
# RSS once the burst is over: every message done, nothing buffered.
sleep 2
rss_after=$(status_kb VmRSS)

delivered=$(hb count big@slop.test)
busy=$(grep -c 'cause=busy' "$log")
deferred=$(grep 'status=deferred' "$front/postfix.log" | grep -c 'slop-milter (busy)')
# Distinct messages the daemon turned away at least once, by front queue id.
busy_msgs=$(grep 'slop-milter (busy)' "$front/postfix.log" |
    sed -n 's/.*: \([0-9A-F]\{6,\}\): to=.*/\1/p' | sort -u | wc -l)
ids=$(find "$(hb mailbox big@slop.test)" -name '*.eml' -exec grep -m1 -h '^Message-ID: <big-' {} + |
    sort -u | wc -l)
echo "membudget figures: MaxMemory=$maxmemory TrimMemory=$trim messages=$n_msgs" \
    "rss_start_kb=$rss_start peak_rss_kb=$hwm rss_after_kb=$rss_after" \
    "tempfails_at_daemon=$busy deferrals_at_front=$deferred messages_deferred=$busy_msgs" \
    "delivered=$delivered" \
    "distinct=$ids rounds=$round"

check "every message delivered ($delivered of $n_msgs)" [ "$delivered" -eq "$n_msgs" ]
check "each exactly once ($ids distinct)" [ "$ids" -eq "$n_msgs" ]
check "front queue empty" [ "$(hf queue)" -eq 0 ]
check "daemon still running" kill -0 "$daemon_pid"
if [ "$maxmemory" = 512M ]; then
    bound=$(((512 + OVERHEAD_MB) * 1024))
    check "peak RSS $hwm kB under MaxMemory + ${OVERHEAD_MB}M ($bound kB)" \
        [ "${hwm:-999999999}" -le "$bound" ]
    check "some messages tempfailed by the daemon ($busy)" [ "$busy" -gt 0 ]
    check "the front deferred them ($deferred)" [ "$deferred" -gt 0 ]
    # At most one line a minute: fewer lines than refusals unless only one.
    full=$(grep -c 'memory budget full' "$log")
    rate_limited() { [ "$full" -ge 1 ] && { [ "$full" -lt "$busy" ] || [ "$busy" -eq 1 ]; }; }
    check "budget full logged, rate-limited ($full lines)" rate_limited
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
