#!/bin/sh
# slopctl fit end to end, on a rule set and messages written here: it
# runs and converges, respects its bounds, meets the false-alarm limit on
# its training mail, writes a scores file that lint and scan load, a
# refit is byte-identical, and cross-validation holds out whole sources
# (a case's near-copies never straddle train and test) with a Wilson
# interval on every row. The shipped rules are not used, so their
# scores can change freely. gnuplot is not needed.
# Usage: sh run.sh SLOPCTL
set -u

if [ $# -ne 1 ]; then
    echo "usage: sh run.sh SLOPCTL" >&2
    exit 2
fi
SLOPCTL=$1
unset SLOP_RULES_DIR

test_name=slopctl-fit
. "$(dirname "$0")/lib.sh"
check_show="$T/out $T/err"

run() {
    "$SLOPCTL" "$@" >"$T/out" 2>"$T/err"
    rc=$?
}

mkdir -p "$T/rules" "$T/mail/slop" "$T/mail/genuine"
cat >"$T/rules/10-fit.rules" <<'RULES'
rule GAP_ALPHA
    describe the alpha gap
    score 3
    match body /\bgapalpha\b/
rule GAP_BETA
    describe the beta gap
    score 2
    match body /\bgapbeta\b/
rule STYLE_FLOURISH
    describe flourishes
    score 1.5
    class style
    match body /\bflourish\b/
rule COMMON_WORD
    describe a word both sides use
    score 1
    match body /\bcommonword\b/
rule NOTE_DISCLOSED
    describe tools disclosed
    score 0
    match body /^Assisted-by:/
rule GAP_NEVER
    describe never seen here
    score 2
    match body /zzzneverzzz/
rule __ALPHA_LINE
    match body /^gapalpha/
rule ALPHA_FIRST
    describe alpha leads the text
    score 0.5
    all_of __ALPHA_LINE GAP_ALPHA
RULES

# msg DIR NAME BODY: a minimal message.
msg() {
    printf 'From: Sender <%s@example.org>\nTo: security@example.org\nSubject: %s\nMessage-ID: <%s@fit.invalid>\n\n%s\n' \
        "$2" "$2" "$2" "$3" >"$T/mail/$1/$2.eml"
}
msg slop s1 'gapalpha and gapbeta here, with a flourish'
msg slop s2 'gapalpha here, flourish, commonword'
msg slop s3 'gapbeta and flourish, flourish'
msg slop s4 'gapalpha alone, then gapbeta'
msg slop s5 'a flourish and gapalpha commonword'
msg slop s6 'gapbeta gapalpha flourish commonword'
msg slop s7 'gapalpha only'
msg genuine g1 'commonword in a plain fix'
msg genuine g2 'a plain fix'
msg genuine g3 'commonword, tested on hardware'
msg genuine g4 'gapbeta named once in passing, commonword'
msg genuine g5 'Signed-off-by: A <a@example.org>
Assisted-by: SomeTool'
msg genuine g6 'Assisted-by: SomeTool
commonword'
msg genuine g7 'a flourish, once'
msg genuine g8 'plain text'
msg genuine g9 'commonword again'
msg genuine g10 'gapalpha and gapbeta mentioned, commonword'
msg genuine g11 'nothing here'

{
    echo 'path	class	group'
    echo '# slop first'
    for i in 1 2 3 4 5 6 7; do echo "mail/slop/s$i.eml	slop	flagged"; done
    for i in 1 2 3 4 7 8 9 10 11; do echo "mail/genuine/g$i.eml	genuine	genuine_patch"; done
    # The other form: commas, no group (the class is the group).
    echo "mail/genuine/g5.eml,genuine"
    echo "$T/mail/genuine/g6.eml,genuine,disclosed"
} >"$T/labels.tsv"

FIT="--rules $T/rules --folds 3 --fp-limit 0 -o $T/fit.scores --plot-dir $T/plot"
mkdir -p "$T/plot"
run fit $FIT "$T/labels.tsv"
cp "$T/out" "$T/out1"
check "fit runs" test "$rc" -eq 0
check "fit reports 18 messages, 7 slop" grep -q '^slopctl fit: 18 messages (7 slop, 11 genuine) in 4 groups' "$T/out"
check "fit converges" grep -q '^fit on all: converged' "$T/out"
check "cross-validation converges" grep -q '^cross-validation: converged' "$T/out"
check "false-alarm limit 0 met on the training mail" \
    grep -q 'genuine over tag 0/11$' "$T/out"
check "per-group figures for every group" \
    sh -c "grep -q '^  flagged ' '$T/out' && grep -q '^  genuine_patch ' '$T/out' && grep -q '^  disclosed ' '$T/out'"
check "never-matched rules listed" grep -q '^never matched: GAP_NEVER' "$T/out"
check "plot data and script written" \
    sh -c "test -s '$T/plot/roc-fitted.dat' && test -s '$T/plot/pr-hand-set.dat' && grep -q roc.svg '$T/plot/fit.gp'"

# The scores: within bounds, priors kept without data, notes left out.
check "scores within [0, 2 x prior], prior kept without data, no note" python3 - "$T/fit.scores" <<'PY'
import sys
prior = {"GAP_ALPHA": 3, "GAP_BETA": 2, "STYLE_FLOURISH": 1.5, "COMMON_WORD": 1,
         "GAP_NEVER": 2, "ALPHA_FIRST": 0.5}
got = {}
for line in open(sys.argv[1]):
    if line.startswith("#") or not line.strip():
        continue
    k, name, v = line.split()
    assert k == "score", line
    got[name] = float(v)
assert set(got) == set(prior), got
for name, v in got.items():
    assert 0 <= v <= 2 * prior[name], (name, v)
assert got["GAP_NEVER"] == 2.0, got
# Seen mostly on slop, the flourish rises; mostly on genuine mail, the
# common word falls.
assert got["STYLE_FLOURISH"] > 1.5, got
assert got["COMMON_WORD"] < 1, got
PY

run lint --rules "$T/rules" --scores "$T/fit.scores"
check "lint accepts the scores file" test "$rc" -eq 0

# The false alarm g10 (hand-set 6 >= tag 5) is under tag with the fitted scores.
run scan --json --no-state --rules "$T/rules" "$T/mail/genuine/g10.eml"
check "hand-set scores tag g10" grep -q '"action":"tag"' "$T/out"
run scan --json --no-state --rules "$T/rules" --scores "$T/fit.scores" "$T/mail/genuine/g10.eml"
check "fitted scores leave g10 untagged" grep -q '"action":"none"' "$T/out"

# In the rules directory, the scores file is read by every loader.
cp "$T/fit.scores" "$T/rules/90-fit.scores"
run scan --json --no-state --rules "$T/rules" "$T/mail/slop/s7.eml"
check "scan uses the directory's scores file" python3 - "$T/out" "$T/fit.scores" <<'PY'
import json, sys
res = json.loads(open(sys.argv[1]).readline())
want = [float(l.split()[2]) for l in open(sys.argv[2]) if l.startswith("score GAP_ALPHA ")][0]
assert abs(res["score"] - want) < 0.05, (res["score"], want)
PY
rm "$T/rules/90-fit.scores"

# Deterministic: a refit writes the same bytes.
run fit $FIT "$T/labels.tsv"
check "refit gives the same report" cmp "$T/out" "$T/out1"
cp "$T/fit.scores" "$T/fit1.scores"
run fit $FIT "$T/labels.tsv"
check "refit gives the same scores file" cmp "$T/fit.scores" "$T/fit1.scores"
run fit $FIT --seed 7 "$T/labels.tsv"
grep -v '^#' "$T/fit1.scores" >"$T/body1"
grep -v '^#' "$T/fit.scores" >"$T/body2"
check "another seed changes only the folds, not the fit on all" cmp "$T/body1" "$T/body2"

# Grouped folds. Case "casex" is three near-copies whose only gap,
# GAP_CASEX, no other message has; with its source held out whole, the
# rule has no training data and keeps its prior (2) exactly, so each
# copy's cross-validated score is 2.00. A split by message would train on
# the other copies and raise it. The fit on all messages does raise it.
cat >>"$T/rules/10-fit.rules" <<'RULES'
rule GAP_CASEX
    describe the case's own gap
    score 2
    match body /\bgapcasex\b/
RULES
for i in 1 2 3; do msg slop "x$i" "gapcasex, near-copy $i"; done
# An mbox of three messages on one unnamed line: one source.
for i in 1 2 3; do
    printf 'From m%s@example.org Mon Jan  1 00:00:00 2024\n' "$i"
    printf 'From: M <m%s@example.org>\nSubject: m%s\nMessage-ID: <m%s@fit.invalid>\n\ncommonword %s\n\n' \
        "$i" "$i" "$i" "$i"
done >"$T/mail/genuine/thread.mbox"
{
    for i in 1 2 3 4 5 6 7; do echo "mail/slop/s$i.eml	slop	flagged	case-s$i"; done
    for i in 1 2 3; do echo "mail/slop/x$i.eml	slop	flagged	casex"; done
    for i in 1 2 3 4; do echo "mail/genuine/g$i.eml	genuine	genuine_patch	list-a"; done
    for i in 7 8 9 10 11; do echo "mail/genuine/g$i.eml	genuine	genuine_patch	list-b"; done
    echo "mail/genuine/g5.eml	genuine	disclosed	disclosed"
    echo "mail/genuine/g6.eml	genuine	disclosed	disclosed"
    echo "mail/genuine/thread.mbox	genuine	thread"
} >"$T/grouped.tsv"
run fit --rules "$T/rules" --folds all --fp-limit 0 --cv-out "$T/cv.tsv" -o "$T/grouped.scores" \
    "$T/grouped.tsv"
cp "$T/out" "$T/grouped.out"
check "grouped fit runs" test "$rc" -eq 0
check "grouped fit counts sources: 11 named and one mbox" \
    grep -q '^slopctl fit: 24 messages (10 slop, 14 genuine) in 4 groups, 12 sources' "$T/out"
check "leave-one-source-out: a fold per source" \
    grep -q '^cross-validated (leave-one-source-out, 12 folds)' "$T/out"
check "one row per source in a group of several sources" \
    sh -c "grep -q '^    casex ' '$T/out' && grep -q '^    list-a ' '$T/out' && ! grep -q '^    disclosed ' '$T/out'"
check "no source straddles folds; one source per fold" python3 - "$T/cv.tsv" <<'PY'
import sys
fold_of, src_of = {}, {}
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if not l.startswith("#")]
assert len(rows) == 24, len(rows)
for path, index, cls, group, source, fold, *_ in rows:
    key = source if source != "-" else path
    assert fold_of.setdefault(key, fold) == fold, (key, fold)
    assert src_of.setdefault(fold, key) == key, (fold, key)
