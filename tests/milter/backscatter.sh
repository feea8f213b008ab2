#!/bin/bash
# No backscatter: the built slop-milter behind a private Postfix on
# 127.0.0.1 (postfix-harness.sh), replies leaving through ReplyTransport
# smtp into the same Postfix, which delivers to files. The daemon runs with
# the default ReplyRequires (authenticated dmarc-pass) and AuthservID (the
# MTA's {j}: the harness's myhostname, mx.slop.test).
# Usage: backscatter.sh SLOP_MILTER RULES_DIR
#
# 60 slop reports, each from a different envelope sender, each with a link
# in its Subject and in a line the findings quote as evidence:
#   1-5    Authentication-Results from mx.slop.test: dmarc=pass for the
#          From: domain, which is the envelope sender's: answered;
#   6-10   the same result under another authserv-id (forged): not answered;
#   11-15  a trusted dmarc=pass for the From: domain, but the envelope
#          sender (where a reply goes) is a third party elsewhere: not
#          answered;
#   16-60  nothing: not answered.
# Expected: exactly 5 replies, to senders 1-5, none carrying a link from the
# mail or anything from it in a header but In-Reply-To/References; 55
# decision lines ending reply=unverified; nothing to a third party.
#
# Skips (exit 77) without root, Postfix or swaks unless
# SLOP_REQUIRE_INTEGRATION is set. Every process started here is stopped by
# its pid; every wait is bounded; only 127.0.0.1 is used.
set -u
bin=$1 rules=$2
here=$(cd "$(dirname "$0")" && pwd)
harness=$here/postfix-harness.sh
msgs=$here/msgs
passed=0 failed=0
t_start=$(date +%s)
test_name=backscatter
# shellcheck source-path=SCRIPTDIR source=testlib.sh
. "$here/testlib.sh"

[ "$(id -u)" -eq 0 ] || skip "needs root (Postfix binds, changes users and owns its queue)"
[ -x /usr/sbin/postfix ] || skip "postfix not found (Debian package postfix)"
command -v swaks >/dev/null 2>&1 || skip "swaks not found (Debian package swaks)"
[ -x "$bin" ] || skip "slop-milter not built"

root=$(mktemp -d "${TMPDIR:-/tmp}/slop-backscatter.XXXXXX") || exit 1
chmod 755 "$root"
mroot=$root/mta
mkdir -p "$mroot" "$root/d" "$root/m"
chmod 755 "$root/d"
daemon_pid=""
sock=$root/d/milter.sock
log=$root/d/daemon.log

h() {
    _hc=$1
    shift
    sh "$harness" "$_hc" "$mroot" "$@"
}

