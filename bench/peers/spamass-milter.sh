#!/bin/sh
# Start or stop a private spamass-milter for bench/: a UNIX socket in DIR
# (mode 0666 so Postfix's smtpd reaches it), handing each message to the
# spamd of spamd.sh on 127.0.0.1:SPAMD_PORT through spamc. Stopped by its PID.
# Usage: spamass-milter.sh start DIR SPAMD_PORT | spamass-milter.sh stop DIR
# The socket is DIR/spamass.sock. Exit 77 when spamass-milter is missing.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
. "$here/../../tests/milter/mta-common.sh"
cmd=${1:-}
dir=${2:-}
[ -n "$cmd" ] && [ -n "$dir" ] || {
    sed -n 6,7p "$0" >&2
    exit 64
}

pid_of() { pidfile_pid "$dir/spamass-milter.pid"; }

case "$cmd" in
start)
    need spamass-milter spamc
    port=$3
    mkdir -p "$dir"
    chmod 755 "$dir"
    rm -f "$dir/spamass.sock"
    # Without -f it stays in the foreground; run it in the background
    # ourselves so its PID is the one we record.
    (umask 000; exec spamass-milter -p "$dir/spamass.sock" -- -d 127.0.0.1 -p "$port") \
        >"$dir/spamass-milter.log" 2>&1 &
    echo $! >"$dir/spamass-milter.pid"
    if ! poll "[ -S '$dir/spamass.sock' ]" 20; then
        echo "spamass-milter.sh: no socket at $dir/spamass.sock" >&2
        cat "$dir/spamass-milter.log" >&2
        exit 1
    fi
    chmod 666 "$dir/spamass.sock"
    ;;
stop)
    pidfile_stop "$dir/spamass-milter.pid"
    ;;
pid) pid_of ;;
*)
    echo "spamass-milter.sh: unknown command '$cmd'" >&2
    exit 64
    ;;
esac