assert len(fold_of) == 12, fold_of
assert [r[1] for r in rows if r[0].endswith("thread.mbox")] == ["0", "1", "2"], rows
PY
check "a held-out case's own rule keeps its prior in its fold" python3 - "$T/cv.tsv" "$T/grouped.scores" <<'PY'
import sys
cv = [l.split("\t") for l in open(sys.argv[1]) if "/x" in l.split("\t")[0]]
assert len(cv) == 3, cv
for r in cv:
    assert r[4] == "casex" and float(r[6]) == 2.0 and float(r[8]) == 2.0, r
fitted = [float(l.split()[2]) for l in open(sys.argv[2]) if l.startswith("score GAP_CASEX ")]
assert fitted and fitted[0] > 2.0, fitted
PY
check "every row's interval is the 95% Wilson interval of its counts" python3 - "$T/out" "$(dirname "$0")" <<'PY'
import re, sys
sys.path.insert(0, sys.argv[2])
from wilson import wilson
rows = 0
cell = r"\|\s+(\d+)\s+[\d.]+%\s+\[\s*([\d.]+),\s*([\d.]+)\]\s+\d+\s+"
for line in open(sys.argv[1]):
    m = re.match(r"^\s+\S.*?\s(slop|genuine)\s+(\d+)\s" + cell + cell + "$", line)
    if not m:
        continue
    n = int(m.group(2))
    for k, lo, hi in (m.group(3, 4, 5), m.group(6, 7, 8)):
        wl, wh = wilson(int(k), n)
        assert abs(wl - float(lo)) < 0.051 and abs(wh - float(hi)) < 0.051, (line, wl, wh)
    rows += 1
