#!/bin/sh
# Stalled peers under a task limit (issue 13, item 3).
# Usage: stalled-peers.sh SLOP_MILTER RULES_DIR
#
# The real daemon runs with a task limit like the unit's TasksMax: as root,
# under an unused uid with RLIMIT_NPROC (prlimit, setpriv), MaxConnections
# left at 0 so the daemon derives its cap from the limit. Not as root, it
# runs as we are, with MaxConnections set. Then:
#  1. twice the cap of peers connect and stall mid-packet (stall-peers.py);
#     the ones over the cap that got far enough were answered tempfail by
#     the daemon; an ordinary miltertest session is answered, with tempfail
#     (the cap is full), and the log says the cap was reached;
#  2. the peers close: the daemon's open descriptors return to their count
#     before the peers (bounded poll of /proc/PID/fd): no socket is left
#     behind; the log says the connections fell below the cap again;
#  3. an ordinary session is served and its message scanned;
#  4. a few peers stall and stay: after ReadTimeout the daemon cuts them,
#     logs it, and its descriptors again return to the start count.
# As root with Postfix and swaks, a private Postfix on 127.0.0.1
# (postfix-harness.sh, milter_default_action accept) also sends one mail
# in step 1, which its SMTP client gets 4xx for (not accepted unscanned),
# and again in step 3, which is delivered with X-Slop-Status.
# Waits are bounded and generous; no timing is asserted. Unix socket in a
# private directory; the daemon is stopped by its pid.
set -u
bin=$1 rules=$2
here=$(cd "$(dirname "$0")" && pwd)
passed=0 failed=0
test_name=stalled-peers
daemon_pid="" peers_pid=""
# shellcheck source-path=SCRIPTDIR source=testlib.sh
. "$here/testlib.sh"

command -v miltertest >/dev/null 2>&1 || skip "miltertest not found (Debian package miltertest)"
command -v python3 >/dev/null 2>&1 || skip "python3 not found"
[ -x "$bin" ] || skip "slop-milter not built"

cap=16
read_timeout=20
work=$(mktemp -d "${TMPDIR:-/tmp}/slop-stall.XXXXXX") || exit 1
chmod 755 "$work"
# setpriv runs the daemon as an unused uid: it gets its own copies of the
# program and the rules, so a checkout under a 0700 directory works.
world_copy "$work/pub" "$bin" "$rules" || exit 1
bin=$work/pub/$(basename "$bin") rules=$work/pub/$(basename "$rules")
sock=$work/milter.sock
log=$work/daemon.log

