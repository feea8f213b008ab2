# Start and stop a private redis-server (Debian package redis-server) for a
# test (helper variables _rl_*): redis_start DIR starts one on DIR/redis.sock (no TCP port) with its
# files in DIR and sets REDIS_PID and REDIS_SOCK; redis_stop stops it by
# its PID. An append-only file synced at each write keeps a granted reply
# claim across a SIGKILL, as a production setup should.
REDIS_PID=
REDIS_SOCK=
redis_start() {
    REDIS_SOCK=$1/redis.sock
    redis-server --port 0 --unixsocket "$REDIS_SOCK" --unixsocketperm 700 \
        --dir "$1" --save "" --appendonly yes --appendfsync always \
        --daemonize no --logfile "$1/redis.log" >/dev/null 2>&1 &
    REDIS_PID=$!
    _rl_n=0
    while [ $_rl_n -lt 100 ]; do
        if [ -S "$REDIS_SOCK" ] && redis-cli -s "$REDIS_SOCK" ping 2>/dev/null | grep -q PONG; then
            return 0
        fi
        sleep 0.1
        _rl_n=$((_rl_n + 1))
    done
    echo "redis-server did not start" >&2
    return 1
}
redis_stop() {
    if [ -n "$REDIS_PID" ]; then
        kill "$REDIS_PID" 2>/dev/null
        wait "$REDIS_PID" 2>/dev/null
        REDIS_PID=
    fi
}