assert rows >= 10, rows
PY
run fit --rules "$T/rules" --folds 3 --fp-limit 0 --cv-out "$T/cv3.tsv" "$T/grouped.tsv"
check "3 folds of whole sources: no source straddles" python3 - "$T/cv3.tsv" <<'PY'
import sys
fold_of = {}
for l in open(sys.argv[1]):
    if l.startswith("#"):
        continue
    r = l.split("\t")
    key = r[4] if r[4] != "-" else r[0]
    assert fold_of.setdefault(key, r[5]) == r[5], (key, r)
assert set(fold_of.values()) == {"0", "1", "2"}, fold_of
PY
run fit --rules "$T/rules" --folds all --fp-limit 0 --cv-out "$T/cv.tsv" -o "$T/grouped.scores" \
    "$T/grouped.tsv"
check "grouped refit gives the same report" cmp "$T/grouped.out" "$T/out"
printf 'mail/slop/s1.eml\tslop\tflagged\tone\nmail/genuine/g1.eml\tgenuine\tgenuine_patch\tone\n' \
    >"$T/onesource.tsv"
run fit --rules "$T/rules" --folds all "$T/onesource.tsv"
check "one source only cannot be cross-validated: a data error" \
    sh -c "test $rc -eq 65 && grep -q 'two sources or more' '$T/err'"

