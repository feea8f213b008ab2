#!/bin/sh
# Start or stop a private rspamd for bench/: configuration from
# bench/peers/rspamd/ over the Debian package's stock files, state, logs and
# PID file in DIR, a normal worker (rspamc) and a milter-mode proxy on
# loopback ports. Stopped by the PID it wrote, with bounded waits.
# Usage: rspamd.sh start DIR NORMAL_PORT PROXY_PORT | rspamd.sh stop DIR
# Exit 77 when rspamd is not installed.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
. "$here/../../tests/milter/mta-common.sh"
cmd=${1:-}
dir=${2:-}
[ -n "$cmd" ] && [ -n "$dir" ] || {
    sed -n 6,7p "$0" >&2
    exit 64
}

pid_of() { pidfile_pid "$dir/run/rspamd.pid"; }

case "$cmd" in
start)
    need rspamd
    normal=$3 proxy=$4
    mkdir -p "$dir/db" "$dir/run" "$dir/log"
    chmod 755 "$dir"
    user=""
    if [ "$(id -u)" -eq 0 ] && id _rspamd >/dev/null 2>&1; then
        chown _rspamd "$dir/db" "$dir/run" "$dir/log"
        user="-u _rspamd -g _rspamd"
    fi
    # shellcheck disable=SC2086
    rspamd $user -c "$here/rspamd/rspamd.conf" \
        --var=CONFDIR=/etc/rspamd --var=LOCAL_CONFDIR="$here/rspamd" \
        --var=DBDIR="$dir/db" --var=RUNDIR="$dir/run" --var=LOGDIR="$dir/log" \
        --var=NORMAL_BIND="127.0.0.1:$normal" --var=PROXY_BIND="127.0.0.1:$proxy" \
        >"$dir/start.log" 2>&1 || {
        cat "$dir/start.log" "$dir/log/rspamd.log" >&2 2>/dev/null
        exit 1
    }
    # Hyperscan compiles the regexps on first start; allow for it.
    if ! poll "pid_of >/dev/null && ss -Hltn 'sport = :$normal' | grep -q . && ss -Hltn 'sport = :$proxy' | grep -q ." 120; then
        echo "rspamd.sh: rspamd did not come up on $normal/$proxy" >&2
        tail -20 "$dir/log/rspamd.log" >&2 2>/dev/null || true
        exit 1
    fi
    ;;
stop)
    pidfile_stop "$dir/run/rspamd.pid"
    ;;
pid) pid_of ;;
*)
    echo "rspamd.sh: unknown command '$cmd'" >&2
    exit 64
    ;;
esac
