#!/bin/sh
# End-to-end: the built slop-milter behind a real, private MTA on loopback.
# Usage: e2e.sh postfix|sendmail SLOP_MILTER RULES_DIR
#
# Covers: tag headers and a tagged Subject in the delivered mailbox, forged
# inbound X-Slop-* removed; the automatic reply delivered to the sender
# exactly once across three sends; no reply to list mail or to <>; a clean
# patch delivered untouched apart from "X-Slop-Status: No"; quarantine
# (the MTA's hold queue); reject (swaks sees 550 5.7.1 with the findings);
# and, with the MTA's default action accept and then tempfail, killing the
# daemon with SIGKILL in the middle of a run and restarting it loses no
# message: accepted + temporarily refused = sent, delivered + queued =
# accepted.
#
# Skips (exit 77) when the MTA, swaks or the sendmail prefix cannot be had,
# unless SLOP_REQUIRE_INTEGRATION is set (CI): then that is a failure.
# Every process started here is stopped by its pid; loops are bounded.
set -u
mta=$1 bin=$2 rules=$3
here=$(cd "$(dirname "$0")" && pwd)
harness=$here/$mta-harness.sh
msgs=$here/msgs
passed=0 failed=0
test_name=e2e-$mta
# shellcheck source-path=SCRIPTDIR source=testlib.sh
. "$here/testlib.sh"

[ "$(id -u)" -eq 0 ] || skip "needs root (the MTA binds, changes users and owns its queue)"
command -v swaks >/dev/null 2>&1 || skip "swaks not found (Debian package swaks)"
case "$mta" in
postfix)
    [ -x /usr/sbin/postfix ] || skip "postfix not found (Debian package postfix)"
    ;;
sendmail)
    command -v m4 >/dev/null 2>&1 || skip "m4 not found (Debian package m4)"
    ;;
*)
    echo "usage: e2e.sh postfix|sendmail SLOP_MILTER RULES_DIR" >&2
    exit 64
    ;;
esac

root=$(mktemp -d "${TMPDIR:-/tmp}/slop-e2e-$mta.XXXXXX") || exit 1
chmod 755 "$root"
mroot=$root/mta
mkdir -p "$mroot" "$root/milter"
chmod 755 "$root/milter"
daemon_pid=""

h() {
    hc=$1
    shift
    sh "$harness" "$hc" "$mroot" "$@"
}

