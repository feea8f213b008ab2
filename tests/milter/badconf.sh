#!/bin/sh
# Bad configuration: each kind of mistake stops `slop-milter -n -c FILE`
# with EX_CONFIG (78) and one line naming the file, the line and the reason.
# Usage: badconf.sh SLOP_MILTER RULES_DIR
set -u
bin=$1 rules=$2
work=$(mktemp -d "${TMPDIR:-/tmp}/slop-badconf.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT INT TERM
passed=0 failed=0

# case NAME WANT_EXIT PATTERN CONFIG_TEXT: PATTERN is an extended regex
# matched against stderr, with @CONF@ standing for the configuration path.
case_() {
    name=$1 want=$2 pattern=$3 text=$4
    conf=$work/$name.conf
    printf '%b' "$text" >"$conf"
    "$bin" -n -c "$conf" >"$work/out" 2>"$work/err"
    rc=$?
    re=$(printf '%s' "$pattern" | sed "s|@CONF@|$conf|g; s|@WORK@|$work|g")
    if [ "$rc" -eq "$want" ] && grep -Eq -- "$re" "$work/err" &&
        [ "$(wc -l <"$work/err")" -le 2 ]; then
        passed=$((passed + 1))
        echo "ok: $name"
    else
        failed=$((failed + 1))
        echo "FAIL: $name: exit $rc (want $want), stderr:"
        sed 's/^/    /' "$work/err"
        echo "    wanted /$re/"
    fi
}

R="RulesDir $rules\n"

case_ unknown-key 78 '^slop-milter: @CONF@:2: unknown key .Frobnicate.$' "${R}Frobnicate yes\n"
case_ bad-number 78 '@CONF@:2: TagThreshold: bad number .abc.' "${R}TagThreshold abc\n"
case_ number-out-of-range 78 '@CONF@:3: TagThreshold: 5000 is out of range' \
    "${R}# a comment and a blank line do not shift line numbers\nTagThreshold 5000\n"
case_ thresholds-not-rising 78 '@CONF@:3: ReplyThreshold .* below TagThreshold' \
    "${R}TagThreshold 9\nReplyThreshold 6\n"
case_ bad-socket 78 '@CONF@:2: Socket: bad socket .tcp:25.' "${R}Socket tcp:25\n"
case_ bad-socket-port 78 '@CONF@:2: Socket: bad socket .inet:99999@127.0.0.1.' \
    "${R}Socket inet:99999@127.0.0.1\n"
case_ bad-socket-mode 78 '@CONF@:2: SocketMode: bad octal number .999.' "${R}SocketMode 999\n"
case_ bad-mode 78 '@CONF@:2: Mode: bad value .enforcing. \(use enforce or monitor\)' \
    "${R}Mode enforcing\n"
case_ bad-action 78 '@CONF@:2: OnTimeout: bad value .explode.' "${R}OnTimeout explode\n"
case_ bad-internal-error-action 78 '@CONF@:2: OnInternalError: bad value .drop.' \
    "${R}OnInternalError drop\n"
case_ bad-boolean 78 '@CONF@:2: Syslog: bad boolean .maybe.' "${R}Syslog maybe\n"
case_ bad-duration 78 '@CONF@:2: ReplyInterval: bad duration .3x.' "${R}ReplyInterval 3x\n"
case_ bad-requires 78 '@CONF@:2: ReplyRequires: bad value .dmarc-maybe.' \
    "${R}ReplyRequires authenticated dmarc-maybe\n"
case_ bad-size 78 '@CONF@:2: MaxMessageSize: bad size .10Q.' "${R}MaxMessageSize 10Q\n"
case_ bad-address 78 '@CONF@:2: Recipients: bad address .security@.' "${R}Recipients security@\n"
case_ bad-network 78 '@CONF@:2: PeerList: bad host or network .10.0.0.0/99.' \
    "${R}PeerList 10.0.0.0/99\n"
case_ bad-smtp-server 78 '@CONF@:2: SMTPServer: bad address .nowhere.' "${R}SMTPServer nowhere\n"
case_ duplicate-key 78 '@CONF@:3: duplicate key .Mode. \(first set at line 2\)' \
    "${R}Mode monitor\nMode enforce\n"
case_ missing-value 78 '@CONF@:2: missing value for .Mode.' "${R}Mode\n"
case_ unknown-user 67 'UserID: no user .slop-no-such-user.' "${R}UserID slop-no-such-user\n"
# A profile that no rule file names is a typo: the kernel's rules would
# be off without a word.
case_ unknown-profile 78 'unknown profile .linux.: no rule file names it' "${R}Project linux\n"
case_ relative-path 78 '@CONF@:1: RulesDir: .relative/rules. is not an absolute path' \
    "RulesDir relative/rules\n"

# Paths the daemon needs after start-up: -n must not say OK without them.
case_ missing-sendmail 78 "SendmailPath .@WORK@/no-sendmail.: No such file or directory" \
    "${R}SendmailPath $work/no-sendmail\n"
printf 'not a program\n' >"$work/not-executable"
chmod 644 "$work/not-executable"
case_ sendmail-not-executable 78 "SendmailPath .@WORK@/not-executable.: not an executable file" \
    "${R}SendmailPath $work/not-executable\n"
case_ state-parent-missing 73 "StateDir .@WORK@/no/such/state.: its parent .@WORK@/no/such. is not a directory" \
    "${R}StateDir $work/no/such/state\n"

# Files the configuration points at.
"$bin" -n -c "$work/nonexistent.conf" >/dev/null 2>"$work/err"
rc=$?
if [ "$rc" -eq 78 ] && grep -q "nonexistent.conf: cannot open: No such file or directory" "$work/err"; then
    passed=$((passed + 1))
    echo "ok: missing-config-file"
else
    failed=$((failed + 1))
    echo "FAIL: missing-config-file: exit $rc"
    cat "$work/err"
fi

case_ missing-rules-dir 78 '@WORK@/no-such-rules.*No such file or directory' \
    "RulesDir $work/no-such-rules\n"

mkdir -p "$work/badrules"
printf 'rule GOOD\n    describe fine\n    score 1\n    match body /x/\n\nrule lower_case\n    describe bad\n    score 1\n    match body /y/\n' \
    >"$work/badrules/10-x.rules"
case_ bad-rule-file 78 '@WORK@/badrules/10-x.rules:6: bad rule name .lower_case.' \
    "RulesDir $work/badrules\n"

case_ missing-template 78 '@WORK@/no-such.tmpl.*No such file or directory' \
    "${R}ReplyTemplate $work/no-such.tmpl\n"
printf 'Hello,\n\nyour message {message_id} lacks:\n{nosuch}\n' >"$work/bad.tmpl"
case_ bad-template 78 "@WORK@/bad.tmpl:4: unknown placeholder '\{nosuch\}'" \
    "${R}ReplyTemplate $work/bad.tmpl\n"
printf 'Hello {subject\n' >"$work/unterminated.tmpl"
case_ unterminated-template 78 '@WORK@/unterminated.tmpl:1: unterminated placeholder' \
    "${R}ReplyTemplate $work/unterminated.tmpl\n"

# And a good file passes, so the cases above fail for their mistake only.
printf '%b' "${R}Mode monitor\nTagThreshold 4\nSubjectTag [SLOP]\n" >"$work/good.conf"
if "$bin" -n -c "$work/good.conf" >/dev/null 2>"$work/err"; then
    passed=$((passed + 1))
    echo "ok: good configuration accepted"
else
    failed=$((failed + 1))
    echo "FAIL: good configuration refused:"
    cat "$work/err"
fi

# The Postfix lines -n prints. A socket under Postfix's queue directory
# (here a private one: postconf reads MAIL_CONFIG) is named as smtpd
# chrooted there sees it; one elsewhere gets a note that it cannot.
# check NAME WANT: WANT is a fixed string looked for as a whole line of stdout.
check() {
    if grep -Fqx -- "$2" "$work/out"; then
        passed=$((passed + 1))
        echo "ok: $1"
    else
        failed=$((failed + 1))
        echo "FAIL: $1: wanted the line '$2' in stdout:"
        sed 's/^/    /' "$work/out" "$work/err"
    fi
}
if command -v postconf >/dev/null 2>&1 || [ -x /usr/sbin/postconf ]; then
    mkdir -p "$work/pf" "$work/spool/slop-milter" "$work/run"
    printf 'queue_directory = %s/spool\n' "$work" >"$work/pf/main.cf"
    printf '%b' "${R}Socket local:$work/spool/slop-milter/slop-milter.sock\n" >"$work/spool.conf"
    MAIL_CONFIG=$work/pf "$bin" -n -c "$work/spool.conf" >"$work/out" 2>"$work/err"
    check "spool socket named as the chroot sees it" \
        "smtpd_milters = unix:/slop-milter/slop-milter.sock"
    printf '%b' "${R}Socket local:$work/run/slop-milter.sock\n" >"$work/run.conf"
    MAIL_CONFIG=$work/pf "$bin" -n -c "$work/run.conf" >"$work/out" 2>"$work/err"
    check "socket outside the spool named in full" "smtpd_milters = unix:$work/run/slop-milter.sock"
    if grep -q "^# a chrooted smtpd .* cannot reach it: put the socket under $work/spool " \
        "$work/out"; then
        passed=$((passed + 1)) && echo "ok: socket outside the spool: the chroot is named"
    else
        failed=$((failed + 1)) && echo "FAIL: socket outside the spool: no note" && cat "$work/out"
    fi
else
    echo "skip: no postconf"
fi

# Postfix's user must be able to write to the socket: SocketMode 0660 in
# our own group (which postfix is not in) draws one warning naming the fix,
# 0666 none.
if id postfix >/dev/null 2>&1 && ! id -G postfix | tr ' ' '\n' | grep -qx "$(id -g)" &&
    [ "$(id -u postfix)" != "$(id -u)" ]; then
    printf '%b' "${R}Socket local:$work/run/m.sock\nSocketMode 0660\n" >"$work/m660.conf"
    "$bin" -n -c "$work/m660.conf" >"$work/out" 2>"$work/err"
    rc=$?
    if [ "$rc" -eq 0 ] && [ "$(grep -c "cannot connect to $work/run/m.sock" "$work/err")" -eq 1 ] &&
        grep -Eq "mode 0660\): (run 'adduser postfix $(id -gn)' and|set UserID)" "$work/err"; then
        passed=$((passed + 1)) && echo "ok: socket Postfix cannot write: one warning with the fix"
    else
        failed=$((failed + 1)) && echo "FAIL: socket Postfix cannot write: exit $rc, stderr:"
        cat "$work/err"
    fi
    printf '%b' "${R}Socket local:$work/run/m.sock\nSocketMode 0666\n" >"$work/m666.conf"
    "$bin" -n -c "$work/m666.conf" >"$work/out" 2>"$work/err"
    rc=$?
    if [ "$rc" -eq 0 ] && ! grep -q "cannot connect" "$work/err"; then
        passed=$((passed + 1)) && echo "ok: socket Postfix can write: no warning"
    else
        failed=$((failed + 1)) && echo "FAIL: SocketMode 0666 warned: exit $rc" && cat "$work/err"
    fi
else
    echo "skip: no postfix user outside our group"
fi

# Detached with Syslog no there is nowhere to log: said on stderr before
# it detaches. The detached daemon is stopped by its PidFile's pid.
printf '%b' "${R}Syslog no\nSocket unix:$work/nolog.sock\nStateDir $work/nolog-state\nPidFile $work/nolog.pid\nReplyEnable no\n" \
    >"$work/nolog.conf"
"$bin" -c "$work/nolog.conf" >/dev/null 2>"$work/err"
rc=$?
n=0
while [ ! -s "$work/nolog.pid" ] && [ "$n" -lt 100 ]; do
    sleep 0.1
    n=$((n + 1))
done
if [ -s "$work/nolog.pid" ]; then
    pid=$(cat "$work/nolog.pid")
    kill "$pid" 2>/dev/null
    n=0
    while kill -0 "$pid" 2>/dev/null && [ "$n" -lt 50 ]; do
        sleep 0.1
        n=$((n + 1))
    done
    kill -9 "$pid" 2>/dev/null
fi
said=no
[ "$rc" -eq 0 ] && grep -q 'Syslog is no and -f is not given: once detached, nothing is logged' \
    "$work/err" && said=yes
case $said in
yes) passed=$((passed + 1)) && echo "ok: no log destination: said at start" ;;
*) failed=$((failed + 1)) && echo "FAIL: no log destination: exit $rc, stderr:" && cat "$work/err" ;;
esac

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
