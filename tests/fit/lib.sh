# shellcheck shell=sh
# Shared by run.sh and corpus.sh (sourced, not run; POSIX sh).
#
# Provides:
#   T                     a private directory, removed on exit
#   check DESC CMD...     run CMD; print "ok - DESC" or "not ok - DESC"
#                         followed by CMD's output and the files named in
#                         $check_show (30 lines each), and count it
#   finish                print the counts; exit status 0 when none failed
# Expects, set by the sourcing script: test_name (the directory's prefix).

: "${test_name:?set test_name before sourcing lib.sh}"

T=$(mktemp -d "${TMPDIR:-/tmp}/$test_name.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
trap 'exit 1' HUP INT TERM

pass=0
fail=0
check_show=

check() {
    _fl_desc=$1
    shift
    if "$@" >"$T/check.log" 2>&1; then
        pass=$((pass + 1))
        printf 'ok - %s\n' "$_fl_desc"
    else
        fail=$((fail + 1))
        printf 'not ok - %s\n' "$_fl_desc"
        for _fl_f in "$T/check.log" $check_show; do
            [ -s "$_fl_f" ] && sed 's/^/#   /' "$_fl_f" | head -30
        done
    fi
}

finish() {
    printf '%d passed, %d failed\n' "$pass" "$fail"
    [ "$fail" -eq 0 ]
}
