#!/bin/sh
# Two MX hosts sharing one Redis (StateBackend redis): two slop-milter
# daemons, each behind its own private Postfix on loopback, one private
# redis-server on a UNIX socket.
#
#   1. a report to host A, then a copy under another Message-ID to host B:
#      B finds the duplicate and its reply names A's Message-ID
#   2. eleven reports from one sender spread over both hosts: only the
#      eleventh is a flood (counted once across hosts)
#   3. 50 messages from one sender over 20 concurrent connections spread
#      over both hosts: every one delivered, exactly one reply in all
#   4. redis-server SIGKILLed while 30 messages flow, then restarted: every
#      message delivered or refused with 4xx (host B: OnRedisError
#      tempfail), none lost; one reply at most; each daemon logs the outage
#      once and recovers without a restart
#   5. redis-server paused (SIGSTOP): a session completes after about
#      RedisTimeout (3 s here; bound: 20 s), the log names the timeout; host B
#      answers 4xx; SIGCONT
#
# Needs root, postfix, swaks, redis-server; exit 77 (skip) without them
# unless SLOP_REQUIRE_INTEGRATION is set. Every process started here is
# stopped by its pid; loops are bounded.
# Usage: redis-hosts.sh SLOP_MILTER RULES_DIR
set -u
bin=$1 rules=$2
here=$(cd "$(dirname "$0")" && pwd)
harness=$here/postfix-harness.sh
msgs=$here/msgs
passed=0 failed=0
test_name=redis-hosts
# shellcheck disable=SC2034 # read by testlib.sh
daemon_pid=""
# shellcheck source=testlib.sh
. "$here/testlib.sh"
# shellcheck source=../state/redis-lib.sh
. "$here/../state/redis-lib.sh"

[ "$(id -u)" -eq 0 ] || skip "needs root (the MTA binds, changes users and owns its queue)"
command -v swaks >/dev/null 2>&1 || skip "swaks not found (Debian package swaks)"
[ -x /usr/sbin/postfix ] || skip "postfix not found (Debian package postfix)"
command -v redis-server >/dev/null 2>&1 || skip "redis-server not found (Debian package redis-server)"

root=$(mktemp -d "${TMPDIR:-/tmp}/slop-redis-hosts.XXXXXX") || exit 1
chmod 755 "$root"
mkdir -p "$root/a" "$root/b" "$root/ma" "$root/mb" "$root/redis" "$root/rc"
chmod 755 "$root/a" "$root/b" "$root/ma" "$root/mb"
pid_a="" pid_b=""