mroot=$work/mta
h() {
    _hc=$1
    shift
    sh "$here/postfix-harness.sh" "$_hc" "$mroot" "$@"
}
cleanup() {
    stop_pid "$peers_pid" 50
    [ ! -d "$mroot" ] || h stop >/dev/null 2>&1
    stop_daemon
    remove_workdir "$work" "${SLOP_KEEP_E2E:-}"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# GATE_RESERVED_TASKS (milter/gate_limit.h) plus two threads per connection.
reserved=$(sed -n 's/^#define GATE_RESERVED_TASKS \([0-9]*\).*/\1/p' "$here/../../milter/gate_limit.h")
limit=$((reserved + 2 * cap))
run_as=""
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null 2>&1 &&
    command -v prlimit >/dev/null 2>&1; then
    # RLIMIT_NPROC counts every process of the uid: take one nobody uses.
    for u in $(seq 61000 61999); do
        if ! getent passwd "$u" >/dev/null && [ -z "$(ps -o pid= -u "$u" 2>/dev/null)" ]; then
            run_as=$u
            break
        fi
    done
fi
cat >"$work/slop-milter.conf" <<EOF
Socket unix:$sock
SocketMode 0666
Syslog no
RulesDir $rules
StateDir $work/state
ReplyEnable no
ReadTimeout ${read_timeout}s
EOF
if [ -n "$run_as" ]; then
    echo "$test_name: uid $run_as, RLIMIT_NPROC $limit, MaxConnections 0 (derived)"
    mkdir "$work/state"
    chown "$run_as:$run_as" "$work" "$work/state"
    prlimit --nproc="$limit:$limit" setpriv --reuid="$run_as" --regid="$run_as" --clear-groups \
        "$bin" -f -c "$work/slop-milter.conf" >"$log" 2>&1 &
else
    echo "$test_name: not root: no task limit, MaxConnections $cap"
    echo "MaxConnections $cap" >>"$work/slop-milter.conf"
    "$bin" -f -c "$work/slop-milter.conf" >"$log" 2>&1 &
fi
daemon_pid=$!

n=0
while [ ! -S "$sock" ] && [ "$n" -lt 300 ] && kill -0 "$daemon_pid" 2>/dev/null; do
    sleep 0.1
    n=$((n + 1))
done
[ -S "$sock" ] || { cat "$log"; echo "$test_name: the daemon did not start"; exit 1; }

logged() {
    grep -q "$1" "$log"
}
# The daemon opens its socket before it starts the gate that logs the cap:
# poll (bounded, 10 s) for a line that start-up writes after the socket.
logged_soon() {
    _n=0
    while ! logged "$1" && [ "$_n" -lt 100 ]; do
        sleep 0.1
        _n=$((_n + 1))
    done
    logged "$1"
}
fds() {
    find "/proc/$daemon_pid/fd" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l
}
# Poll (bounded: TENTHS polls 0.1 s apart) until the daemon has WANT descriptors.
fds_back() {
    _n=0
    while [ "$(fds)" -ne "$1" ] && [ "$_n" -lt "$2" ]; do
        sleep 0.1
        _n=$((_n + 1))
    done
    echo "$test_name: descriptors $(fds), at start $1"
    [ "$(fds)" -eq "$1" ]
}
session() {
    miltertest -s "$here/mt-conn-session.lua" -D WORK="$work" -D MSGS="$here/msgs" \
        -D EXPECT="$1"
}
# Start COUNT stalled peers and wait (bounded) until they are set up.
stall() {
    rm -f "$work/ready"
    python3 "$here/stall-peers.py" "$sock" "$1" "$work/ready" &
    peers_pid=$!
    _n=0
    while [ ! -s "$work/ready" ] && [ "$_n" -lt 1200 ] && kill -0 "$peers_pid" 2>/dev/null; do
        sleep 0.1
        _n=$((_n + 1))
    done
    echo "$test_name: peers: $(cat "$work/ready" 2>/dev/null)"
}

check "the cap is $cap connections" logged_soon "at most $cap milter connections at once"
postfix=""
if [ -n "$run_as" ] && command -v swaks >/dev/null 2>&1 && [ -x /usr/sbin/postfix ]; then
    if port=$(free_port 26025) && mkdir "$mroot" && h init "$port" "$sock" accept >/dev/null &&
        h start >/dev/null; then
        postfix=yes
    else
        echo "$test_name: the private Postfix did not start: Postfix steps skipped"
    fi
else
    echo "$test_name: Postfix steps skipped (need root, postfix and swaks)"
fi
# send EXPECTED_STATUS: one mail through the private Postfix.
pf_send() {
    _rc=0
    h send "$here/msgs/genuine-patch.eml" casey@example.test security@slop.test >/dev/null ||
        _rc=$?
    echo "$test_name: Postfix answered the SMTP client with status class $_rc"
    [ "$_rc" -eq "$1" ]
}
# One ordinary session first, so that the thread pool and scan threads
# the daemon keeps exist before the count is taken.
check "a session before the peers is served" session served
start_fds=$(fds)
echo "$test_name: descriptors at start: $start_fds"

# 1. Twice the cap of stalled peers.
stall $((2 * cap))
check "all peers connected" grep -q "^ready $((2 * cap)) " "$work/ready"
check "peers over the cap were answered tempfail" \
    sh -c "awk '{ exit !(\$3 > 0) }' '$work/ready'"
check "peers under the cap were served" sh -c "awk '{ exit !(\$4 > 0) }' '$work/ready'"
check "a session at the cap is answered tempfail" session tempfail
check "the cap reached is logged" logged "MaxConnections $cap reached"
if [ -n "$postfix" ]; then
    check "Postfix: a mail at the cap gets 4xx, not accepted unscanned" pf_send 4
fi

# 2. The peers close: nothing stays open.
stop_pid "$peers_pid" 50
peers_pid=""
check "descriptors back to the start count after the peers close" fds_back "$start_fds" 600
n=0
while ! logged "below MaxConnections $cap again" && [ "$n" -lt 300 ]; do
    sleep 0.1
    n=$((n + 1))
done
check "the end of the cap episode is logged" logged "below MaxConnections $cap again"
check "peers closed in option negotiation are logged" logged "closed outside a session"
check "the episode is logged once" test "$(grep -c "MaxConnections $cap reached" "$log")" -eq 1

# 3. Served again.
check "a session after the peers is served" session served
if [ -n "$postfix" ]; then
    check "Postfix: the mail sent again is accepted" pf_send 0
    check "Postfix: and delivered" h wait security@slop.test 1 60
    check "Postfix: delivered scanned (X-Slop-Status)" \
        sh -c "grep -l '^X-Slop-Status:' '$(h mailbox security@slop.test)'/*.eml"
    check "Postfix: one delivery, none before" test "$(h count security@slop.test)" -eq 1
fi

# 4. Peers that stay until ReadTimeout cuts them. (The ones cut in option
# negotiation fall in the same minute as step 2's line: counted, not logged.)
stall 4
check "the deep peer reached its header" grep -q "^ready 4 0 1$" "$work/ready"
n=0
while ! logged "cut after ReadTimeout" && [ "$n" -lt $(((read_timeout + 60) * 10)) ]; do
    sleep 0.1
    n=$((n + 1))
done
check "a session cut by ReadTimeout is logged" logged "cut after ReadTimeout (${read_timeout}s)"
check "descriptors back to the start count after ReadTimeout" fds_back "$start_fds" 600
stop_pid "$peers_pid" 50
peers_pid=""
check "the daemon still runs" kill -0 "$daemon_pid"

if [ "$failed" -ne 0 ]; then
    echo "--- daemon log"
    cat "$log"
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