cleanup() {
    stop_daemon
    h stop >/dev/null 2>&1
    remove_workdir "$root" "${SLOP_KEEP_E2E:-}"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

if [ "$mta" = sendmail ]; then
    # Private prefix beside the build tree, fetched once and reused.
    export SENDMAIL_PREFIX=${SENDMAIL_PREFIX:-${SLOP_SENDMAIL_PREFIX:-$(dirname "$bin")/../tests/milter/sendmail-prefix}}
    sh "$harness" prefix "$SENDMAIL_PREFIX" || skip "cannot prepare the sendmail prefix in $SENDMAIL_PREFIX"
fi

# A free loopback port. ctest runs the two MTA tests under one
# RESOURCE_LOCK, but other build trees may run this suite at the same time:
# free_port starts its scan at a place that depends on our pid; start-up is
# retried on another port if the one found was taken in between.
port=$(free_port 20025) || skip "no free port"

sock=$root/milter/milter.sock
conf=$root/milter/slop-milter.conf
write_conf() {
    cat >"$conf.new" <<EOF
Socket unix:$sock
SocketMode 0666
Syslog no
RulesDir $rules
StateDir $root/milter/state
PidFile $root/milter/slop-milter.pid
ReplyTransport smtp
SMTPServer 127.0.0.1:$port
ReplyFrom slop-milter <postmaster@slop.test>
ReplyRequires any
ReplyInterval 7d
SubjectTag [SLOP]
TagThreshold 5
ReplyThreshold 12
$*
EOF
    mv "$conf.new" "$conf"
}

start_daemon() {
    "$bin" -f -c "$conf" >>"$root/milter/daemon.log" 2>&1 &
    daemon_pid=$!
    n=0
    while [ ! -S "$sock" ] && [ "$n" -lt 100 ]; do
        sleep 0.1
        n=$((n + 1))
    done
    # A stale socket from a killed daemon exists before the new one
    # listens; wait for the log line of this start instead.
    n=0
    while [ "$(grep -c 'starting' "$root/milter/daemon.log")" -lt "$starts" ] && [ "$n" -lt 100 ]; do
        sleep 0.1
        n=$((n + 1))
    done
    sleep 0.3
    kill -0 "$daemon_pid" 2>/dev/null
}
starts=0

reload_daemon() {
    write_conf "$@"
    before=$(grep -c 'reloaded' "$root/milter/daemon.log")
    kill -USR1 "$daemon_pid"
    n=0
    while [ "$(grep -c 'reloaded' "$root/milter/daemon.log")" -le "$before" ] && [ "$n" -lt 50 ]; do
        sleep 0.1
        n=$((n + 1))
    done
    [ "$n" -lt 50 ]
}

hdr() { # first value of header $2 in message file $1 (unfolded)
    awk -v name="$2" 'BEGIN { IGNORECASE = 1 }
        /^$/ { exit }
        found && /^[ \t]/ { sub(/^[ \t]+/, " "); v = v $0; next }
        found { print v; exit }
        tolower(substr($0, 1, length(name) + 1)) == tolower(name) ":" {
            v = substr($0, length(name) + 2); sub(/^[ \t]+/, "", v); found = 1 }
        END { if (found && v != "") print v }' "$1" | head -n 1
}

hdr_count() {
    awk -v name="$2" '/^$/ { exit }
        tolower(substr($0, 1, length(name) + 1)) == tolower(name) ":" { n++ }
        END { print n + 0 }' "$1"
}

last_mail() {
    ls -1t "$(h mailbox "$1")"/*.eml 2>/dev/null | head -n 1
}

# ---- start -----------------------------------------------------------------
mta_up=false
for try in 1 2 3; do
    h init "$port" "$sock" accept || skip "cannot set up $mta"
    if h start; then
        mta_up=true
        break
    fi
    h stop >/dev/null 2>&1
    port=$((port + 1 + try * 13))
done
check "$mta starts on 127.0.0.1:$port" $mta_up
write_conf
starts=1
check "daemon starts" start_daemon

# ---- 1. tags, subject, forged headers, reply once ------------------------------
variant "$msgs/slop-patch.eml" "$root/slop1.eml" s1 "X-Slop-Status: No, score=0.0 forged" \
    "X-Slop-Score: -99"
variant "$msgs/slop-patch.eml" "$root/slop2.eml" s2
variant "$msgs/slop-patch.eml" "$root/slop3.eml" s3
sent=0
for i in 1 2 3; do
    h send "$root/slop$i.eml" casey@example.test security@slop.test
    check "slop patch #$i accepted" [ $? -eq 0 ]
    sent=$((sent + 1))
done
check "3 slop patches delivered" h wait security@slop.test 3 30
m=$(ls -1tr "$(h mailbox security@slop.test)"/*.eml | head -n 1)
st=$(hdr "$m" X-Slop-Status)
echo "  delivered X-Slop-Status: $st"
check "X-Slop-Status: Yes with score and tests" sh -c "printf '%s' '$st' | grep -Eq '^Yes, score=[0-9.]+ required=[0-9.]+ tests=.*LOCK_UNLOCK_TO_DESTROY'"
check "exactly one X-Slop-Status (forged one removed)" [ "$(hdr_count "$m" X-Slop-Status)" -eq 1 ]
check "exactly one X-Slop-Score (forged one removed)" [ "$(hdr_count "$m" X-Slop-Score)" -eq 1 ]
check "X-Slop-Report present" [ "$(hdr_count "$m" X-Slop-Report)" -eq 1 ]
check "Subject tagged" sh -c "grep -q '^Subject: \[SLOP\] \[PATCH\] net/foo' '$m'"
check "no header line of 998 bytes or more" sh -c "! awk 'length(\$0) >= 998 { bad = 1 } END { exit !bad }' '$m'"

# The reply goes out from the daemon's sender thread, through this MTA.
check "reply delivered to the sender" h wait casey@example.test 1 30
sleep 3
n=$(h count casey@example.test)
echo "  sent=3 replies=$n"
check "exactly one reply across 3 sends" [ "$n" -eq 1 ]
r=$(last_mail casey@example.test)
if [ -n "$r" ]; then
    check "reply is Auto-Submitted: auto-replied" [ "$(hdr "$r" Auto-Submitted)" = "auto-replied" ]
    # Postfix's pipe shows the null sender as <MAILER-DAEMON>.
    check "reply has a null envelope sender" grep -Eq '^Return-Path: <(MAILER-DAEMON)?>' "$r"
    check "reply names a finding" grep -q 'mutex' "$r"
    check "reply refers to the original message" sh -c "grep -q '^In-Reply-To: <20260310091402.slop-patch-1.s' '$r'"
fi

# ---- 2. no reply to list mail or to <> ---------------------------------------------
variant "$msgs/slop-report.eml" "$root/list.eml" l1 "List-Id: Foo development <foo-dev.lists.test>"
h send "$root/list.eml" riley@example.test security@slop.test
check "list mail accepted" [ $? -eq 0 ]
sed 's/^From: .*/From: Other Person <other@example.test>/' "$msgs/slop-report.eml" >"$root/null.eml"
h send "$root/null.eml" '<>' security@slop.test
check "<> mail accepted" [ $? -eq 0 ]
check "list and <> mail delivered" h wait security@slop.test 5 30
lm=$(grep -l '^List-Id: Foo development' "$(h mailbox security@slop.test)"/*.eml | head -n 1)
check "list mail tagged" sh -c "grep -q '^X-Slop-Status: Yes' '$lm'"
sleep 3
check "no reply to list mail" [ "$(h count riley@example.test)" -eq 0 ]
check "no reply for <> mail" [ "$(h count other@example.test)" -eq 0 ]
check "no reply bounced to postmaster" [ "$(h count postmaster@slop.test)" -eq 0 ]

# ---- 3. a clean patch --------------------------------------------------------------
h send "$msgs/genuine-patch.eml" dana@example.test security@slop.test
check "genuine patch accepted" [ $? -eq 0 ]
check "genuine patch delivered" h wait security@slop.test 6 30
g=$(grep -l '^Message-ID: <20260312080211.genuine-1@' "$(h mailbox security@slop.test)"/*.eml | head -n 1)
check "genuine patch: X-Slop-Status: No" sh -c "grep -q '^X-Slop-Status: No, score=' '$g'"
check "genuine patch: Subject untouched" sh -c "grep -q '^Subject: \[PATCH net\] foo: fix refcount' '$g'"
sleep 2
check "no reply to the genuine patch" [ "$(h count dana@example.test)" -eq 0 ]

# ---- 4. quarantine -------------------------------------------------------------------
check "reload with QuarantineThreshold 13" reload_daemon "QuarantineThreshold 13"
held0=$(h queue hold)
variant "$msgs/slop-report.eml" "$root/q.eml" q1 "Precedence: bulk"
h send "$root/q.eml" riley@example.test security@slop.test
check "quarantined report accepted" [ $? -eq 0 ]
h settle 20
held=$(h queue hold)
echo "  hold queue: before=$held0 after=$held"
check "report held in the $mta hold queue" [ "$held" -eq $((held0 + 1)) ]

# ---- 5. reject -------------------------------------------------------------------------
check "reload with RejectThreshold 13" reload_daemon "RejectThreshold 13"
variant "$msgs/slop-report.eml" "$root/rej.eml" r1
before=$(h count security@slop.test)
h send "$root/rej.eml" riley@example.test security@slop.test
rc=$?
check "reject: swaks sees a permanent failure (exit 5)" [ "$rc" -eq 5 ]
t=$root/mta/swaks/last.log
check "reject: 550 5.7.1 in the SMTP reply" grep -Eq '<\*\* +550[ -]5\.7\.1' "$t"
check "reject: reply names a finding" grep -q 'TM_EXCESS_PRIVILEGES' "$t"
check "reject: reply points to the threat model" grep -q 'threat-model' "$t"
sleep 1
check "reject: nothing delivered" [ "$(h count security@slop.test)" -eq "$before" ]

# ---- 6. kill -9 mid-run --------------------------------------------------------------
# N clean patches in a row; the daemon is killed after the third and
# restarted after the seventh. Counted per MTA default action.
kill_run() {
    action=$1 total=12
    h set "milter_default_action=$action" >/dev/null 2>&1 ||
        h set "default_action=$action" >/dev/null 2>&1
    rcpt=kill-$action@slop.test
    ok=0 temp=0 other=0
    for i in $(seq 1 "$total"); do
        variant "$msgs/genuine-patch.eml" "$root/k.eml" "k$action$i"
        if [ "$i" -eq 4 ]; then
            kill -9 "$daemon_pid"
            wait "$daemon_pid" 2>/dev/null
            daemon_pid=""
        fi
        if [ "$i" -eq 8 ]; then
            starts=$((starts + 1))
            start_daemon || echo "  restart failed"
        fi
        h send "$root/k.eml" dana@example.test "$rcpt"
        case $? in
        0) ok=$((ok + 1)) ;;
        4) temp=$((temp + 1)) ;;
        *) other=$((other + 1)) ;;
        esac
    done
    h settle 30
    h flush >/dev/null 2>&1
    h wait "$rcpt" "$ok" 20
    delivered=$(h count "$rcpt")
    queued=$(h queue deferred)
    echo "  default_action=$action sent=$total accepted=$ok tempfailed=$temp other=$other delivered=$delivered queued=$queued"
    check "kill ($action): accepted + tempfailed = sent" [ $((ok + temp)) -eq "$total" ]
    check "kill ($action): delivered + queued = accepted" [ $((delivered + queued)) -eq "$ok" ]
    if [ "$action" = accept ]; then
        check "kill (accept): every message accepted" [ "$ok" -eq "$total" ]
    else
        check "kill (tempfail): mail refused with 4xx while the daemon was down" [ "$temp" -ge 1 ]
    fi
    tagged=$(grep -l '^X-Slop-Status:' "$(h mailbox "$rcpt")"/*.eml 2>/dev/null | wc -l)
    echo "  scanned (X-Slop-Status present): $tagged of $delivered"
    check "kill ($action): mail after the restart scanned again" [ "$tagged" -ge 4 ]
}
kill_run accept
kill_run tempfail

echo "e2e-$mta: $passed passed, $failed failed"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