cleanup() {
    stop_pid "$pid_a"
    stop_pid "$pid_b"
    [ -n "$REDIS_PID" ] && kill -CONT "$REDIS_PID" 2>/dev/null
    redis_stop
    sh "$harness" stop "$root/a" >/dev/null 2>&1
    sh "$harness" stop "$root/b" >/dev/null 2>&1
    remove_workdir "$root" "${SLOP_KEEP_E2E:-}"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# h HOST CMD ARGS...
h() {
    _host=$1 _cmd=$2
    shift 2
    sh "$harness" "$_cmd" "$root/$_host" "$@"
}

redis_start "$root/redis" || skip "cannot start redis-server"

start_mta() { # HOST BASEPORT
    for _ in 1 2 3; do
        p=$(free_port "$2") || return 1
        h "$1" init "$p" "$root/m$1/milter.sock" accept || return 1
        if h "$1" start; then
            echo "$p"
            return 0
        fi
        h "$1" stop >/dev/null 2>&1
    done
    return 1
}
port_a=$(start_mta a 22025) || skip "cannot start Postfix A"
port_b=$(start_mta b $((port_a + 1))) || skip "cannot start Postfix B"
check "two Postfix instances on 127.0.0.1:$port_a and :$port_b" [ "$port_a" != "$port_b" ]

# RedisTimeout 3 s, not the 500 ms default: on a loaded CI machine (two
# Postfix instances, two daemons and 20 concurrent sessions on 2 cores) a
# round trip can take over 500 ms, and host B would then tempfail a
# message of part 3 by design. Part 5 still bounds the paused session.
write_conf() { # HOST PORT ONREDISERROR
    cat >"$root/m$1/slop-milter.conf" <<EOC
Socket unix:$root/m$1/milter.sock
SocketMode 0666
Syslog no
RulesDir $rules
StateDir $root/m$1/state
PidFile $root/m$1/slop-milter.pid
ReplyTransport smtp
SMTPServer 127.0.0.1:$2
ReplyFrom slop-milter <postmaster@slop.test>
ReplyRequires any
ReplyInterval 7d
TagThreshold 5
ReplyThreshold 12
StateBackend redis
RedisServer unix:$REDIS_SOCK
RedisPrefix hosts:
RedisTimeout 3000
OnRedisError $3
EOC
}
start_milter() { # HOST -> pid on stdout
    "$bin" -f -c "$root/m$1/slop-milter.conf" >>"$root/m$1/daemon.log" 2>&1 &
    _p=$!
    _n=0
    while ! grep -q 'starting' "$root/m$1/daemon.log" 2>/dev/null && [ "$_n" -lt 100 ]; do
        sleep 0.1
        _n=$((_n + 1))
    done
    echo "$_p"
}
write_conf a "$port_a" accept
write_conf b "$port_b" tempfail
pid_a=$(start_milter a)
pid_b=$(start_milter b)
check "both daemons start with StateBackend redis" \
    sh -c "kill -0 $pid_a && kill -0 $pid_b && grep -q 'StateBackend redis' '$root/ma/daemon.log'"

# The X-Slop-Status of a delivered message, unfolded.
tests_of() { awk '/^$/ { exit } /^X-Slop-Status:/ { f = 1; printf "%s", $0; next }
    f && /^[ \t]/ { printf "%s", $0; next } { f = 0 }' "$1"; }
has_test() { [ -n "$1" ] && tests_of "$1" | grep -q "$2"; }
count2() { echo $(($(h a count "$1") + $(h b count "$1"))); }
# The delivered copy of the message whose Message-ID holds TAG, either host.
find_mail() {
    grep -l "^Message-ID: <[^>]*\.$1@" "$(h a mailbox security@slop.test)"/*.eml \
        "$(h b mailbox security@slop.test)"/*.eml 2>/dev/null | head -n 1
}

# ---- 1. a duplicate across hosts ----------------------------------------------------
variant "$msgs/slop-report.eml" "$root/d1.eml" dupA
variant "$msgs/slop-report.eml" "$root/d2.eml" dupB
# Someone else's copy: the same author's would be a resend, no duplicate.
sed -i 's/^From: .*/From: Rory Copier <rory@example.test>/' "$root/d2.eml"
h a send "$root/d1.eml" riley@example.test security@slop.test
h b send "$root/d2.eml" rory@example.test security@slop.test
check "report on A and its copy on B delivered" h b wait security@slop.test 1 30
m=$(find_mail dupB)
check "B's copy: DUPLICATE found through Redis" has_test "$m" DUPLICATE
m=$(find_mail dupA)
check "A's original: no DUPLICATE" sh -c "[ -n '$m' ] && ! grep -q 'DUPLICATE' '$m'"
check "B answers the copy" h b wait rory@example.test 1 30
r=$(ls -1t "$(h b mailbox rory@example.test)"/*.eml 2>/dev/null | head -n 1)
# DUPLICATE's evidence names another reporter's mail: kept from senders.
check "  ... without A's Message-ID" \
    sh -c "[ -n '$r' ] && ! grep -q 'slop-report-1.dupA@' '$r'"

# ---- 2. a flood across hosts ------------------------------------------------------
i=1
while [ "$i" -le 11 ]; do
    sed "s/^From: .*/From: Flo Od <flo@example.test>/; s/^Subject: \(.*\)/Subject: \1 $i/" \
        "$msgs/slop-report.eml" >"$root/f.tmp"
    variant "$root/f.tmp" "$root/f$i.eml" "flood$i"
    if [ $((i % 2)) -eq 1 ]; then host=a; else host=b; fi
    h "$host" send "$root/f$i.eml" flo@example.test security@slop.test
    i=$((i + 1))
done
poll_delivered() { # N SECONDS: both hosts together hold N messages for security@
    _n=0
    while [ "$(count2 security@slop.test)" -lt "$1" ] && [ "$_n" -lt $(($2 * 10)) ]; do
        sleep 0.1
        _n=$((_n + 1))
    done
    [ "$(count2 security@slop.test)" -ge "$1" ]
}
check "11 flood reports delivered" poll_delivered 13 40
m10=$(find_mail flood10)
m11=$(find_mail flood11)
check "the tenth report (5 per host): no SENDER_FLOOD" sh -c "[ -n '$m10' ] && ! grep -q SENDER_FLOOD '$m10'"
check "the eleventh report, counted over both hosts: SENDER_FLOOD" \
    has_test "$m11" SENDER_FLOOD

# ---- 3. one reply for 50 messages over 20 connections and two hosts -------------------
base=$(count2 security@slop.test)
w=0
while [ "$w" -lt 20 ]; do
    (
        i=$w
        while [ "$i" -lt 50 ]; do
            if [ $((i % 2)) -eq 0 ]; then host=a; else host=b; fi
            variant "$msgs/slop-patch.eml" "$root/p$i.eml" "many$i"
            h "$host" send "$root/p$i.eml" casey@example.test security@slop.test >/dev/null 2>&1
            echo $? >"$root/rc/p$i"
            i=$((i + 20))
        done
    ) &
    eval "worker_$w=\$!"
    w=$((w + 1))
done
w=0
while [ "$w" -lt 20 ]; do
    eval "wait \$worker_$w"
    w=$((w + 1))
done
ok=$(cat "$root"/rc/p* | grep -c '^0$')
check "50 messages accepted over 20 concurrent connections ($ok)" [ "$ok" -eq 50 ]
check "50 messages delivered" poll_delivered $((base + 50)) 60
h a wait casey@example.test 1 20 || h b wait casey@example.test 1 20
sleep 3
n=$(count2 casey@example.test)
echo "  replies to casey: A=$(h a count casey@example.test) B=$(h b count casey@example.test)"
check "exactly one reply in all ($n)" [ "$n" -eq 1 ]

# ---- 4. Redis killed under load, restarted ----------------------------------------------
ua0=$(grep -c 'unreachable' "$root/ma/daemon.log")
ub0=$(grep -c 'unreachable' "$root/mb/daemon.log")
base=$(count2 security@slop.test)
total=30 accepted=0 temp=0 other=0
i=1
while [ "$i" -le "$total" ]; do
    if [ "$i" -eq 6 ]; then
        kill -9 "$REDIS_PID"
        wait "$REDIS_PID" 2>/dev/null
        REDIS_PID=
    fi
    if [ "$i" -eq 21 ]; then
        redis_start "$root/redis" || echo "  redis restart failed"
    fi
    if [ $((i % 2)) -eq 0 ]; then host=a; else host=b; fi
    variant "$msgs/slop-patch.eml" "$root/k$i.eml" "kill$i"
    h "$host" send "$root/k$i.eml" kim@example.test security@slop.test >/dev/null 2>&1
    case $? in
    0) accepted=$((accepted + 1)) ;;
    4) temp=$((temp + 1)) ;;
    *) other=$((other + 1)) ;;
    esac
    i=$((i + 1))
done
poll_delivered $((base + accepted)) 60
delivered=$(($(count2 security@slop.test) - base))
queued=$(($(h a queue deferred) + $(h b queue deferred)))
echo "  sent=$total accepted=$accepted tempfailed=$temp other=$other delivered=$delivered queued=$queued"
check "kill: accepted + tempfailed = sent" [ $((accepted + temp)) -eq "$total" ]
check "kill: delivered + queued = accepted (none lost)" [ $((delivered + queued)) -eq "$accepted" ]
check "kill: host B (OnRedisError tempfail) refused with 4xx during the outage" [ "$temp" -ge 1 ]
# Recovery is lazy: the next message after the back-off tries the server.
n=0
while [ "$n" -lt 60 ] && ! { grep -q 'reachable again' "$root/ma/daemon.log" &&
    grep -q 'reachable again' "$root/mb/daemon.log"; }; do
    variant "$msgs/genuine-patch.eml" "$root/g.eml" "probe$n"
    h a send "$root/g.eml" dana@example.test security@slop.test >/dev/null 2>&1
    h b send "$root/g.eml" dana@example.test security@slop.test >/dev/null 2>&1
    sleep 1
    n=$((n + 1))
done
check "both daemons recover without a restart" \
    sh -c "kill -0 $pid_a && kill -0 $pid_b && grep -q 'reachable again' '$root/ma/daemon.log' &&
           grep -q 'reachable again' '$root/mb/daemon.log'"
ua=$(($(grep -c 'unreachable' "$root/ma/daemon.log") - ua0))
ub=$(($(grep -c 'unreachable' "$root/mb/daemon.log") - ub0))
check "the outage logged once per daemon (A=$ua B=$ub), not per message" [ "$ua" -eq 1 ] && [ "$ub" -eq 1 ]
sleep 3
n=$(count2 kim@example.test)
check "kill: kim answered once, never twice ($n)" [ "$n" -eq 1 ]
variant "$msgs/slop-report.eml" "$root/d3.eml" dupC
sed -i 's/^From: .*/From: Rory Copier <rory@example.test>/' "$root/d3.eml"
base=$(count2 security@slop.test)
h a send "$root/d3.eml" rory@example.test security@slop.test >/dev/null 2>&1
poll_delivered $((base + 1)) 30
m=$(find_mail dupC)
check "after recovery: the duplicate of the first report is found again" \
    has_test "$m" DUPLICATE

# ---- 5. Redis paused -------------------------------------------------------------------
kill -STOP "$REDIS_PID"
variant "$msgs/slop-patch.eml" "$root/s1.eml" stop1
t0=$(date +%s)
h a send "$root/s1.eml" pat@example.test security@slop.test >/dev/null 2>&1
rc=$?
el=$(($(date +%s) - t0))
variant "$msgs/slop-patch.eml" "$root/s2.eml" stop2
h b send "$root/s2.eml" pat@example.test security@slop.test >/dev/null 2>&1
rcb=$?
kill -CONT "$REDIS_PID"
echo "  paused Redis: host A session rc=$rc in ${el}s, host B rc=$rcb"
check "paused: host A (accept) completes the session within 20 s" [ "$rc" -eq 0 ] && [ "$el" -le 20 ]
check "paused: the log names the timeout" grep -q 'no answer within the timeout' "$root/ma/daemon.log"
check "paused: host B (tempfail) answers 4xx" [ "$rcb" -eq 4 ]
sleep 2
check "paused: no reply without the ledger" [ "$(count2 pat@example.test)" -eq 0 ]

echo "$test_name: $passed passed, $failed failed"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
