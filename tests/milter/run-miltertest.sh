#!/bin/sh
# Run one miltertest script against the built daemon.
# Usage: run-miltertest.sh SLOP_MILTER RULES_DIR SCRIPT.lua
# Exit 77 (ctest skip) when miltertest is missing and SLOP_REQUIRE_INTEGRATION
# is unset; with it set (CI) a missing tool is a failure.
set -u
bin=$1 rules=$2 script=$3
here=$(cd "$(dirname "$0")" && pwd)

if ! command -v miltertest >/dev/null 2>&1; then
    echo "run-miltertest: miltertest not found (Debian package miltertest)"
    if [ -n "${SLOP_REQUIRE_INTEGRATION:-}" ]; then
        echo "0 passed, 1 failed"
        exit 1
    fi
    exit 77
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/slop-mt.XXXXXX") || exit 1
# miltertest stops the daemon it started, unless it crashed: then stop it
# here, by the pid the daemon wrote.
cleanup() {
    if [ -s "$work/slop-milter.pid" ]; then
        kill "$(cat "$work/slop-milter.pid")" 2>/dev/null
    fi
    rm -rf "$work"
}
trap cleanup EXIT INT TERM
miltertest -s "$script" -D SLOP_MILTER="$bin" -D RULES="$rules" \
    -D WORK="$work" -D MSGS="$here/msgs"
rc=$?
if [ "$rc" -ne 0 ]; then
    echo "run-miltertest: $(basename "$script") failed (exit $rc); daemon output above"
fi
exit "$rc"
