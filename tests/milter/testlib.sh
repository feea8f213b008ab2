# shellcheck shell=sh
# Shared by the integration scripts e2e.sh, load.sh, privilege.sh,
# reply-safety.sh and quit-nc.sh (sourced, not run; POSIX sh, so the bash
# scripts can source it too).
#
# Provides:
#   skip MESSAGE...       print "NAME: MESSAGE" and exit 77 (skipped), or
#                         exit 1 with a failed summary when
#                         SLOP_REQUIRE_INTEGRATION is set (CI)
#   check NAME CMD...     run CMD; print "ok: NAME" or "FAIL: NAME" and
#                         count it in passed or failed
#   stop_pid PID [TENTHS] SIGTERM, up to TENTHS (default 50) polls 0.1 s
#                         apart, then SIGKILL and reap; no-op for ""
#   stop_daemon           stop_pid on $daemon_pid, then clear it
#   free_port BASE        print a free loopback TCP port (ss(8)), scanning
#                         from BASE plus an offset taken from our pid
#   variant SRC DST TAG [HEADER...]
#                         copy the message SRC to DST with TAG added to its
#                         Message-ID and the HEADER lines put first
#   world_copy DIR SRC... copy each file or directory SRC into DIR (made
#                         0755), readable by every user: for a daemon that
#                         runs as another uid, which must not need the
#                         checkout (it may sit under a 0700 directory, as
#                         root's home on Debian is)
#   remove_workdir DIR [KEEP]
#                         for the EXIT trap: remove DIR, or keep it and say
#                         so when a check failed or KEEP is not empty
#   h COMMAND [ARGS]      the MTA harness $harness on $mroot
#   mta_cleanup           EXIT trap: stop_daemon, stop the MTA, remove_workdir
#                         $root (kept with SLOP_KEEP_E2E)
#
# Expects, set by the sourcing script:
#   test_name      prefix of skip's and remove_workdir's messages ("load",
#                  "e2e-postfix", ...)
#   passed failed  the counters check updates (start them at 0)
#   daemon_pid     for stop_daemon: the daemon's pid, or ""
#   skip_hint      optional; "no" leaves out skip's line telling how to make
#                  the skip a failure
#
# Helper variables are prefixed with _tl_ (no "local" in POSIX sh) so the
# caller's own variables, such as a loop's n, are never overwritten.

: "${test_name:?set test_name before sourcing testlib.sh}"

skip() {
    echo "$test_name: $*"
    if [ -n "${SLOP_REQUIRE_INTEGRATION:-}" ]; then
        echo "0 passed, 1 failed"
        exit 1
    fi
    if [ "${skip_hint:-yes}" != no ]; then
        echo "$test_name: skipped (set SLOP_REQUIRE_INTEGRATION to make this a failure)"
    fi
    exit 77
}

check() {
    _tl_name=$1
    shift
    if "$@"; then
        passed=$((passed + 1))
        echo "ok: $_tl_name"
    else
        failed=$((failed + 1))
        echo "FAIL: $_tl_name"
    fi
}

stop_pid() {
    _tl_pid=$1 _tl_max=${2:-50} _tl_n=0
    [ -n "$_tl_pid" ] || return 0
    kill "$_tl_pid" 2>/dev/null
    while kill -0 "$_tl_pid" 2>/dev/null && [ "$_tl_n" -lt "$_tl_max" ]; do
        sleep 0.1
        _tl_n=$((_tl_n + 1))
    done
    kill -9 "$_tl_pid" 2>/dev/null
    wait "$_tl_pid" 2>/dev/null
}

stop_daemon() {
    stop_pid "$daemon_pid"
    daemon_pid=""
}

# Other build trees may run these suites at the same time: the scan starts
# at a place that depends on our pid (SLOP_E2E_PORT overrides it), which
# keeps two runs from racing for the same first free port.
free_port() {
    _tl_base=${SLOP_E2E_PORT:-$(($1 + ($$ % 1000) * 7))}
    for _tl_port in $(seq "$_tl_base" $((_tl_base + 200))); do
        if [ -z "$(ss -Hltn "sport = :$_tl_port" 2>/dev/null)" ]; then
            echo "$_tl_port"
            return 0
        fi
    done
    return 1
}

remove_workdir() {
    if [ "$failed" -ne 0 ] || [ -n "${2:-}" ]; then
        echo "$test_name: logs kept in $1"
    else
        rm -rf "$1"
    fi
}

variant() {
    _tl_src=$1 _tl_dst=$2 _tl_tag=$3
    shift 3
    {
        for _tl_line in "$@"; do
            printf '%s\n' "$_tl_line"
        done
        sed "s/^Message-ID: <\([^@]*\)@/Message-ID: <\1.$_tl_tag@/" "$_tl_src"
    } >"$_tl_dst"
}

# h COMMAND [ARGS]: the MTA harness script $harness on the caller's
# instance directory $mroot; a script may define its own h after this.
# shellcheck disable=SC2154 # harness, mroot and root: the sourcing script's
h() {
    _tl_hc=$1
    shift
    sh "$harness" "$_tl_hc" "$mroot" "$@"
}

# The EXIT trap of a script with one daemon ($daemon_pid) and one MTA.
# shellcheck disable=SC2154
mta_cleanup() {
    stop_daemon
    h stop >/dev/null 2>&1
    remove_workdir "$root" "${SLOP_KEEP_E2E:-}"
}

world_copy() {
    _tl_dir=$1
    shift
    mkdir -p "$_tl_dir" && chmod 755 "$_tl_dir" || return 1
    for _tl_src in "$@"; do
        cp -R "$_tl_src" "$_tl_dir/" || return 1
    done
    chmod -R a+rX "$_tl_dir"
}
