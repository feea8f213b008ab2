#!/bin/sh
# A security@ inbox's first days, end to end (issue 31, findings 1 and 2):
# one slop-milter, scanning mail to every recipient, in front of a private
# Postfix on 127.0.0.1 (postfix-
# harness.sh), replies leaving through ReplyTransport smtp into that same
# Postfix, so that they pass the milter again on their way to the reporter.
# Usage: inbox.sh SLOP_MILTER RULES_DIR
#
# Covers:
#  (a) the key our replies are signed with is made at the first start,
#      mode 0600, in StateDir;
#  (b) a slop report from a DMARC-proved sender is tagged and answered; the
#      reply comes back through the milter, is known as our own
#      (own_reply=yes), and reaches the reporter untagged (X-Slop-Status:
#      No, no [SLOP] subject) and unanswered: no second reply, nothing to
#      ReplyFrom;
#  (c) a reply whose token does not check out (moved onto another
#      Message-ID) is scanned, but as Auto-Submitted mail it is never a
#      report and never answered;
#  (d) a genuine KASAN report resent by its author ("Re-send: ...") is no
#      duplicate and is not tagged; the same report from someone else is a
#      duplicate, and that alone does not tag it either.
#
# Skips (exit 77) without root, Postfix or swaks unless
# SLOP_REQUIRE_INTEGRATION is set. Every process started here is stopped by
# its pid; every loop is bounded; only 127.0.0.1 is used.
set -u
bin=$1 rules=$2
here=$(cd "$(dirname "$0")" && pwd)
harness=$here/postfix-harness.sh
msgs=$here/msgs
passed=0 failed=0
test_name=inbox
# shellcheck disable=SC2034 # read by testlib.sh
daemon_pid=""
# shellcheck source-path=SCRIPTDIR source=testlib.sh
. "$here/testlib.sh"

[ "$(id -u)" -eq 0 ] || skip "needs root (Postfix binds, changes users and owns its queue)"
[ -x /usr/sbin/postfix ] || skip "postfix not found (Debian package postfix)"
command -v swaks >/dev/null 2>&1 || skip "swaks not found (Debian package swaks)"
[ -x "$bin" ] || skip "slop-milter not built"

root=$(mktemp -d "${TMPDIR:-/tmp}/slop-inbox.XXXXXX") || exit 1
chmod 755 "$root"
mroot=$root/mta d=$root/milter
mkdir -p "$mroot" "$d" "$root/m"
chmod 755 "$d"

trap mta_cleanup EXIT
trap 'exit 1' INT TERM

port=$(free_port 24025) || skip "no free port"

write_conf() {
    cat >"$d/slop-milter.conf" <<EOF
Socket unix:$d/milter.sock
SocketMode 0666
Syslog no
RulesDir $rules
StateDir $d/state
PidFile $d/slop-milter.pid
ReplyTransport smtp
SMTPServer 127.0.0.1:$port
ReplyFrom Security Team <slop-bot@slop.test>
AuthservID mx.slop.test
ReplyInterval 7d
SubjectTag [SLOP]
TagThreshold 5
ReplyThreshold 5
EOF
}

start_daemon() {
    _n=0
    "$bin" -f -c "$d/slop-milter.conf" >>"$d/daemon.log" 2>&1 &
    daemon_pid=$!
    while ! grep -q 'starting' "$d/daemon.log" 2>/dev/null && [ "$_n" -lt 100 ]; do
        sleep 0.1
        _n=$((_n + 1))
    done
    kill -0 "$daemon_pid" 2>/dev/null && [ -S "$d/milter.sock" ]
}

