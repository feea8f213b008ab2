#!/bin/sh
# Who may write the state (issue 31 item 4): a writing slopctl command
# run by another user than the state directory's owner (root included)
# is refused with the command that works and writes nothing; the daemon
# and -n refuse a StateDir that is not UserID's with exit 73, naming the
# path, its owner and the chown to run, before it listens.
# Usage: owner.sh SLOPCTL SLOP_MILTER RULES_DIR (as root; skipped otherwise)
set -u
SLOPCTL=$1 BIN=$2 RULES=$3
T=$(mktemp -d "${TMPDIR:-/tmp}/slop-owner.XXXXXX") || exit 1
chmod 755 "$T"
trap 'rm -rf "$T"' EXIT
trap 'exit 1' HUP INT TERM
passed=0 failed=0
test_name=owner
# shellcheck source=../milter/testlib.sh
. "$(dirname "$0")/../milter/testlib.sh"
if [ "$(id -u)" -ne 0 ] || ! id nobody >/dev/null 2>&1; then
    skip "needs root and the user nobody"
fi
nogroup=$(id -gn nobody)
printf 'From: a@example.org\nTo: security@example.org\nSubject: hello\nMessage-ID: <o1@example.org>\n\nhello\n' \
    >"$T/m.eml"

# ---- slopctl's writers ----
mkdir "$T/st"
chown "nobody:$nogroup" "$T/st"
for cmd in "learn --slop --rules $RULES $T/m.eml" "forget --rules $RULES $T/m.eml" \
    "import maintainers $T/m.eml" "db prune"; do
    # shellcheck disable=SC2086 # the command's words
    "$SLOPCTL" $cmd --state "$T/st" >"$T/out" 2>"$T/err"
    rc=$?
    check "root's ${cmd%% --*} on nobody's state: refused (exit $rc)" [ "$rc" -eq 77 ]
    check "${cmd%% *}: the message names the owner and the command that works" \
        grep -q "belongs to nobody:$nogroup, not root:.*runuser -u nobody -- slopctl" "$T/err"
done
check "nothing written into nobody's state" [ -z "$(ls -A "$T/st")" ]
"$SLOPCTL" learn --stats --state "$T/st" >"$T/out" 2>"$T/err"
check "a reading command is not refused for the owner" sh -c "! grep -q 'belongs to' '$T/err'"
# As nobody, from copies: the checkout may sit under a 0700 directory.
world_copy "$T/pub" "$SLOPCTL" "$RULES" || exit 1
setpriv --reuid=nobody --regid="$nogroup" --clear-groups "$T/pub/$(basename "$SLOPCTL")" \
    learn --slop --state "$T/st" --rules "$T/pub/$(basename "$RULES")" "$T/m.eml" \
    >"$T/out" 2>"$T/err"
rc=$?
check "the owner learns (exit $rc), its files are its own" \
    sh -c "[ $rc -eq 0 ] && [ \"\$(stat -c %U '$T/st/data.mdb')\" = nobody ] &&
           ! find '$T/st' ! -user nobody | grep -q ."

# ---- the daemon ----
mkdir "$T/rootst"
printf 'StateDir %s\nUserID nobody\nRulesDir %s\nSocket unix:%s/d.sock\nReplyEnable no\n' \
    "$T/rootst" "$RULES" "$T" >"$T/d.conf"
"$BIN" -n -c "$T/d.conf" >"$T/out" 2>"$T/err"
rc=$?
check "-n: a StateDir root owns with UserID nobody: exit 73 (got $rc)" [ "$rc" -eq 73 ]
check "-n: names the path, its owner and the chown" \
    grep -q "StateDir '$T/rootst': '$T/rootst' belongs to root:.*runs as nobody.*chown -R nobody:$nogroup $T/rootst" "$T/err"
timeout 20 "$BIN" -f -c "$T/d.conf" >"$T/out" 2>"$T/err"
rc=$?
check "daemon: the same refusal before it listens (exit $rc)" \
    sh -c "[ $rc -eq 73 ] && [ ! -e '$T/d.sock' ] && grep -q 'chown -R nobody:$nogroup $T/rootst' '$T/err'"
chown -R "nobody:$nogroup" "$T/rootst"
"$BIN" -n -c "$T/d.conf" >"$T/out" 2>"$T/err"
check "-n: after the chown, OK" grep -q 'configuration OK' "$T/out"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
