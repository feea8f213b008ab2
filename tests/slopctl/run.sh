#!/bin/sh
# Behaviour of the slopctl command line: input forms (file, mbox, Maildir,
# directory, stdin), JSON and text output, errors and exit codes, lint.
# Every message and rule file is written here into a temporary directory,
# so the test does not depend on the shipped rules' scores.
# Usage: sh run.sh SLOPCTL TESTS_DIR RULES_DIR
set -u

if [ $# -ne 3 ]; then
    echo "usage: sh run.sh SLOPCTL TESTS_DIR RULES_DIR" >&2
    exit 2
fi
SLOPCTL=$1
RULES_DIR=$3
unset SLOP_RULES_DIR

T=$(mktemp -d "${TMPDIR:-/tmp}/slopctl-test.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
trap 'exit 1' HUP INT TERM

pass=0
fail=0

ok() {
    pass=$((pass + 1))
    printf 'ok - %s\n' "$1"
}

not_ok() {
    fail=$((fail + 1))
    printf 'not ok - %s\n' "$1"
    for f in "$T/out" "$T/err"; do
        [ -s "$f" ] && sed 's/^/#   /' "$f" | head -20
    done
}

# run ARGS...: run slopctl, keep stdout in $T/out, stderr in $T/err, status in $rc.
run() {
    "$SLOPCTL" "$@" >"$T/out" 2>"$T/err"
    rc=$?
}

# jcheck EXPR: every line of $T/out parses as one JSON object and the Python
# expression EXPR, over the list L of those objects, is true.
jcheck() {
    python3 -c '
import json, sys
L = []
with open(sys.argv[1], encoding="utf-8") as f:
    for line in f.read().split("\n")[:-1]:
        o = json.loads(line)
        assert isinstance(o, dict), line
        L.append(o)
sys.exit(0 if eval(sys.argv[2]) else 1)
' "$T/out" "$1" 2>>"$T/err"
}

# check DESC CONDITION...: one test case.
check() {
    desc=$1
    shift
    if "$@"; then ok "$desc"; else not_ok "$desc"; fi
}

rc_is() {
    [ "$rc" -eq "$1" ]
}

# msg ID SUBJECT BODY: a small plain-text message.
msg() {
    printf 'From: Tester <tester@example.org>\nTo: security@example.org\n'
    printf 'Subject: %s\nMessage-ID: <%s>\nDate: Mon, 1 Jan 2024 10:00:00 +0000\n' "$2" "$1"
    printf 'MIME-Version: 1.0\nContent-Type: text/plain; charset=utf-8\n\n%s\n' "$3"
}

KEYS='["file","index","message_id","subject","kind","score","action","disclosure","truncated","hits"]'
HIT_KEYS='["rule","score","description","evidence","doc"]'

mkdir "$T/rules" "$T/badrules"
cat >"$T/rules/10-test.rules" <<'EOF'
# Rules for the slopctl tests: small scores, so the default thresholds
# leave every message at action none.
rule TEST_ZEBRA
    describe  the subject mentions a zebra
    score     0.5
    match     subject /zebra/i

rule TEST_UNESCAPED_FROM
    describe  a body line starts with From here on
    score     0.1
    match     body /^From here on/
EOF
cat >"$T/badrules/10-bad.rules" <<'EOF'
rule TEST_BAD
    describe  a rule with a broken score
    score     many
    match     subject /x/
badword outside any rule
EOF

msg one@example.org "A zebra crossing" "The kernel crashed on 6.8." >"$T/one.eml"

# --- single file ---------------------------------------------------------
run scan --json --rules "$RULES_DIR" "$T/one.eml"
check "single file: exit 0 with the shipped rules" rc_is 0
check "single file: one JSON line, keys in order" jcheck \
    "len(L) == 1 and list(L[0]) == $KEYS and all(list(h) == $HIT_KEYS for h in L[0]['hits'])"
check "single file: fields" jcheck \
    "L[0]['file'] == '$T/one.eml' and L[0]['index'] == 0 and L[0]['message_id'] == 'one@example.org' and L[0]['subject'] == 'A zebra crossing' and L[0]['action'] in ('none','tag','reply','quarantine','reject') and isinstance(L[0]['disclosure'], bool) and isinstance(L[0]['truncated'], bool)"
check "single file: scores have one decimal" \
    sh -c "grep -Eq '\"score\":-?[0-9]+\\.[0-9],' '$T/out'"

run scan --json --rules "$T/rules" "$T/one.eml"
check "own rules: the zebra rule hits" jcheck \
    "[h['rule'] for h in L[0]['hits']] == ['TEST_ZEBRA'] and L[0]['hits'][0]['score'] == 0.5 and L[0]['score'] == 0.5 and L[0]['hits'][0]['description'] == 'the subject mentions a zebra'"

# --- thresholds ----------------------------------------------------------
run scan --json --rules "$T/rules" "$T/one.eml"
check "threshold: default leaves a 0.5 score alone" jcheck "L[0]['action'] == 'none'"
run scan --json --rules "$T/rules" --threshold tag=0.4 "$T/one.eml"
check "threshold: tag=0.4 tags it" jcheck "L[0]['action'] == 'tag'"
run scan --json --rules "$T/rules" --threshold tag=0.4 --threshold reject=0.5 "$T/one.eml"
check "threshold: the most severe action reached wins" jcheck "L[0]['action'] == 'reject'"
run scan --json --rules "$T/rules" --threshold tag=0.6 "$T/one.eml"
check "threshold: tag=0.6 is not reached" jcheck "L[0]['action'] == 'none'"
run scan --rules "$T/rules" --only-actions "$T/one.eml"
check "only-actions: action none prints nothing" sh -c "rc=$rc; [ \$rc -eq 0 ] && [ ! -s '$T/out' ]"
run scan --rules "$T/rules" --only-actions -t tag=0.1 "$T/one.eml"
check "only-actions: a tagged message is printed" grep -q '^.*one\.eml: tag score=0\.5 ' "$T/out"

# --- limits --------------------------------------------------------------
printf '%s\n' "$(msg lim@example.org "A zebra crossing" "one")" two three four five six \
    >"$T/lines.eml"
run scan --json --rules "$RULES_DIR" "$T/lines.eml"
check "limit: the defaults cut nothing" jcheck \
    "L[0]['truncated'] is False and 'LIMIT_REACHED' not in [h['rule'] for h in L[0]['hits']]"
run scan --json --rules "$RULES_DIR" --limit lines=3 "$T/lines.eml"
check "limit: lines=3 cuts the body, LIMIT_REACHED names it" jcheck \
    "L[0]['truncated'] is True and [(h['score'], h['evidence']) for h in L[0]['hits'] if h['rule'] == 'LIMIT_REACHED'] == [(0.0, 'max_lines=3')]"
run scan --json --rules "$RULES_DIR" -l headers=2 --limit message-size=1K "$T/lines.eml"
check "limit: repeatable, the first limit reached is named" jcheck \
    "[h['evidence'] for h in L[0]['hits'] if h['rule'] == 'LIMIT_REACHED'] == ['max_headers=2']"
run scan --rules "$RULES_DIR" --limit lines=0 "$T/lines.eml"
check "limit: 0 is a usage error" sh -c "[ $rc -eq 64 ] && grep -q 'out of range' '$T/err'"
run scan --rules "$RULES_DIR" --limit widgets=3 "$T/lines.eml"
check "limit: an unknown name is a usage error" sh -c "[ $rc -eq 64 ] && grep -q 'bad --limit' '$T/err'"
run scan --rules "$RULES_DIR" --limit lines=3x "$T/lines.eml"
check "limit: a bad suffix is a usage error" rc_is 64
run help
check "limit: documented in help" grep -q -- '--limit NAME=N' "$T/out"

# --- mbox ----------------------------------------------------------------
{
    printf 'From tester@example.org Mon Jan  1 10:00:00 2024\n'
    msg m1@example.org "first" "Hello.
From the look of it this line starts with From but follows text."
    printf '\nFrom tester@example.org Mon Jan  1 10:01:00 2024\n'
    msg m2@example.org "second" "Escaped line follows.

>From here on the body was escaped.
>>From stays quoted once."
    printf '\nFrom tester@example.org Mon Jan  1 10:02:00 2024\n'
    msg m3@example.org "third zebra" "Last one."
    printf '\n'
} >"$T/box.mbox"
run scan --json --rules "$T/rules" "$T/box.mbox"
check "mbox: exit 0" rc_is 0
check "mbox: 3 messages, index 0,1,2" jcheck \
    "[o['index'] for o in L] == [0, 1, 2] and all(o['file'] == '$T/box.mbox' for o in L)"
check "mbox: message ids in order" jcheck \
    "[o['message_id'] for o in L] == ['m1@example.org', 'm2@example.org', 'm3@example.org']"
check "mbox: >From line unescaped" jcheck \
    "[h['rule'] for h in L[1]['hits']] == ['TEST_UNESCAPED_FROM'] and L[0]['hits'] == []"
check "mbox: third message scored" jcheck "[h['rule'] for h in L[2]['hits']] == ['TEST_ZEBRA']"

run scan --rules "$T/rules" "$T/box.mbox"
check "mbox text: #INDEX on every entry" sh -c \
    "grep -c '^$T/box.mbox#[012]: none score=' '$T/out' | grep -qx 3"
check "mbox text: message id and subject" sh -c \
    "grep -q 'message-id=<m2@example.org>' '$T/out' && grep -qx '  subject: second' '$T/out'"

# CRLF line ends
msg c1@example.org "crlf one" "x" >"$T/c1"
msg c2@example.org "crlf two" "y" >"$T/c2"
{
    printf 'From a@example.org Mon Jan  1 10:00:00 2024\n'
    cat "$T/c1"
    printf '\nFrom a@example.org Mon Jan  1 10:00:00 2024\n'
    cat "$T/c2"
} | sed 's/$/\r/' >"$T/crlf.mbox"
run scan --json --rules "$T/rules" "$T/crlf.mbox"
check "mbox with CRLF: 2 messages" jcheck \
    "[o['message_id'] for o in L] == ['c1@example.org', 'c2@example.org']"

# --- Maildir -------------------------------------------------------------
mkdir -p "$T/md/cur" "$T/md/new" "$T/md/tmp"
msg md1@example.org "md one" "a" >"$T/md/cur/1700000001.1.host:2,S"
msg md3@example.org "md three" "c" >"$T/md/cur/1700000003.1.host:2,"
msg md2@example.org "md two" "b" >"$T/md/new/1700000002.1.host"
msg tmp@example.org "partial" "d" >"$T/md/tmp/1700000004.1.host"
msg dot@example.org "dot" "e" >"$T/md/cur/.hidden"
run scan --json --rules "$T/rules" "$T/md"
check "Maildir: cur and new merged by name, tmp and dot files skipped" jcheck \
    "[o['message_id'] for o in L] == ['md1@example.org', 'md2@example.org', 'md3@example.org']"

# A link in a Maildir to a file elsewhere (as root, any file on the host)
# is reported and skipped, and so is a cur/ linked elsewhere, unless
# --follow-symlinks.
mkdir -p "$T/mdl/cur" "$T/mdl/new" "$T/outside/cur" "$T/mdl2/new"
msg own@example.org "own" "a" >"$T/mdl/cur/1700000001.1.host:2,S"
msg secret@example.org "secret" "s" >"$T/outside/secret"
ln -s "$T/outside/secret" "$T/mdl/new/1700000002.1.host"
run scan --json --rules "$T/rules" "$T/mdl"
check "Maildir: a symlinked message is not read" jcheck \
    "[o.get('message_id') for o in L if 'error' not in o] == ['own@example.org']"
check "Maildir: a symlinked message is reported, exit 1" \
    sh -c '[ "$1" -eq 1 ] && grep -q "symbolic link, not followed" "$2"' sh "$rc" "$T/err"
run scan --json --follow-symlinks --rules "$T/rules" "$T/mdl"
check "Maildir: --follow-symlinks reads it" jcheck \
    "[o['message_id'] for o in L] == ['own@example.org', 'secret@example.org']"
ln -s "$T/outside/cur" "$T/mdl2/cur"
cp "$T/outside/secret" "$T/outside/cur/1700000003.1.host:2,"
run scan --json --rules "$T/rules" "$T/mdl2"
check "Maildir: a cur/ linked elsewhere is not walked" jcheck "L == []"

# --- directory recursion -------------------------------------------------
mkdir -p "$T/tree/sub/deeper" "$T/tree/.git"
msg a@example.org "a" "a" >"$T/tree/a.eml"
msg b@example.org "b" "b" >"$T/tree/sub/b.eml"
msg c@example.org "c" "c" >"$T/tree/sub/deeper/c"
cp "$T/box.mbox" "$T/tree/sub/z.mbox"
msg x@example.org "x" "x" >"$T/tree/.hidden.eml"
msg y@example.org "y" "y" >"$T/tree/.git/y.eml"
echo "# notes" >"$T/tree/LABEL.md"
echo "path,label" >"$T/tree/index.csv"
run scan --json --rules "$T/rules" "$T/tree"
check "directory: recursive, sorted, mbox inside, dot/md/csv skipped" jcheck \
    "[o['message_id'] for o in L] == ['a@example.org', 'b@example.org', 'c@example.org', 'm1@example.org', 'm2@example.org', 'm3@example.org']"

# --- standard input ------------------------------------------------------
"$SLOPCTL" scan --json --rules "$T/rules" - <"$T/one.eml" >"$T/out" 2>"$T/err"
rc=$?
check "stdin: one message" jcheck "len(L) == 1 and L[0]['file'] == '-' and L[0]['message_id'] == 'one@example.org'"
cat "$T/box.mbox" | "$SLOPCTL" scan --json --rules "$T/rules" - >"$T/out" 2>"$T/err"
check "stdin: an mbox from a pipe" jcheck "[o['index'] for o in L] == [0, 1, 2]"

# --- errors --------------------------------------------------------------
run scan --json --rules "$T/rules" "$T/missing.eml" "$T/one.eml"
check "missing path: exit 1" rc_is 1
check "missing path: error object, the rest scanned" jcheck \
    "len(L) == 2 and list(L[0]) == ['file','index','error'] and L[0]['file'] == '$T/missing.eml' and L[1]['message_id'] == 'one@example.org'"
check "missing path: human line on stderr" grep -q "missing.eml" "$T/err"

if [ "$(id -u)" -ne 0 ]; then
    cp "$T/one.eml" "$T/locked.eml"
    chmod 000 "$T/locked.eml"
    run scan --json --rules "$T/rules" "$T/locked.eml" "$T/one.eml"
    check "unreadable file: exit 1 and the rest scanned" sh -c \
        "[ $rc -eq 1 ] && grep -q '\"error\"' '$T/out' && grep -q 'one@example.org' '$T/out'"
    chmod 600 "$T/locked.eml"
else
    echo "# unreadable-file case skipped: running as root"
fi

run scan --json --rules "$T/rules" "$T/missing1" "$T/missing2"
check "no path readable: exit 66 (EX_NOINPUT)" rc_is 66

: >"$T/empty.eml"
run scan --json --rules "$T/rules" "$T/empty.eml"
check "empty file: not mail, exit 66, an error object" sh -c "[ $rc -eq 66 ] && python3 -c '
import json, sys
L = [json.loads(line) for line in open(sys.argv[1])]
assert len(L) == 1 and \"error\" in L[0], L
' '$T/out'"
check "empty file: one line on stderr" sh -c \
    "[ \$(wc -l <'$T/err') -eq 1 ] && grep -q 'empty, not a mail message' '$T/err'"
printf '\177ELF\002\001\001\000\000\000binary' >"$T/prog"
run scan --rules "$T/rules" "$T/prog" "$T/one.eml"
check "a binary: not mail, the rest scanned, exit 1" sh -c \
    "[ $rc -eq 1 ] && grep -q 'prog: not a mail message' '$T/err' && grep -q 'one@example.org' '$T/out'"
printf 'just a note\nwith no header\n' >"$T/note.txt"
run learn --slop --state "$T/notestate" --rules "$T/rules" "$T/note.txt"
check "learn: a file that is not mail is not learned (exit 66)" sh -c \
    "[ $rc -eq 66 ] && grep -q 'note.txt: not a mail message' '$T/err'"

# hostile header text: quotes, backslashes, control characters, bad UTF-8
{
    printf 'From: x@example.org\nSubject: say "hi" \\ back\001\nMessage-ID: <q@example.org>\n'
    printf 'X-Bad: \377\376\n\nbody \033[31m red\n'
} >"$T/hostile.eml"
run scan --json --rules "$T/rules" "$T/hostile.eml"
check "JSON escaping: valid JSON, quotes and backslash survive" jcheck \
    "len(L) == 1 and L[0]['subject'] is not None and 'say \"hi\" \\\\ back' in L[0]['subject']"
run scan --rules "$T/rules" "$T/hostile.eml"
check "text output: no raw control characters" sh -c \
    "! LC_ALL=C grep -q \"\$(printf '[\\001\\033]')\" '$T/out'"

# --- usage ---------------------------------------------------------------
run scan --no-such-option "$T/one.eml"
check "bad option: exit 64" rc_is 64
run scan --rules "$T/rules" --threshold tag "$T/one.eml"
check "bad threshold: exit 64" rc_is 64
run scan --rules "$T/rules" --threshold none=3 "$T/one.eml"
check "threshold on action none: exit 64" rc_is 64
run scan --rules "$T/rules"
check "scan without PATH: exit 64" rc_is 64
run frobnicate
check "unknown command: exit 64" rc_is 64
run scna "$T/one.eml"
check "misspelt command: exit 64, one line naming the command meant" sh -c \
    "[ $rc -eq 64 ] && [ \$(wc -l <'$T/err') -eq 1 ] && grep -q \"unknown command 'scna', did you mean 'scan'\" '$T/err'"
run scan --rules "$T/rules" --threshold tag=5 --threshold reply=3 "$T/one.eml"
check "inverted thresholds (reply below tag): exit 64, one line" sh -c \
    "[ $rc -eq 64 ] && [ \$(wc -l <'$T/err') -eq 1 ] && grep -q 'reply=3 is below tag=5' '$T/err' && [ ! -s '$T/out' ]"
run scan --rules "$T/rules" --threshold tag=5 --threshold reply=0 --threshold reject=4 "$T/one.eml"
check "inverted thresholds (reject below tag, reply off): exit 64" rc_is 64
run scan --rules "$T/rules" --threshold tag=5 --threshold reply=0 --threshold quarantine=6 "$T/one.eml"
check "a disabled threshold between rising ones: accepted" rc_is 0
run
check "no command: exit 64" rc_is 64
run help
check "help: exit 0 with usage" sh -c "[ $rc -eq 0 ] && grep -q 'slopctl scan' '$T/out'"
run --help
check "--help: exit 0" rc_is 0
run version
check "version: prints a version" sh -c "[ $rc -eq 0 ] && grep -Eq '^slopctl [0-9]+\\.[0-9]+' '$T/out'"

# --- report kind from the recipients, --kind, --project ------------------
# lmsg ID TO CC SUBJECT: a short text with no report wording, to TO (and CC).
lmsg() {
    printf 'From: Tester <tester@example.org>\nTo: %s\n' "$2"
    [ -n "$3" ] && printf 'Cc: %s\n' "$3"
    printf 'Subject: %s\nMessage-ID: <%s>\n\nThe frob parser overflows its buffer.\n' "$4" "$1"
}
lmsg l1 dev@lists.example.org "" "frob parser" >"$T/list.eml"
lmsg l2 "Dev List <dev@lists.example.org>" "Security <Security@Example.org>" "frob parser" >"$T/cc.eml"
lmsg l3 security@example.org "" "frob parser" >"$T/sec.eml"
lmsg l4 dev@lists.example.org "" "[PATCH] frob: check the length" >"$T/patch.eml"
run scan --json --no-state --rules "$T/rules" "$T/list.eml" "$T/cc.eml" "$T/sec.eml"
check "routing: to a list it is other, Cc or To security@ makes a report" jcheck \
    "[o['kind'] for o in L] == ['other', 'report', 'report']"
run scan --json --no-state --rules "$T/rules" --kind report "$T/list.eml" "$T/patch.eml"
check "--kind report: a report unless it is a patch" jcheck "[o['kind'] for o in L] == ['report', 'patch']"
run scan --json --no-state --rules "$T/rules" --kind auto "$T/list.eml"
check "--kind auto: as without it" jcheck "[o['kind'] for o in L] == ['other']"
run scan --json --no-state --rules "$T/rules" --report-recipients 'dev@*, *@psirt.example.org' \
    "$T/list.eml" "$T/sec.eml"
check "--report-recipients: the patterns given replace security@*" jcheck \
    "[o['kind'] for o in L] == ['report', 'other']"
run scan --json --no-state --rules "$T/rules" --report-recipients '' "$T/sec.eml"
check "--report-recipients '': no address makes a report" jcheck "[o['kind'] for o in L] == ['other']"
run scan --rules "$T/rules" --report-recipients 'security' "$T/sec.eml"
check "--report-recipients without '@': exit 64" rc_is 64
run scan --rules "$T/rules" --kind patch "$T/sec.eml"
check "--kind patch: exit 64" rc_is 64

mkdir "$T/prules"
cat >"$T/prules/10-kernel.rules" <<'EOF'
# profile kernel is the default: this file's rules hold only under it.
profile kernel
rule TEST_KERNEL
    describe  kernel only
    score     0.5
    match     body /frob/
EOF
cat >"$T/prules/20-all.rules" <<'EOF'
rule TEST_ALL
    describe  every profile
    score     0.5
    doc       @/process/frob.html
    match     body /frob/

rule TEST_GENERIC
    describe  generic only
    score     0.5
    profile   generic
    match     body /frob/
EOF
run scan --json --no-state --rules "$T/prules" "$T/sec.eml"
check "profile: kernel by default, kernel links" jcheck \
    "sorted(h['rule'] for h in L[0]['hits']) == ['TEST_ALL', 'TEST_KERNEL'] and [h['doc'] for h in L[0]['hits'] if h['rule'] == 'TEST_ALL'] == ['https://docs.kernel.org/process/frob.html']"
run scan --json --no-state --rules "$T/prules" --project generic "$T/sec.eml"
check "--project generic: its rules, no kernel links" jcheck \
    "sorted(h['rule'] for h in L[0]['hits']) == ['TEST_ALL', 'TEST_GENERIC'] and all(h['doc'] is None for h in L[0]['hits'])"
run scan --json --no-state --rules "$T/prules" --project generic --doc-base https://docs.example.org/ "$T/sec.eml"
check "--project generic --doc-base: links to the site's documents" jcheck \
    "[h['doc'] for h in L[0]['hits'] if h['rule'] == 'TEST_ALL'] == ['https://docs.example.org/process/frob.html']"
cat >"$T/prules/30-site.rules" <<'EOF'
rule TEST_SITE
    describe  the site's own
    score     0.5
    profile   example-site
    match     body /no such word here/
EOF
run scan --json --no-state --rules "$T/prules" --project example-site "$T/sec.eml"
check "--project of a site: only unmarked rules" jcheck "[h['rule'] for h in L[0]['hits']] == ['TEST_ALL']"
run scan --json --no-state --rules "$T/prules" --project linux "$T/sec.eml"
check "--project no rule file names (a typo): exit 78, nothing scanned" sh -c \
    "[ $rc -eq 78 ] && grep -q \"unknown profile 'linux'\" '$T/err' && [ ! -s '$T/out' ]"
run rules --rules "$T/prules" --project example-site
check "rules: name, score, class, profiles (off under this one), description, link" sh -c \
    "grep -qx 'TEST_KERNEL	0.50	substance	kernel (off)	kernel only	-' '$T/out' &&
     grep -qx 'TEST_SITE	0.50	substance	example-site	the site'\''s own	-' '$T/out' &&
     grep -qx 'TEST_ALL	0.50	substance	all	every profile	-' '$T/out'"
run rules --rules "$T/prules"
check "rules: kernel links under the kernel profile" \
    grep -qx 'TEST_ALL	0.50	substance	all	every profile	https://docs.kernel.org/process/frob.html' "$T/out"
run rules --rules "$T/prules" --project linux
check "rules: an unknown profile refused (exit 78)" rc_is 78
run scan --rules "$T/prules" --project Kernel "$T/sec.eml"
check "--project with upper case: exit 64" rc_is 64

# --- rules loading and lint ----------------------------------------------
run scan --json --rules "$T/badrules" "$T/one.eml"
check "scan with broken rules: exit 78 (EX_CONFIG)" rc_is 78
check "scan with broken rules: file:line and the closing line" sh -c \
    "grep -Eq '10-bad\\.rules:[0-9]+: ' '$T/err' && grep -q \"cannot load rules from '$T/badrules'\" '$T/err' && [ ! -s '$T/out' ]"

run lint --rules "$T/badrules"
check "lint bad rules: non-zero exit" sh -c "[ $rc -ne 0 ] && [ $rc -lt 64 ]"
check "lint bad rules: file:line: reason and a count" sh -c \
    "grep -Eq '10-bad\\.rules:[0-9]+: .+' '$T/out' && grep -Eq '^[1-9][0-9]* problems?$' '$T/out'"
run lint --rules "$T/rules"
check "lint good rules: exit 0, says OK" sh -c "[ $rc -eq 0 ] && grep -qx '$T/rules: OK' '$T/out'"
run report --no-state --rules "$T/rules" -o "$T/r.html" "$T/one.eml"
check "report -o: names the file it wrote" sh -c \
    "[ $rc -eq 0 ] && [ -s '$T/r.html' ] && grep -q 'wrote $T/r.html (1 message, 0 not scanned)' '$T/err'"
# The chart's time axis: two days sixteen months apart are drawn that far
# apart, with dates between them on the axis, not side by side.
{
    msg t1@example.org "one" "one" | sed 's/^Date: .*/Date: Fri, 8 Aug 2025 10:00:00 +0000/'
    echo
    msg t2@example.org "two" "two" | sed 's/^Date: .*/Date: Thu, 3 Dec 2026 10:00:00 +0000/'
} | sed '1s/^/From x@example.org Thu Jan  1 00:00:00 1970\n/; /^$/{n;s/^From: /From x@example.org Thu Jan  1 00:00:00 1970\nFrom: /}' \
    >"$T/span.mbox"
run report --no-state --rules "$T/rules" -o "$T/span.html" "$T/span.mbox"
check "report: a time axis, months without mail on it" sh -c \
    "[ $rc -eq 0 ] && grep -q 'wrote $T/span.html (2 messages' '$T/err' &&
     grep -q 'class=\"xl\">2026-02<' '$T/span.html' && grep -q 'messages per month' '$T/span.html'"
SLOP_RULES_DIR=$T/badrules "$SLOPCTL" lint >"$T/out" 2>"$T/err"
rc=$?
check "lint: \$SLOP_RULES_DIR is used when --rules is absent" sh -c "[ $rc -eq 1 ]"
run lint --rules "$T/no-such-dir"
check "lint on a missing directory fails" sh -c "[ $rc -ne 0 ]"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