cleanup() {
    stop_daemon
    h stop >/dev/null 2>&1
    remove_workdir "$root" "${SLOP_KEEP_E2E:-}"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

port=$(free_port 24025) || skip "no free port"

write_conf() {
    cat >"$root/d/slop-milter.conf" <<EOF
Socket unix:$sock
SocketMode 0666
Syslog no
RulesDir $rules
StateDir $root/d/state
Recipients security@slop.test
ReplyTransport smtp
SMTPServer 127.0.0.1:$port
ReplyFrom Slop <slop@slop.test>
ReplyInterval 7d
ReplyHourlyCap 1000
EOF
}

mta_up=false
for try in 1 2 3; do
    write_conf
    h init "$port" "$sock" accept >/dev/null || skip "cannot set up postfix"
    if h start; then
        mta_up=true
        break
    fi
    h stop >/dev/null 2>&1
    port=$((port + 1 + try * 13))
done
check "postfix starts on 127.0.0.1:$port" $mta_up
"$bin" -f -c "$root/d/slop-milter.conf" >>"$log" 2>&1 &
daemon_pid=$!
n=0
while ! grep -q 'starting' "$log" 2>/dev/null && [ "$n" -lt 100 ]; do
    sleep 0.1
    n=$((n + 1))
done
check "slop-milter starts with the default ReplyRequires" \
    sh -c "kill -0 $daemon_pid 2>/dev/null && [ -S '$sock' ]"
$mta_up && kill -0 "$daemon_pid" 2>/dev/null || {
    echo "$passed passed, $failed failed"
    exit 1
}

# make_report N ENVELOPE FROM [HEADER...]: report N from ENVELOPE with From: FROM;
# links in the Subject and in the severity line, which a finding quotes.
make_report() {
    _n=$1 _from=$3
    shift 3
    {
        for _l in "$@"; do
            printf '%s\n' "$_l"
        done
        printf 'From: %s\n' "$_from"
        printf 'Subject: Critical report %s https://spam.example/s%s www.spam.example\n' "$_n" "$_n"
        sed -e '/^From:/d' -e '/^Subject:/d' \
            -e "s/^Message-ID: <\([^@]*\)@/Message-ID: <\1.bs$_n@/" \
            -e 's|^- \*\*Severity:\*\* Critical|- **Severity:** Critical, details at https://spam.example/e and spam.example/x|' \
            "$msgs/slop-report.eml"
    } >"$root/m/r$_n.eml"
}

for i in $(seq 1 60); do
    if [ "$i" -le 5 ]; then
        env=verified$i@example.test
        make_report "$i" "$env" "Verified $i <$env>" \
            "Authentication-Results: mx.slop.test; dkim=pass header.d=example.test; dmarc=pass (p=reject dis=none) header.from=example.test"
    elif [ "$i" -le 10 ]; then
        env=forged-ar$i@example.test
        make_report "$i" "$env" "Forged $i <$env>" \
            "Authentication-Results: mx.evil.test; dmarc=pass (p=reject) header.from=example.test"
    elif [ "$i" -le 15 ]; then
        env=third$i@lists.test
        make_report "$i" "$env" "Attacker <attacker$i@example.test>" \
            "Authentication-Results: mx.slop.test; dmarc=pass header.from=example.test"
    else
        env=victim$i@example.test
        make_report "$i" "$env" "Victim $i <$env>"
    fi
    h send "$root/m/r$i.eml" "$env" security@slop.test >/dev/null 2>&1 ||
        echo "  send $i from $env: status $?"
done
h wait verified5@example.test 1 30 >/dev/null 2>&1
h settle 30 >/dev/null 2>&1
sleep 2
h settle 30 >/dev/null 2>&1

decisions=$(grep -c ' result=' "$log")
unverified=$(grep -c ' reply=unverified$' "$log")
queued=$(grep -c ' reply=queued$' "$log")
replies=$(grep -rlx 'Auto-Submitted: auto-replied' "$mroot/mail" 2>/dev/null | sort)
n_replies=$(printf '%s' "$replies" | grep -c .)
echo "  decisions=$decisions reply=queued:$queued reply=unverified:$unverified replies=$n_replies"
check "60 decisions logged" [ "$decisions" -eq 60 ]
check "55 reply=unverified" [ "$unverified" -eq 55 ]
check "5 reply=queued" [ "$queued" -eq 5 ]
check "exactly 5 replies delivered" [ "$n_replies" -eq 5 ]
for i in 1 2 3 4 5; do
    check "verified$i (trusted dmarc=pass) got one reply" \
        [ "$(h count verified$i@example.test)" -eq 1 ]
done
third=0
for i in $(seq 6 60); do
    for a in forged-ar$i@example.test third$i@lists.test victim$i@example.test \
        attacker$i@example.test; do
        third=$((third + $(h count "$a")))
    done
done
check "no mail at all to the 55 others (forged, misaligned, plain)" [ "$third" -eq 0 ]
for i in 6 11 16 60; do
    check "sender $i: decision reply=unverified" \
        sh -c "grep -F ' message-id=<20260311164000.slop-report-1.bs$i@example.test> ' '$log' | grep -q ' reply=unverified$'"
done

# What a reply may carry: no link from the mail, nothing from it in a
# header but In-Reply-To and References of the original Message-ID.
for f in $replies; do
    b=$(basename "$(dirname "$f")")
    check "$b: no link from the mail" sh -c "! grep -qi 'spam\\.example' '$f'"
    check "$b: links shown as removed" grep -q 'link removed' "$f"
    check "$b: Subject is the reply's own" \
        grep -qx 'Subject: Automatic reply: details missing from your message' "$f"
    head=$(sed '/^$/q' "$f")
    check "$b: In-Reply-To is the original Message-ID" \
        sh -c "printf '%s\n' '$head' | grep -qx 'In-Reply-To: <20260311164000.slop-report-1.bs[1-5]@example.test>'"
    check "$b: no header mentions the report" sh -c "! printf '%s\n' '$head' | grep -qi 'critical'"
done
quoted_subject() {
    grep -rq '^with the subject "Critical report [1-5] \[link removed\] \[link removed\]"\.$' \
        "$mroot/mail"
}
check "the quoted subject is shown without its links" quoted_subject
check "nothing deferred or held" [ "$(h queue 'deferred hold')" -eq 0 ]
check "daemon still running" kill -0 "$daemon_pid"
check "no sanitizer or assertion report" sh -c "! grep -Eq 'AddressSanitizer|runtime error|Assertion' '$log'"

echo "backscatter: $(($(date +%s) - t_start)) s"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
