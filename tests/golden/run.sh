#!/bin/sh
# Golden tests: each NAME.eml here is a message we wrote, and NAME.json the
# full expected `slopctl scan --json` line for it. A mismatch prints a diff.
# SLOP_GOLDEN_UPDATE=1 rewrites the .json files from the current output
# instead (review the diff before committing them).
# Usage: sh run.sh SLOPCTL GOLDEN_DIR RULES_DIR
set -u

if [ $# -ne 3 ]; then
    echo "usage: sh run.sh SLOPCTL GOLDEN_DIR RULES_DIR" >&2
    exit 2
fi
SLOPCTL=$1
GOLDEN_DIR=$2
RULES_DIR=$3
unset SLOP_RULES_DIR
# The scan runs inside GOLDEN_DIR so the "file" field is just NAME.eml.
case $SLOPCTL in /*) ;; */*) SLOPCTL=$(pwd)/$SLOPCTL ;; esac
case $RULES_DIR in /*) ;; *) RULES_DIR=$(pwd)/$RULES_DIR ;; esac

cd "$GOLDEN_DIR" || exit 1
T=$(mktemp -d "${TMPDIR:-/tmp}/slop-golden.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
trap 'exit 1' HUP INT TERM

pass=0
fail=0
for eml in *.eml; do
    [ -e "$eml" ] || break
    name=${eml%.eml}
    "$SLOPCTL" scan --json --no-state --rules "$RULES_DIR" "$eml" >"$T/out" 2>"$T/err"
    rc=$?
    # A message that scans cleanly exits 0; anything else is a failure
    # even when updating, so a broken build never writes golden files.
    if [ "$rc" -ne 0 ]; then
        fail=$((fail + 1))
        echo "not ok - $name: slopctl exited $rc"
        sed 's/^/#   /' "$T/err"
        continue
    fi
    if [ "${SLOP_GOLDEN_UPDATE:-0}" = 1 ]; then
        cp "$T/out" "$name.json"
        pass=$((pass + 1))
        echo "updated - $name.json"
        continue
    fi
    if [ ! -f "$name.json" ]; then
        fail=$((fail + 1))
        echo "not ok - $name: no $name.json (run with SLOP_GOLDEN_UPDATE=1 to create it)"
        continue
    fi
    if cmp -s "$name.json" "$T/out"; then
        pass=$((pass + 1))
        echo "ok - $name"
    else
        fail=$((fail + 1))
        echo "not ok - $name: output differs from $name.json"
        diff -u "$name.json" "$T/out" | sed 's/^/#   /'
    fi
done

if [ $((pass + fail)) -eq 0 ]; then
    echo "no .eml files in $GOLDEN_DIR"
    fail=1
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
