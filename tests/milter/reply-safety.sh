#!/bin/bash
# Automatic-reply safety of the built slop-milter, end to end: two daemon
# instances (A and B) chained in one private Postfix on 127.0.0.1, replies
# leaving through ReplyTransport smtp into that Postfix, which delivers to
# files (postfix-harness.sh).
# Usage: reply-safety.sh SLOP_MILTER MILTER_LOAD RULES_DIR
#
# Covers:
#  (a) 50 slop messages from one envelope sender over 20 concurrent milter
#      connections straight to A (milter-load): exactly one reply
#      delivered, 49 "reply=recent" in A's log; 20 more from the same
#      address in other letter case: no reply;
#  (b) a loop through two instances: b@ (protected by B) writes to a@
#      (protected by A); A's reply reaches b@ through B, which must not
#      answer it; the reply re-sent by a forwarder with a real envelope
#      sender must not be answered either;
#  (c) suppression: null sender (direct), Auto-Submitted (auto-generated,
#      auto-replied), Precedence bulk/list/junk, List-* headers,
#      X-Auto-Response-Suppress, system senders, our own addresses; each
#      with its reason in the log and no reply delivered; positive controls
#      (a plain sender, Auto-Submitted: no) do get their one reply;
#  (d) header injection: CR/LF in the envelope sender (direct), lone CR in
#      Subject and Message-ID (direct), RFC 2047 B and Q encoded CRLF in the
#      Subject, encoded and folded Message-IDs, a 300-byte local part, a
#      long valid address, a 5000-byte Subject; every reply delivered has
#      only the header fields a reply has, one To: (the sender), no Bcc:/Cc:,
#      no line over 998 bytes; nothing reaches the victim's mailbox.
#
# Skips (exit 77) without root, Postfix, swaks or python3 unless
# SLOP_REQUIRE_INTEGRATION is set. Every process started here is stopped by
# its pid; every loop is bounded; only 127.0.0.1 is used.
set -u
bin=$1 load=$2 rules=$3
here=$(cd "$(dirname "$0")" && pwd)
harness=$here/postfix-harness.sh
msgs=$here/msgs
passed=0 failed=0
t_start=$(date +%s)
test_name=reply-safety
# shellcheck source-path=SCRIPTDIR source=testlib.sh
. "$here/testlib.sh"

[ "$(id -u)" -eq 0 ] || skip "needs root (Postfix binds, changes users and owns its queue)"
[ -x /usr/sbin/postfix ] || skip "postfix not found (Debian package postfix)"
command -v swaks >/dev/null 2>&1 || skip "swaks not found (Debian package swaks)"
command -v python3 >/dev/null 2>&1 || skip "python3 not found (Debian package python3)"
[ -x "$bin" ] && [ -x "$load" ] || skip "slop-milter or milter-load not built"

root=$(mktemp -d "${TMPDIR:-/tmp}/slop-reply-safety.XXXXXX") || exit 1
chmod 755 "$root"
mroot=$root/mta
mkdir -p "$mroot" "$root/a" "$root/b" "$root/load" "$root/m"
chmod 755 "$root/a" "$root/b"
pid_a="" pid_b=""

h() {
    local hc=$1
    shift
    sh "$harness" "$hc" "$mroot" "$@"
}

