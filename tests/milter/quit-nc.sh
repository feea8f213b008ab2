#!/bin/sh
# SMFIC_QUIT_NC: an MTA may end an SMTP session with "quit, a new
# connection follows" and start the next session (SMFIC_CONNECT, no new
# option negotiation) on the same milter socket. libmilter's engine.c
# drops both commands without a word when the previous answer was
# SMFIS_ACCEPT (see callbacks.c), and the MTA then waits for a CONNECT
# reply until its timeout. milter-load -q plays such an MTA; each phase
# runs a fresh daemon on a unix socket in a private directory and checks
# that every message of every session got its final answer:
#   scan    scanned mail, tagged, quarantined and untouched, 2 connections
#   peer    PeerList: each session passes unscanned at connect
#   sender  AllowSenders: each message passes unscanned at MAIL FROM
#   rcpt    Recipients: each message passes unscanned at end of headers
# A reject or tempfail still breaks the next session on the socket (a
# limit of libmilter, see callbacks.c), so no phase rejects.
# Usage: quit-nc.sh SLOP_MILTER MILTER_LOAD RULES_DIR
# Exits 77 (skipped) when a binary or timeout(1) is missing, unless
# SLOP_REQUIRE_INTEGRATION is set. No network; the daemon is stopped by
# its pid; every wait is bounded.
set -u
bin=$1 load=$2
rules=$(cd "$3" && pwd) || exit 64
here=$(cd "$(dirname "$0")" && pwd)
msgs=$here/msgs
passed=0 failed=0
test_name=quit-nc skip_hint=no
# shellcheck source-path=SCRIPTDIR source=testlib.sh
. "$here/testlib.sh"

if [ ! -x "$bin" ] || [ ! -x "$load" ]; then
    skip "slop-milter or milter-load not built"
fi
command -v timeout >/dev/null 2>&1 || skip "timeout not found (Debian package coreutils)"

work=$(mktemp -d "${TMPDIR:-/tmp}/slop-quitnc.XXXXXX") || exit 1
sock=$work/milter.sock
daemon_pid=""

cleanup() {
    stop_daemon
    remove_workdir "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# start_daemon NAME [extra configuration lines]: log in $work/NAME.log.
start_daemon() {
    name=$1
    shift
    conf=$work/$name.conf
    {
        echo "Socket unix:$sock"
        echo "SocketMode 0600"
        echo "Syslog no"
        echo "RulesDir $rules"
        echo "StateDir $work/state-$name"
        echo "ReplyThreshold 0"
        for line in "$@"; do
            echo "$line"
        done
    } >"$conf"
    rm -f "$sock"
    log=$work/$name.log
    "$bin" -f -c "$conf" >"$log" 2>&1 &
    daemon_pid=$!
    n=0
    while [ ! -S "$sock" ] && [ "$n" -lt 100 ]; do
        kill -0 "$daemon_pid" 2>/dev/null || break
        sleep 0.1
        n=$((n + 1))
    done
    [ -S "$sock" ]
}

# run_load NAME COUNT [milter-load options]: every session ends with
# QUIT_NC; the generator's own socket timeout is 30 s, timeout(1) bounds
# the whole run. Sets out (its summary line) and rc.
run_load() {
    name=$1 count=$2
    shift 2
    out=$(timeout 90 "$load" -q -n "$count" -t 60 "$@" "unix:$sock" \
        "$msgs/genuine-patch.eml" "$msgs/lock-swap.eml" "$msgs/slop-patch.eml" \
        "$msgs/slop-report.eml" 2>"$work/$name.load.err")
    rc=$?
    echo "  $name: milter-load: $out (exit $rc)"
    sed 's/^/  milter-load: /' "$work/$name.load.err"
}

field() { # KEY: the value of KEY= in $out
    printf '%s\n' "$out" | tr ' ' '\n' | sed -n "s/^$1=//p"
}

log_count() { # PATTERN: lines of the current daemon log matching it
    grep -c -- "$1" "$log"
}

# Every message answered, none lost to a hung session.
check_all_answered() { # NAME COUNT
    check "$1: milter-load exits 0" [ "$rc" -eq 0 ]
    check "$1: $2 messages answered" [ "$(field messages)" = "$2" ]
    check "$1: every message accepted" [ "$(field accept)" = "$2" ]
    check "$1: no connection error" [ "$(field errors)" = 0 ]
    check "$1: daemon alive" kill -0 "$daemon_pid"
}

echo "== scan: 16 messages over 2 milter connections, one SMTP session each"
if start_daemon scan "QuarantineThreshold 14"; then
    run_load scan 16 -c 2
    check_all_answered scan 16
    check "scan: one decision line per message" [ "$(log_count ' result=')" -eq 16 ]
    check "scan: tagged and quarantined mail among them" \
        [ "$(log_count 'result=quarantine')" -eq 8 ]
    check "scan: header changes sent before the answers" [ "$(field mods)" -gt 0 ]
else
    check "scan: daemon starts" false
fi
stop_daemon

echo "== peer: PeerList, 6 sessions on one milter connection"
if start_daemon peer "PeerList 192.0.2.0/24"; then
    run_load peer 6
    check_all_answered peer 6
    check "peer: every session connected and passed unscanned" \
        [ "$(log_count 'in PeerList, not scanned')" -eq 6 ]
    check "peer: nothing scanned" [ "$(log_count ' result=')" -eq 0 ]
else
    check "peer: daemon starts" false
fi
stop_daemon

echo "== sender: AllowSenders, 6 sessions on one milter connection"
if start_daemon sender "AllowSenders author@bench.test"; then
    run_load sender 6
    check_all_answered sender 6
    check "sender: every message passed unscanned" \
        [ "$(log_count 'in AllowSenders, not scanned')" -eq 6 ]
else
    check "sender: daemon starts" false
fi
stop_daemon

echo "== rcpt: Recipients, 6 sessions on one milter connection"
if start_daemon rcpt "Recipients security@slop.test"; then
    run_load rcpt 6
    check_all_answered rcpt 6
    check "rcpt: every message passed unscanned" \
        [ "$(log_count 'no recipient in Recipients, not scanned')" -eq 6 ]
else
    check "rcpt: daemon starts" false
fi
stop_daemon

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
