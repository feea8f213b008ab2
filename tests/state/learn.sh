#!/bin/sh
# slopctl learn / forget / learn --stats and the LEARNED_* findings, on
# the fixture mail of tests/fixtures/learn-mixed (slop and genuine patches
# written for this test, whose sentences are seen in both classes at
# other rates): counts after learn, relearn as the same class (no-op) and
# as the other (moved), forget; a model trained on half of each set
# separates the other half; it stays silent on a mail whose words only
# genuine mail had, on mail of a source it never learned, and on the
# patches of tests/fixtures/learn, whose classes share no sentence; the
# LearnMinimum gate; db prune's
# cap; the schema; two mails with one Message-ID learned, moved back and
# forth and forgotten end at zero; and a learner killed with SIGKILL while
# a reader scans leaves counts that forget exactly back to zero.
# Usage: sh learn.sh SLOPCTL RULES_DIR FIXTURES_DIR
set -u

if [ $# -ne 3 ]; then
    echo "usage: sh learn.sh SLOPCTL RULES_DIR FIXTURES_DIR" >&2
    exit 2
fi
SLOPCTL=$1
RULES=$2
FIX=$3
unset SLOP_RULES_DIR STATE_DIRECTORY

T=$(mktemp -d "${TMPDIR:-/tmp}/slop-learn.XXXXXX") || exit 1
bg=
cleanup() {
    [ -n "$bg" ] && kill -9 "$bg" 2>/dev/null
    rm -rf "$T"
}
trap cleanup EXIT
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
check() { # check NAME COMMAND...
    name=$1
    shift
    if "$@"; then ok "$name"; else not_ok "$name"; fi
}
run() {
    "$SLOPCTL" "$@" --rules "$RULES" >"$T/out" 2>"$T/err"
    rc=$?
}
set_schema() { # set_schema DUMP HEX: the schema_version a db dump records
    python3 -c '
import sys
lines = open(sys.argv[1]).read().split("\n")
i = lines.index(" " + b"schema_version".hex())
lines[i + 1] = " " + sys.argv[2]
open(sys.argv[1], "w").write("\n".join(lines))' "$1" "$2"
}
stat_of() { # stat_of STATE FIELD: slop, genuine or tokens
    "$SLOPCTL" learn --stats --state "$1" 2>/dev/null | awk -v f="$2" '$1 == f { print $NF }'
}

S=$T/state
mkdir "$T/train-slop" "$T/train-genuine" "$T/test-slop" "$T/test-genuine"
for f in "$FIX"/slop/*.eml "$FIX"/genuine/*.eml; do
    class=$(basename "$(dirname "$f")")
    n=$(basename "$f" .eml)
    if [ $((1$n % 2)) -eq 0 ]; then half=train; else half=test; fi
    cp "$f" "$T/$half-$class/"
done

# ---- counts: learn, relearn, move, forget ----
run learn --slop --state "$S" "$T/train-slop"
check "learn --slop exits 0" [ "$rc" -eq 0 ]
check "learn reports 8 new" grep -q "learned 8 slop messages: 8 new" "$T/out"
run learn --genuine --state "$S" "$T/train-genuine"
check "8 slop and 8 genuine learned" \
    [ "$(stat_of "$S" slop)" = 8 -a "$(stat_of "$S" genuine)" = 8 ]
tokens=$(stat_of "$S" tokens)
check "tokens counted" [ "${tokens:-0}" -gt 100 ]
run learn --slop --state "$S" "$T/train-slop"
check "relearning the same class changes nothing" \
    sh -c "grep -q '0 new, 0 moved from genuine, 8 already learned' '$T/out' &&
           [ '$(stat_of "$S" slop)' = 8 ] && [ '$(stat_of "$S" tokens)' = '$tokens' ]"
first=$(ls "$T/train-genuine" | head -1)
run learn --slop --state "$S" "$T/train-genuine/$first"
check "learning as the other class moves it" \
    sh -c "grep -q '1 moved from genuine' '$T/out' &&
           [ '$(stat_of "$S" slop)' = 9 ] && [ '$(stat_of "$S" genuine)' = 7 ]"
run learn --genuine --state "$S" "$T/train-genuine/$first"
check "and back" [ "$(stat_of "$S" slop)" = 8 -a "$(stat_of "$S" genuine)" = 8 ]
check "moving back restores the tokens" [ "$(stat_of "$S" tokens)" = "$tokens" ]
run forget --state "$S" "$T/train-genuine/$first"
check "forget takes a message away" \
    sh -c "grep -q 'forgot 1 messages, 0 were not learned' '$T/out' &&
           [ '$(stat_of "$S" genuine)' = 7 ]"
run forget --state "$S" "$T/train-genuine/$first"
check "forgetting it again is a no-op" grep -q "forgot 0 messages, 1 were not learned" "$T/out"
run learn --genuine --state "$S" "$T/train-genuine/$first"
run learn --state "$S" "$T/train-genuine"
check "learn without a class is a usage error" [ "$rc" -eq 64 ]

# ---- the classifier separates the held-out halves ----
scan_hits() { # scan_hits MINIMUM DIR: one line per message, its LEARNED_* rules
    "$SLOPCTL" scan --json --rules "$RULES" --state "$S" --learn-minimum "$1" "$2" 2>"$T/err" |
        python3 -c '
import json, sys
for l in sys.stdin:
    o = json.loads(l)
    print(" ".join(h["rule"] for h in o["hits"] if h["rule"].startswith("LEARNED_")) or "-")'
}
# Each held-out mail mixes five of its class's six sentences: most are
# told apart, none is put in the wrong class.
scan_hits 5 "$T/test-slop" >"$T/out"
check "held-out slop: LEARNED_SLOP_* on at least 6 of 8" \
    [ "$(grep -c '^LEARNED_SLOP_' "$T/out")" -ge 6 ]
check "held-out slop: never LEARNED_GENUINE_*" sh -c "! grep -q LEARNED_GENUINE_ '$T/out'"
scan_hits 5 "$T/test-genuine" >"$T/out"
check "held-out genuine: LEARNED_GENUINE_* on at least 6 of 8" \
    [ "$(grep -c '^LEARNED_GENUINE_' "$T/out")" -ge 6 ]
check "held-out genuine: never LEARNED_SLOP_*" sh -c "! grep -q LEARNED_SLOP_ '$T/out'"

# ---- abstention: silent where the model knows one class or nothing ----
# one-class.eml says only what the learned genuine mail alone said (and
# the words that glue sentences): no token of its own was seen in slop.
scan_hits 5 "$FIX/one-class.eml" >"$T/out"
check "words of one class only: no LEARNED_GENUINE_*" sh -c "! grep -q LEARNED_ '$T/out'"
# unseen.eml: a report of another project (a web client's cookies).
scan_hits 5 "$FIX/unseen.eml" >"$T/out"
check "mail of a source never learned: silent" sh -c "! grep -q LEARNED_ '$T/out'"
# The patches of tests/fixtures/learn: each class has sentences of its
# own that the other never has, so a model of them has nothing to weigh.
D=$T/disjoint
"$SLOPCTL" learn --slop --state "$D" --rules "$RULES" "$FIX"/../learn/slop/*[02468].eml >/dev/null 2>&1
"$SLOPCTL" learn --genuine --state "$D" --rules "$RULES" "$FIX"/../learn/genuine/*[02468].eml \
    >/dev/null 2>&1
"$SLOPCTL" scan --json --rules "$RULES" --state "$D" --learn-minimum 5 \
    "$FIX"/../learn/slop/*[13579].eml "$FIX"/../learn/genuine/*[13579].eml >"$T/out" 2>"$T/err"
check "classes that share no sentence: silent on both held-out halves" \
    sh -c "[ \$(wc -l <'$T/out') -eq 16 ] && ! grep -q LEARNED_ '$T/out'"
"$SLOPCTL" scan --json --rules "$RULES" --state "$S" --learn-minimum 5 "$T/test-slop" \
    >"$T/out" 2>"$T/err"
check "evidence names p, the counts and the tokens known" \
    grep -q 'p=[01]\.[0-9][0-9], from 8 slop and 8 genuine learned, [0-9]* of [0-9]* tokens known' "$T/out"
check "a learned finding alone never answers" \
    python3 -c '
import json, sys
for l in open(sys.argv[1]):
    o = json.loads(l)
    if o["action"] not in ("none", "tag"): sys.exit(1)' "$T/out"

# ---- the minimum-count gate ----
scan_hits 9 "$T/test-slop" >"$T/out"
check "silent below --learn-minimum" sh -c "! grep -q LEARNED_ '$T/out'"
scan_hits 8 "$T/test-slop" >"$T/out"
check "speaks at --learn-minimum" grep -q LEARNED_SLOP_ "$T/out"
scan_hits 200 "$T/test-slop" >"$T/out"
check "default-like minimum 200: silent" sh -c "! grep -q LEARNED_ '$T/out'"
"$SLOPCTL" learn --stats --state "$S" --learn-minimum 9 >"$T/out" 2>"$T/err"
check "learn --stats: not active, how many more of each class" grep -qx \
    'learned findings  not active: 1 more slop and 1 more genuine messages to learn (LearnMinimum 9 per class)' \
    "$T/out"
"$SLOPCTL" learn --stats --state "$S" --learn-minimum 8 >"$T/out" 2>"$T/err"
check "learn --stats: active at the minimum" grep -qx \
    'learned findings  active (LearnMinimum 8 per class)' "$T/out"

# ---- schema and prune ----
"$SLOPCTL" db stats --state "$S" >"$T/out" 2>"$T/err"
check "db stats: schema 4 with learn tables" \
    sh -c "grep -qi 'schema 4' '$T/out' && grep -q learn_token '$T/out' && grep -q learn_msg '$T/out'"
cp -r "$S" "$T/pruned"
"$SLOPCTL" db prune --state "$T/pruned" --learned-max 50 >"$T/out" 2>"$T/err"
check "db prune caps the learned tokens" [ "$(stat_of "$T/pruned" tokens)" = 50 ]
"$SLOPCTL" db prune --state "$T/pruned" --learned-days 0 >"$T/out" 2>"$T/err"
check "db prune --learned-days 0 drops every token" [ "$(stat_of "$T/pruned" tokens)" = 0 ]

# ---- two mails, one Message-ID: each is a message of its own ----
# A learned message is known by its content: a move subtracts what that
# mail added, not what the other mail sharing its Message-ID brings.
M=$T/mid
mkdir "$T/mid-a" "$T/mid-b"
a=$(ls "$FIX"/slop/*.eml | head -1)
b=$(ls "$FIX"/genuine/*.eml | head -1)
sed 's/^Message-ID: .*/Message-ID: <shared-1@example.test>/' "$a" >"$T/mid-a/a.eml"
sed 's/^Message-ID: .*/Message-ID: <shared-1@example.test>/' "$b" >"$T/mid-b/b.eml"
check "the two mails share one Message-ID" \
    [ "$(grep -h '^Message-ID:' "$T/mid-a/a.eml" "$T/mid-b/b.eml" | sort -u | wc -l)" -eq 1 ]
"$SLOPCTL" learn --genuine --state "$T/mid-fresh" --rules "$RULES" "$T/mid-a" >/dev/null 2>&1
"$SLOPCTL" learn --slop --state "$T/mid-fresh" --rules "$RULES" "$T/mid-b" >/dev/null 2>&1
fresh_tokens=$(stat_of "$T/mid-fresh" tokens)
i=0
while [ $i -lt 6 ]; do
    if [ $((i % 2)) -eq 0 ]; then ca=slop cb=genuine; else ca=genuine cb=slop; fi
    "$SLOPCTL" learn --$ca --state "$M" --rules "$RULES" "$T/mid-a" >/dev/null 2>&1
    "$SLOPCTL" learn --$cb --state "$M" --rules "$RULES" "$T/mid-b" >/dev/null 2>&1
    i=$((i + 1))
done
check "learned alternately 6 times: one slop, one genuine" \
    [ "$(stat_of "$M" slop)" = 1 -a "$(stat_of "$M" genuine)" = 1 ]
check "the tokens are those of learning each once ($fresh_tokens)" \
    [ "$(stat_of "$M" tokens)" = "$fresh_tokens" ]
run forget --state "$M" "$T/mid-a" "$T/mid-b"
check "forgetting both forgets two messages" grep -q "forgot 2 messages, 0 were not learned" "$T/out"
check "forgetting both leaves no message and no token" \
    [ "$(stat_of "$M" slop)" = 0 -a "$(stat_of "$M" genuine)" = 0 -a "$(stat_of "$M" tokens)" = 0 ]

# ---- schema 2 state: read as unlearned, emptied by the upgrade ----
# Its keys (Message-IDs) and tokens are not this release's: a state made
# schema 2 through db dump and load reads as nothing learned, and the
# first writable open empties the learned tables and records schema 4.
"$SLOPCTL" learn --slop --state "$T/mid-fresh" --rules "$RULES" "$T/train-slop" >/dev/null 2>&1
"$SLOPCTL" db dump --state "$T/mid-fresh" "$T/dump" >/dev/null 2>&1
set_schema "$T/dump" 02000000
"$SLOPCTL" db load --state "$T/old" "$T/dump" >/dev/null 2>&1
check "a schema 2 state with learned counts" \
    sh -c "'$SLOPCTL' db stats --state '$T/old' | grep -q 'schema 2' &&
           '$SLOPCTL' db stats --state '$T/old' | grep -q 'learn_token  *[1-9]'"
check "read-only, its learned counts read as none" \
    [ "$(stat_of "$T/old" slop)" = 0 -a "$(stat_of "$T/old" tokens)" = 0 ]
run learn --genuine --state "$T/old" "$T/mid-a"
check "the upgrade empties them: only the new message counts" \
    [ "$(stat_of "$T/old" slop)" = 0 -a "$(stat_of "$T/old" genuine)" = 1 ]
check "and records schema 4" sh -c "'$SLOPCTL' db stats --state '$T/old' | grep -q 'schema 4'"

# ---- schema 3 state: its counts stay, the upgrade adds the generation ----
set_schema "$T/dump" 03000000
"$SLOPCTL" db load --state "$T/three" "$T/dump" >/dev/null 2>&1
three_slop=$(stat_of "$T/three" slop)
check "a schema 3 state reads its learned counts" \
    sh -c "'$SLOPCTL' db stats --state '$T/three' | grep -q 'schema 3' && [ '$three_slop' -gt 0 ]"
run learn --slop --state "$T/three" "$T/mid-b"
check "its upgrade keeps them and records schema 4" \
    sh -c "[ '$(stat_of "$T/three" slop)' = '$three_slop' ] &&
           '$SLOPCTL' db stats --state '$T/three' | grep -q 'schema 4'"

# ---- SIGKILL while learning, a reader scanning all along ----
K=$T/killed
big=$T/big
mkdir "$big"
i=0
while [ $i -lt 25 ]; do
    for f in "$FIX"/slop/*.eml; do
        # Each copy its own mail: a learned message is known by its content.
        sed -e "s/^Message-ID: <\(.*\)@/Message-ID: <k$i-\1@/" -e "s/^Subject: /Subject: k$(echo $i | tr 0-9 a-j) /" \
            "$f" >"$big/$i-$(basename "$f")"
    done
    i=$((i + 1))
done
total=$(ls "$big" | wc -l)
"$SLOPCTL" learn --genuine --state "$K" --rules "$RULES" "$T/train-genuine" >/dev/null 2>&1
"$SLOPCTL" learn --slop --state "$K" --rules "$RULES" "$big" >/dev/null 2>&1 &
bg=$!
# Kill it once some but not all messages are in; a reader scans meanwhile.
tries=0
seen=0
while [ $tries -lt 600 ]; do
    seen=$(stat_of "$K" slop)
    [ "${seen:-0}" -gt 0 ] && break
    tries=$((tries + 1))
    sleep 0.05
done
"$SLOPCTL" scan --state "$K" --rules "$RULES" --learn-minimum 1 "$T/test-slop" >"$T/scan" 2>&1
reader=$?
kill -9 "$bg" 2>/dev/null
wait "$bg" 2>/dev/null
bg=
check "a reader scans while the learner writes" [ "$reader" -eq 0 ]
mid=$(stat_of "$K" slop)
check "counts readable after SIGKILL ($mid of $total learned)" [ -n "$mid" ]
run learn --slop --state "$K" "$big"
check "relearning after the kill completes the set" [ "$(stat_of "$K" slop)" = "$total" ]
run forget --state "$K" "$big"
run forget --state "$K" "$T/train-genuine"
check "forgetting everything leaves no message and no token" \
    [ "$(stat_of "$K" slop)" = 0 -a "$(stat_of "$K" genuine)" = 0 -a "$(stat_of "$K" tokens)" = 0 ]

printf '%d passed, %d failed\n' "$pass" "$fail"
[ "$fail" -eq 0 ]