# --project: a rule of another profile is off in the fit as in a scan.
mkdir -p "$T/prules"
cat >"$T/prules/10-p.rules" <<'RULES'
rule GAP_KERNEL_ONLY
    describe a gap the kernel profile checks
    score 2
    profile kernel
    match body /\bgapalpha\b/
rule GAP_ANY
    describe a gap every profile checks
    score 2
    match body /\bgapbeta\b/
RULES
run fit --rules "$T/prules" --folds 3 "$T/labels.tsv"
check "the default profile fits the kernel rule" \
    sh -c "test $rc -le 1 && grep -q '^never matched: none' '$T/out'"
run fit --rules "$T/prules" --folds 3 --project generic "$T/labels.tsv"
check "--project generic: the kernel rule never holds" \
    sh -c "test $rc -le 1 && grep -q '^never matched: GAP_KERNEL_ONLY' '$T/out'"
run fit --rules "$T/prules" --project 'Bad Name' "$T/labels.tsv"
check "a bad --project is a usage error" test "$rc" -eq 64

# With state (read-only): a MAINTAINERS index is enough to open one.
printf 'FOO DRIVER\nM:\tA Maintainer <a@example.org>\nF:\tdrivers/foo/\n' >"$T/MAINTAINERS"
run import maintainers --state "$T/state" "$T/MAINTAINERS"
run fit --rules "$T/rules" --folds 3 --state "$T/state" "$T/labels.tsv"
check "fit reads a state directory" \
    sh -c "test $rc -eq 0 && grep -q '^slopctl fit: 18 messages' '$T/out'"
run fit --rules "$T/rules" --state "$T/no-state" "$T/labels.tsv"
check "a missing state directory: no input" test "$rc" -eq 66

# Errors.
printf 'score NO_SUCH_RULE 1\n' >"$T/bad.scores"
run lint --rules "$T/rules" --scores "$T/bad.scores"
check "lint reports an unknown rule in a scores file at file:line" \
    sh -c "test $rc -eq 1 && grep -q 'bad.scores:1: unknown rule' '$T/out'"
printf 'mail/slop/s1.eml\tslop\nmail/slop/s2.eml\tmaybe\n' >"$T/badlabels.tsv"
run fit --rules "$T/rules" "$T/badlabels.tsv"
check "a bad class is a data error at file:line" \
    sh -c "test $rc -eq 65 && grep -q 'badlabels.tsv:2:' '$T/err'"
run fit --rules "$T/rules" "$T/nonexistent.tsv"
check "missing labels file: no input" test "$rc" -eq 66
run fit --rules "$T/rules" --folds 1 "$T/labels.tsv"
check "bad --folds is a usage error" test "$rc" -eq 64
printf 'mail/slop/s1.eml\tslop\nmail/slop/s2.eml\tslop\nmail/slop/s3.eml\tslop\n' >"$T/oneclass.tsv"
run fit --rules "$T/rules" "$T/oneclass.tsv"
check "one class only is a data error" test "$rc" -eq 65

finish