# The unfolded value of header $2 in delivered file $1 (first one).
field() {
    awk -v name="$2" 'BEGIN { n = tolower(name) ":" }
        /^$/ { exit }
        f && /^[ \t]/ { v = v $0; next }
        f { exit }
        tolower(substr($0, 1, length(n))) == n { f = 1; v = substr($0, length(n) + 1) }
        END { sub(/^[ \t]+/, "", v); print v }' "$1"
}
# The delivered copy of the message whose Message-ID holds $2, in mailbox $1.
delivered() {
    grep -l "^Message-ID: <[^>]*$2" "$(h mailbox "$1")"/*.eml 2>/dev/null | head -n 1
}
settle() {
    h settle 20 >/dev/null 2>&1
    sleep 2
    h settle 20 >/dev/null 2>&1
}
# The decision line of the message with Message-ID $1 in the daemon log.
decision() {
    grep -F "message-id=<$1>" "$d/daemon.log" | grep -F ' result=' | tail -n 1
}

# ---- start ---------------------------------------------------------------------
write_conf
mta_up=false
for try in 1 2 3; do
    h init "$port" "$d/milter.sock" accept >/dev/null || skip "cannot set up postfix"
    if h start >/dev/null 2>&1; then
        mta_up=true
        break
    fi
    h stop >/dev/null 2>&1
    port=$((port + 1 + try * 13))
    write_conf
done
check "postfix starts on 127.0.0.1:$port" $mta_up
$mta_up || exit 1
check "slop-milter starts" start_daemon
key_mode=$(stat -c '%a' "$d/state/reply.key" 2>/dev/null)
check "(a) the reply key is made at the first start, mode 600 ($key_mode)" [ "$key_mode" = 600 ]

# ---- (b) a slop report, its reply and the reply's way back ---------------------
{
    echo "Authentication-Results: mx.slop.test; dmarc=pass (p=none) header.from=example.test"
    cat "$msgs/slop-report.eml"
} >"$root/m/report.eml"
h send "$root/m/report.eml" riley@example.test security@slop.test >/dev/null 2>&1
check "(b) the report is delivered to security@" h wait security@slop.test 1 30
check "(b) its reply reaches the reporter" h wait riley@example.test 1 30
settle
m=$(delivered security@slop.test slop-report-1@example.test)
check "(b) the report is tagged" sh -c "[ -n '$m' ] && grep -q '^X-Slop-Status: Yes' '$m'"
r=$(ls "$(h mailbox riley@example.test)"/*.eml 2>/dev/null | head -n 1)
rid=$(field "$r" Message-ID | tr -d '<>')
check "(b) the reply is ours: Auto-Submitted: auto-replied" \
    sh -c "[ -n '$r' ] && grep -qx 'Auto-Submitted: auto-replied' '$r'"
line=$(decision "$rid")
echo "  the reply's decision: ${line#*: }"
has() { case "$1" in *"$2"*) return 0 ;; esac; return 1; }
untagged() { [ -n "$1" ] && field "$1" X-Slop-Status | grep -q '^No,'; }
check "(b) the reply passed the milter, known as our own" has "$line" ' own_reply=yes'
check "(b) ... as other mail, nothing found" \
    has "$line" ' kind=other score=0.0 tests=none action=none'
lacks() { ! has "$1" "$2"; }
check "(b) ... and not answered" lacks "$line" ' reply='

check "(b) the reporter gets it untagged (X-Slop-Status: No)" untagged "$r"
check "(b) ... and without [SLOP] in its subject" sh -c "! grep -q '^Subject: \[SLOP\]' '$r'"
check "(b) exactly one mail reached the reporter" [ "$(h count riley@example.test)" -eq 1 ]
check "(b) nothing reached ReplyFrom (the reply was not answered)" \
    [ "$(h count slop-bot@slop.test)" -eq 0 ]

# ---- (c) a token made with another key -------------------------------------------
sed "s/^Message-ID: <\([^>]*\)>/Message-ID: <forged.\1>/" "$r" | grep -v '^Return-Path:\|^Delivered-To:' \
    >"$root/m/forged.eml"
h send "$root/m/forged.eml" fwd@example.test security@slop.test >/dev/null 2>&1
check "(c) a reply with a token that does not check out is delivered" \
    h wait security@slop.test 2 30
line=$(decision "forged.$rid")
echo "  the forged reply's decision: ${line#*: }"
not_ours() {
    [ -n "$1" ] && lacks "$1" own_reply=yes && lacks "$1" ' kind=report' &&
        lacks "$1" ' reply=queued' && lacks "$1" ' reply=sent'
}
check "(c) ... scanned, but not as our own and never as a report" not_ours "$line"

# ---- (d) a genuine report resent by its author, and copied by someone else ------
cat >"$root/m/kasan.eml" <<'EOF'
From: Kim Tester <kim@example.test>
To: security@slop.test
Subject: KASAN: slab-use-after-free Read in tcp_recvmsg_locked
Date: Mon, 30 Nov 2026 10:00:00 +0000
Message-ID: <kasan-1@example.test>
Content-Type: text/plain

Hi,

on v6.12-rc3 (x86_64, defconfig plus KASAN) an unprivileged user
running the attached reproducer hits this within a minute:

BUG: KASAN: slab-use-after-free in tcp_recvmsg_locked+0x1b2/0x1c40
Read of size 4 at addr ffff888104a3c018 by task repro/4121
Call Trace:
 tcp_recvmsg_locked+0x1b2/0x1c40
 tcp_recvmsg+0x124/0x5e0
 inet_recvmsg+0x11c/0x4f0
 sock_recvmsg+0xdf/0x190

The reproducer (repro.c) has one thread in recvmsg(MSG_PEEK) on a
loopback TCP socket while a second thread shuts it down. It does not
happen on v6.11. I have not bisected it yet.

Kim
EOF
sed 's/^Subject: /Subject: Re-send: /; s/^Message-ID: .*/Message-ID: <kasan-2@example.test>/' \
    "$root/m/kasan.eml" >"$root/m/resend.eml"
sed 's/^From: .*/From: Other Finder <other@example.test>/; s/^Message-ID: .*/Message-ID: <kasan-3@example.test>/' \
    "$root/m/kasan.eml" >"$root/m/copy.eml"
before=$(h count security@slop.test)
h send "$root/m/kasan.eml" kim@example.test security@slop.test >/dev/null 2>&1
h wait security@slop.test $((before + 1)) 30 >/dev/null
h send "$root/m/resend.eml" kim@example.test security@slop.test >/dev/null 2>&1
h wait security@slop.test $((before + 2)) 30 >/dev/null
h send "$root/m/copy.eml" other@example.test security@slop.test >/dev/null 2>&1
check "(d) the report, its resend and the copy are delivered" \
    h wait security@slop.test $((before + 3)) 30
settle
for id in kasan-1 kasan-2 kasan-3; do
    echo "  $id: $(field "$(delivered security@slop.test "$id@")" X-Slop-Status)"
done
m=$(delivered security@slop.test kasan-2@)
check "(d) the resend by its author is no DUPLICATE" \
    sh -c "[ -n '$m' ] && ! grep -q 'DUPLICATE' '$m'"
check "(d) ... and not tagged" untagged "$m"
m=$(delivered security@slop.test kasan-3@)
check "(d) the same report from someone else is a DUPLICATE of the first" \
    sh -c "[ -n '$m' ] && grep -q 'DUPLICATE' '$m'"
check "(d) ... which alone does not tag it" \
    sh -c "[ -n '$m' ] && ! grep -q '^X-Slop-Status: Yes' '$m'"
check "(d) nobody was answered for a genuine report" \
    [ "$(h count kim@example.test)" -eq 0 ] && [ "$(h count other@example.test)" -eq 0 ]

echo "$test_name: $passed passed, $failed failed"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