cleanup() {
    stop_pid "$pid_a"
    stop_pid "$pid_b"
    pid_a="" pid_b=""
    h stop >/dev/null 2>&1
    remove_workdir "$root" "${SLOP_KEEP_E2E:-}"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# A free loopback port (a scan range apart from e2e.sh's and load.sh's).
port=$(free_port 23025) || skip "no free port"

# write_conf NAME RECIPIENTS REPLY_FROM THRESHOLD
write_conf() {
    local d=$root/$1
    cat >"$d/slop-milter.conf" <<EOF
Socket unix:$d/milter.sock
SocketMode 0666
Syslog no
RulesDir $rules
StateDir $d/state
PidFile $d/slop-milter.pid
Recipients $2
ReplyTransport smtp
SMTPServer 127.0.0.1:$port
ReplyFrom $3
ReplyRequires any
ReplyInterval 7d
ReplyHourlyCap 1000
SubjectTag [SLOP]
TagThreshold $4
ReplyThreshold $4
EOF
}

# start_daemon NAME: prints the pid; waits for the log line of the start.
start_daemon() {
    local d=$root/$1 n=0 p
    "$bin" -f -c "$d/slop-milter.conf" >>"$d/daemon.log" 2>&1 &
    p=$!
    while ! grep -q 'starting' "$d/daemon.log" 2>/dev/null && [ "$n" -lt 100 ]; do
        sleep 0.1
        n=$((n + 1))
    done
    kill -0 "$p" 2>/dev/null && [ -S "$d/milter.sock" ] || return 1
    echo "$p"
}

sock_a=$root/a/milter.sock
sock_b=$root/b/milter.sock
log_a=$root/a/daemon.log
log_b=$root/b/daemon.log

# The decision line of each message sent from envelope sender $2, in log $1.
decisions() {
    grep -F " from=<$2> " "$1" | grep -F ' result='
}

# Count decisions of sender $2 in log $1 ending in reply=$3.
reply_notes() {
    decisions "$1" "$2" | grep -c " reply=$3\$"
}

# Automatic replies delivered to $1 (its mailbox may hold other mail).
replies_to() {
    grep -lx 'Auto-Submitted: auto-replied' "$(h mailbox "$1")"/*.eml 2>/dev/null | wc -l
}

# Every delivered automatic reply (the harness keeps one file per message
# and recipient).
all_replies() {
    grep -rlx 'Auto-Submitted: auto-replied' "$mroot/mail" 2>/dev/null | sort
}

# Give the reply sender and Postfix time to deliver (or not) what they
# would: the queue empty and a quiet second.
settle() {
    h settle 20 >/dev/null 2>&1
    sleep 2
    h settle 20 >/dev/null 2>&1
}

# check_reply_headers FILE SENDER: the header section of a delivered reply
# holds only the fields a reply has (plus the ones the MTA adds), To: once
# and equal to the sender, no Bcc:/Cc:, no bare CR, no line over 998 bytes.
check_reply_headers() {
    python3 - "$1" "$2" <<'EOF'
import re, sys
path, sender = sys.argv[1], sys.argv[2]
data = open(path, 'rb').read()
head = data.split(b'\n\n', 1)[0]
bad = []
if b'\r' in head:
    bad.append('CR in the header section')
allowed = {'return-path', 'delivered-to', 'received', 'from', 'to', 'subject', 'date',
           'message-id', 'in-reply-to', 'references', 'auto-submitted',
           'x-auto-response-suppress', 'mime-version', 'content-type',
           'content-transfer-encoding'}
once = {'from', 'to', 'subject', 'date', 'message-id', 'auto-submitted', 'mime-version',
        'content-type', 'content-transfer-encoding', 'in-reply-to', 'references'}
fields = []
for line in head.split(b'\n'):
    if len(line) > 998:
        bad.append('line of %d bytes' % len(line))
    if line[:1] in (b' ', b'\t'):
        if not fields:
            bad.append('continuation first')
        else:
            fields[-1][1] += b' ' + line.strip()
        continue
    m = re.match(rb'^([!-9;-~]+):(.*)$', line)
    if not m:
        bad.append('not a header line: %r' % line[:80])
        continue
    fields.append([m.group(1).decode('latin-1').lower(), m.group(2).strip()])
names = [f[0] for f in fields]
for n in names:
    # X-Slop-*: added by the instance that scanned the reply on its way in.
    if n not in allowed and not n.startswith('x-slop-'):
        bad.append('unexpected field %s' % n)
for n in once:
    if names.count(n) > 1:
        bad.append('%d %s fields' % (names.count(n), n))
for n in ('from', 'to', 'subject', 'message-id', 'auto-submitted'):
    if n not in names:
        bad.append('no %s' % n)
tos = [v for n, v in fields if n == 'to']
if tos and tos[0].decode('latin-1').lower() != '<%s>' % sender.lower():
    bad.append('To: is %r' % tos[0][:80])
if len(fields) > 25:
    bad.append('%d header fields' % len(fields))
if bad:
    print('  %s: %s' % (path, '; '.join(bad)))
    sys.exit(1)
EOF
}

# The checker itself must fail on what it looks for: a well-formed reply
# passes, the same with an injected Bcc:, a second To:, a bare CR, or an
# overlong line does not.
good_reply() {
    printf 'Return-Path: <>\nFrom: Slop A <slop-a@slop.test>\nTo: <s@example.test>\n'
    printf 'Subject: Re: x\nDate: Thu, 1 Jan 2026 00:00:00 +0000\nMessage-ID: <slop.1@vm>\n'
    printf "$1"
    printf 'Auto-Submitted: auto-replied\nMIME-Version: 1.0\n\nHello\nBcc: body text is fine\n'
}
checker_selftest() {
    good_reply '' >"$root/m/self-good.eml"
    good_reply 'Bcc: victim@slop.test\n' >"$root/m/self-bcc.eml"
    good_reply 'To: victim@slop.test\n' >"$root/m/self-to.eml"
    good_reply 'Received: a\rBcc: victim@slop.test\n' >"$root/m/self-cr.eml"
    good_reply "Received: $(head -c 1200 /dev/zero | tr '\0' 'z')\n" >"$root/m/self-long.eml"
    check_reply_headers "$root/m/self-good.eml" s@example.test || return 1
    for f in bcc to cr long; do
        check_reply_headers "$root/m/self-$f.eml" s@example.test >/dev/null && return 1
    done
    return 0
}
check "the header checker passes a good reply and fails 4 bad ones" checker_selftest

# ---- start ---------------------------------------------------------------------
write_conf a "security@slop.test, a@slop.test" "Slop A <slop-a@slop.test>" 5
write_conf b "b@slop.test" "Slop B <slop-b@slop.test>" 0.5
mta_up=false
for try in 1 2 3; do
    h init "$port" "$sock_a" accept >/dev/null || skip "cannot set up postfix"
    # Both instances see every message, A first, locally submitted mail too.
    h set "smtpd_milters=unix:$sock_a unix:$sock_b" >/dev/null
    if h start; then
        mta_up=true
        break
    fi
    h stop >/dev/null 2>&1
    port=$((port + 1 + try * 13))
    write_conf a "security@slop.test, a@slop.test" "Slop A <slop-a@slop.test>" 5
    write_conf b "b@slop.test" "Slop B <slop-b@slop.test>" 0.5
done
check "postfix starts on 127.0.0.1:$port" $mta_up
pid_a=$(start_daemon a) || pid_a=""
pid_b=$(start_daemon b) || pid_b=""
check "instance A starts" [ -n "$pid_a" ]
check "instance B starts" [ -n "$pid_b" ]
[ -n "$pid_a" ] && [ -n "$pid_b" ] && $mta_up || {
    echo "$passed passed, $failed failed"
    exit 1
}

# ---- (a) one sender, 50 messages, 20 connections --------------------------------
for i in $(seq 1 50); do
    variant "$msgs/slop-patch.eml" "$root/load/m$i.eml" "load$i"
done
sender=casey-load@example.test
out=$("$load" -c 20 -n 50 -t 120 -f "$sender" -R security@slop.test "unix:$sock_a" "$root/load" 2>&1)
echo "  milter-load: $out"
check "(a) 50 messages over 20 connections, no errors" \
    sh -c "printf '%s' '$out' | grep -q 'messages=50 ' && printf '%s' '$out' | grep -q ' errors=0'"
check "(a) reply delivered" h wait "$sender" 1 30
settle
n=$(h count "$sender")
recent=$(reply_notes "$log_a" "$sender" recent)
queued=$(reply_notes "$log_a" "$sender" queued)
scanned=$(decisions "$log_a" "$sender" | wc -l)
echo "  (a) decisions=$scanned queued=$queued recent=$recent replies delivered=$n"
check "(a) 50 decisions logged" [ "$scanned" -eq 50 ]
check "(a) exactly one reply delivered" [ "$n" -eq 1 ]
check "(a) exactly one reply=queued" [ "$queued" -eq 1 ]
check "(a) 49 reply=recent" [ "$recent" -eq 49 ]
check "(a) one 'reply ... sent' line" [ "$(grep -c "reply to <$sender> sent" "$log_a")" -eq 1 ]
r=$(ls "$(h mailbox "$sender")"/*.eml 2>/dev/null | head -n 1)
[ -n "$r" ] && check "(a) the reply's headers are sane" check_reply_headers "$r" "$sender"

# The ledger ignores the case of the address.
upper=Casey-Load@EXAMPLE.test
out=$("$load" -c 20 -n 20 -t 120 -f "$upper" -R security@slop.test "unix:$sock_a" "$root/load" 2>&1)
settle
check "(a) same sender in other case, 20 connections: 20 reply=recent" \
    [ "$(reply_notes "$log_a" "$upper" recent)" -eq 20 ]
check "(a) still exactly one reply" [ "$(h count "$sender")" -eq 1 ]

# ---- (c) suppression ------------------------------------------------------------------
# suppressed SENDER REASON [HEADER...]: sent through Postfix to security@.
suppressed_case() {
    local s=$1 reason=$2 tag
    shift 2
    tag=$(printf '%s' "$s" | tr -c 'a-zA-Z0-9' '-')
    variant "$msgs/slop-patch.eml" "$root/m/$tag.eml" "$tag" "$@"
    h send "$root/m/$tag.eml" "$s" security@slop.test >/dev/null 2>&1
    sup_cases="$sup_cases $s=$reason"
}
sup_cases=""
suppressed_case auto-gen@example.test auto-submitted "Auto-Submitted: auto-generated"
suppressed_case auto-rep@example.test auto-submitted "Auto-Submitted: auto-replied (vacation)"
suppressed_case bulk@example.test precedence "Precedence: bulk"
suppressed_case prec-list@example.test precedence "Precedence: list"
suppressed_case prec-junk@example.test precedence "Precedence: junk"
suppressed_case list-id@example.test list-header "List-Id: Foo development <foo-dev.lists.test>"
suppressed_case list-unsub@example.test list-header "List-Unsubscribe: <mailto:foo-leave@lists.test>"
suppressed_case list-post@example.test list-header "List-Post: <mailto:foo@lists.test>"
suppressed_case xars@example.test auto-response-suppress "X-Auto-Response-Suppress: OOF, AutoReply"
suppressed_case mailer-daemon@example.test system-sender
suppressed_case owner-foo@example.test system-sender
suppressed_case foo-request@example.test system-sender
suppressed_case noreply@example.test system-sender
suppressed_case foo-bounces+x=y@lists.test system-sender
suppressed_case slop-a@slop.test own-address
suppressed_case SECURITY@slop.test own-address
# Positive controls: the same message from a plain sender, and with
# Auto-Submitted: no, is answered (once), so the cases above can fail.
variant "$msgs/slop-patch.eml" "$root/m/ctl.eml" ctl1
h send "$root/m/ctl.eml" control@example.test security@slop.test >/dev/null 2>&1
variant "$msgs/slop-patch.eml" "$root/m/asno.eml" asno "Auto-Submitted: no"
h send "$root/m/asno.eml" as-no@example.test security@slop.test >/dev/null 2>&1
# Null sender straight to the daemon (Postfix's own <> case is in e2e.sh).
out=$("$load" -c 2 -n 4 -f "" -R security@slop.test "unix:$sock_a" "$root/load/m1.eml" 2>&1)
check "(c) null sender direct: 4 messages, no errors" \
    sh -c "printf '%s' '$out' | grep -q 'messages=4 ' && printf '%s' '$out' | grep -q ' errors=0'"
check "(c) control sender gets a reply" h wait control@example.test 1 30
check "(c) Auto-Submitted: no gets a reply" h wait as-no@example.test 1 30
settle
for c in $sup_cases; do
    s=${c%=*} reason=${c##*=}
    lower=$(printf '%s' "$s" | tr 'A-Z' 'a-z')
    got=$(decisions "$log_a" "$s" | sed -n 's/.* reply=\([^ ]*\)$/\1/p' | head -n 1)
    check "(c) $s: reply=suppressed:$reason (got ${got:-none})" [ "$got" = "suppressed:$reason" ]
    check "(c) $s: no reply delivered" [ "$(replies_to "$lower")" -eq 0 ]
done
check "(c) null sender: 4x reply=suppressed:null-sender" [ "$(reply_notes "$log_a" "" suppressed:null-sender)" -eq 4 ]
check "(c) control: exactly one reply" [ "$(h count control@example.test)" -eq 1 ]
check "(c) Auto-Submitted: no: exactly one reply" [ "$(h count as-no@example.test)" -eq 1 ]

# ---- (b) a loop through two instances -------------------------------------------------
a0=$(h count a@slop.test)
variant "$msgs/slop-patch.eml" "$root/m/loop.eml" loop1
h send "$root/m/loop.eml" b@slop.test a@slop.test >/dev/null 2>&1
check "(b) b@ -> a@ accepted" [ $? -eq 0 ]
check "(b) A's reply reaches b@ (through B)" h wait b@slop.test 1 30
settle
sleep 2
settle
nb=$(h count b@slop.test)
na=$(h count a@slop.test)
echo "  (b) a@ mailbox=$na (was $a0) b@ mailbox=$nb"
check "(b) a@ got the original only (no reply to the reply)" [ "$na" -eq $((a0 + 1)) ]
check "(b) b@ got exactly one message, the reply" [ "$nb" -eq 1 ]
check "(b) A queued exactly one reply to b@" [ "$(reply_notes "$log_a" b@slop.test queued)" -eq 1 ]
rb=$(ls "$(h mailbox b@slop.test)"/*.eml 2>/dev/null | head -n 1)
check "(b) the message b@ got is A's auto-reply" grep -qx 'Auto-Submitted: auto-replied' "${rb:-/dev/null}"
# B scanned the reply (b@ is its recipient) and did not queue a reply.
rmid=$(sed -n '/^$/q; s/^Message-ID: *//Ip' "${rb:-/dev/null}" | head -n 1)
bline=""
[ -n "$rmid" ] && bline=$(grep -F " from=<> message-id=$rmid " "$log_b" | grep -F ' result=' | tail -n 1)
echo "  (b) B's decision on the reply: ${bline:-none}"
check "(b) B scanned A's reply" [ -n "$bline" ]
check "(b) B queued no reply at all" [ "$(grep -c ' reply=queued$' "$log_b")" -eq 0 ]
# A forwarder that rewrites the envelope sender (SRS, a .forward) hands
# B the same reply with a real address: Auto-Submitted still stops it.
if [ -n "$rb" ]; then
    sed '/^Return-Path:/d; /^Delivered-To:/d' "$rb" >"$root/m/fwd.eml"
    h send "$root/m/fwd.eml" fwd-a@slop.test b@slop.test >/dev/null 2>&1
    check "(b) forwarded reply accepted" [ $? -eq 0 ]
    h wait b@slop.test 2 30
    settle
    fline=$(decisions "$log_b" fwd-a@slop.test | tail -n 1)
    echo "  (b) B's decision on the forwarded reply: ${fline:-none}"
    check "(b) B does not answer the forwarded reply" [ "$(h count fwd-a@slop.test)" -eq 0 ]
    case "$fline" in
    *" reply="*) check "(b) ... and says why (auto-submitted)" \
        sh -c "printf '%s' '$fline' | grep -q 'reply=suppressed:auto-submitted$'" ;;
    esac
fi

# ---- (d) header injection --------------------------------------------------------------
b64() { printf "$1" | base64 -w0; }
inj_cases=""
inj_case() { # inj_case SENDER EXPECT(reply|none) HEADER...
    local s=$1 expect=$2 tag
    shift 2
    tag=$(printf '%s' "$s" | tr -c 'a-zA-Z0-9' '-' | cut -c1-60)
    {
        for line in "$@"; do
            printf '%s\n' "$line"
        done
        sed -e '/^Subject:/d' -e '/^Message-ID:/d' "$msgs/slop-patch.eml"
    } >"$root/m/inj-$tag.eml"
    grep -qi '^Message-ID:' "$root/m/inj-$tag.eml" ||
        sed -i "1i Message-ID: <inj.$tag@example.test>" "$root/m/inj-$tag.eml"
    grep -qi '^Subject:' "$root/m/inj-$tag.eml" ||
        sed -i "1i Subject: [PATCH] net/foo: fix lock handling" "$root/m/inj-$tag.eml"
    h send "$root/m/inj-$tag.eml" "$s" security@slop.test >/dev/null 2>&1
    check "(d) $s: accepted" [ $? -eq 0 ]
    inj_cases="$inj_cases $s=$expect"
}
crlf_bcc='x\r\nBcc: victim@slop.test\r\nTo: victim@slop.test'
inj_case subj-b@example.test reply "Subject: =?utf-8?b?$(b64 "$crlf_bcc")?="
inj_case subj-q@example.test reply \
    "Subject: =?utf-8?q?x=0D=0ABcc:_victim@slop.test=0D=0ATo:_victim@slop.test?="
inj_case subj-mix@example.test reply \
    "Subject: [PATCH] =?utf-8?b?$(b64 'caf\303\251\r\nBcc: victim@slop.test')?= tail"
inj_case mid-b@example.test reply \
    "Message-ID: =?utf-8?b?$(b64 '<a@example.test>\r\nBcc: victim@slop.test')?="
inj_case mid-in@example.test reply \
    "Message-ID: <x=?utf-8?b?$(b64 '\r\nBcc: victim@slop.test')?=@example.test>"
inj_case mid-fold@example.test reply "Message-ID: <fold.1@example.test" " Bcc: victim@slop.test>"
inj_case mid-fold2@example.test reply "Message-ID:" " <fold.2@example.test>"
long_subj="[PATCH] $(head -c 5000 /dev/zero | tr '\0' 'a')"
inj_case subj-long@example.test reply "Subject: $long_subj"
long_mid="<$(head -c 400 /dev/zero | tr '\0' 'm')@example.test>"
inj_case mid-long@example.test reply "Message-ID: $long_mid"
# Usable but long: 200-byte local part (213 bytes in all).
lp200=$(head -c 200 /dev/zero | tr '\0' 'l')
inj_case "$lp200@example.test" reply
# Too long to answer: 300-byte local part.
lp300=$(head -c 300 /dev/zero | tr '\0' 'k')
inj_case "$lp300@example.test" none

# Straight to the daemon: what SMTP cannot carry. CR/LF in the envelope
# sender, a lone CR inside Subject and Message-ID.
env_crlf=$'env-inj@example.test\r\nBcc: victim@slop.test'
out=$("$load" -n 1 -f "$env_crlf" -R security@slop.test "unix:$sock_a" "$root/load/m2.eml" 2>&1)
check "(d) CRLF in the envelope sender: scanned" sh -c "printf '%s' '$out' | grep -q ' errors=0'"
env_lf=$'env-lf@example.test\nTo: victim@slop.test'
out=$("$load" -n 1 -f "$env_lf" -R security@slop.test "unix:$sock_a" "$root/load/m3.eml" 2>&1)
check "(d) LF in the envelope sender: scanned" sh -c "printf '%s' '$out' | grep -q ' errors=0'"
{
    printf 'Subject: [PATCH] x\rBcc: victim@slop.test\rTo: victim@slop.test\n'
    printf 'Message-ID: <cr.1@example.test>\rBcc: victim@slop.test\n'
    sed -e '/^Subject:/d' -e '/^Message-ID:/d' "$msgs/slop-patch.eml"
} >"$root/m/cr.eml"
out=$("$load" -n 1 -f cr-inj@example.test -R security@slop.test "unix:$sock_a" "$root/m/cr.eml" 2>&1)
check "(d) lone CR in Subject/Message-ID: scanned" sh -c "printf '%s' '$out' | grep -q ' errors=0'"
inj_cases="$inj_cases cr-inj@example.test=reply"

settle
for c in $inj_cases; do
    s=${c%=*} expect=${c##*=}
    short=$(printf '%s' "$s" | cut -c1-40)
    n=$(h count "$s")
    if [ "$expect" = reply ]; then
        check "(d) $short: one reply" [ "$n" -eq 1 ]
        f=$(ls "$(h mailbox "$s")"/*.eml 2>/dev/null | head -n 1)
        [ -n "$f" ] && check "(d) $short: reply headers sane" check_reply_headers "$f" "$s"
    else
        check "(d) $short: no reply" [ "$n" -eq 0 ]
        # The log caps the address it shows: match its beginning.
        check "(d) $short: reply=suppressed:bad-sender" \
            [ "$(grep -F " from=<$short" "$log_a" | grep -c ' reply=suppressed:bad-sender$')" -eq 1 ]
    fi
done
# The payload did reach the renderer (decoded), as one line of quoted data
# in the body; the Subject: of the reply carries nothing from the mail.
for s in subj-b@example.test subj-q@example.test; do
    f=$(ls "$(h mailbox "$s")"/*.eml 2>/dev/null | head -n 1)
    check "(d) $s: the reply's Subject is its own" \
        grep -qx 'Subject: Automatic reply: details missing from your message' "${f:-/dev/null}"
    check "(d) $s: decoded CRLF became a space inside the quoted subject" \
        grep -q '^with the subject "x Bcc: victim@slop.test To: victim@slop.test"\.$' "${f:-/dev/null}"
done
for s in 'env-inj@example.test??Bcc:?victim@slop.test' 'env-lf@example.test?To:?victim@slop.test'; do
    check "(d) $s: reply=suppressed:bad-sender" \
        [ "$(reply_notes "$log_a" "$s" suppressed:bad-sender)" -eq 1 ]
done

# ---- everything together -------------------------------------------------------------------
check "victim@ never got mail" [ "$(h count victim@slop.test)" -eq 0 ]
total=$(all_replies | wc -l)
bad=0
for f in $(all_replies); do
    rcpt=$(basename "$(dirname "$f")")
    check_reply_headers "$f" "$rcpt" || bad=$((bad + 1))
done
# (a) 1, (c) 2 controls, (b) 1, (d) 11 answered + 1 forwarded copy of A's
# reply in b@'s mailbox.
echo "  replies delivered in all: $total"
check "every delivered reply has sane headers" [ "$bad" -eq 0 ]
check "replies in all: 16 (1 + 2 + 1 + 1 forwarded + 11)" [ "$total" -eq 16 ]
check "nothing deferred or held" [ "$(h queue 'deferred hold')" -eq 0 ]
check "daemon A still running" kill -0 "$pid_a"
check "daemon B still running" kill -0 "$pid_b"
check "no sanitizer or assertion report" sh -c "! grep -Eq 'AddressSanitizer|runtime error|Assertion' '$log_a' '$log_b'"

echo "reply-safety: $(($(date +%s) - t_start)) s"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
