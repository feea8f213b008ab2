#!/bin/sh
# Start or stop a private spamd for bench/: local tests only (-L) with the
# site configuration in bench/peers/spamassassin/, the stock rules of the
# Debian package, one child (one core, as the per-core comparison needs),
# listening on 127.0.0.1:PORT, log and PID file in DIR. Stopped by its PID.
# Usage: spamd.sh start DIR PORT [CHILDREN] | spamd.sh stop DIR | spamd.sh pid DIR
# Exit 77 when spamd is not installed.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
. "$here/../../tests/milter/mta-common.sh"
cmd=${1:-}
dir=${2:-}
[ -n "$cmd" ] && [ -n "$dir" ] || {
    sed -n 6,7p "$0" >&2
    exit 64
}

pid_of() { pidfile_pid "$dir/spamd.pid"; }

case "$cmd" in
start)
    need /usr/sbin/spamd spamc
    port=$3
    children=${4:-1}
    mkdir -p "$dir/site"
    chmod 755 "$dir" "$dir/site"
    # The site directory replaces /etc/spamassassin, whose *.pre files
    # load the plugins; keep them and add our local.cf.
    cp /etc/spamassassin/*.pre "$dir/site/"
    cp "$here/spamassassin/local.cf" "$dir/site/local.cf"
    user=""
    [ "$(id -u)" -eq 0 ] && user="-u nobody"
    # shellcheck disable=SC2086
    /usr/sbin/spamd $user -L -x --siteconfigpath="$dir/site" \
        --listen=127.0.0.1:"$port" --allowed-ips=127.0.0.1 \
        --min-children="$children" --max-children="$children" --min-spare=1 --max-spare="$children" \
        --syslog="$dir/spamd.log" -r "$dir/spamd.pid" -d >"$dir/start.log" 2>&1 || {
        cat "$dir/start.log" >&2
        exit 1
    }
    if ! poll "pid_of >/dev/null && ss -Hltn 'sport = :$port' | grep -q ." 60; then
        echo "spamd.sh: spamd did not come up on port $port" >&2
        tail -20 "$dir/spamd.log" >&2 2>/dev/null || true
        exit 1
    fi
    ;;
stop)
    pidfile_stop "$dir/spamd.pid"
    ;;
pid) pid_of ;;
*)
    echo "spamd.sh: unknown command '$cmd'" >&2
    exit 64
    ;;
esac
