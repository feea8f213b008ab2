#!/bin/sh
# The state end to end (e2e.sh) again with the shared tables in a real,
# private redis-server: duplicates and floods found through Redis, the
# keys where docs/state.md says, the local LMDB tables for them left
# empty, db stats naming both, and a clean failure when Redis is gone.
# Usage: sh redis.sh SLOPCTL RULES_DIR
set -u
if [ $# -ne 2 ]; then
    echo "usage: sh redis.sh SLOPCTL RULES_DIR" >&2
    exit 2
fi
SLOPCTL=$1
RULES=$2
HERE=$(cd "$(dirname "$0")" && pwd)
command -v redis-server >/dev/null 2>&1 || {
    echo "redis-server is needed (scripts/install-deps --test)" >&2
    exit 1
}
. "$HERE/redis-lib.sh"
T=$(mktemp -d "${TMPDIR:-/tmp}/slop-redis.XXXXXX") || exit 1
trap 'redis_stop; rm -rf "$T"' EXIT
trap 'exit 1' HUP INT TERM
redis_start "$T" || exit 1

fail=0
ok() { printf 'ok - %s\n' "$1"; }
not_ok() {
    fail=$((fail + 1))
    printf 'not ok - %s\n' "$1"
}
check() {
    desc=$1
    shift
    if "$@"; then ok "$desc"; else not_ok "$desc"; fi
}

cat >"$T/slopctl" <<EOS
#!/bin/sh
exec "$SLOPCTL" --state-backend redis --redis-server "unix:$REDIS_SOCK" --redis-prefix e2e: "\$@"
EOS
chmod +x "$T/slopctl"

SLOP_E2E_SHARED=1 sh "$HERE/e2e.sh" "$T/slopctl" "$RULES" >"$T/e2e.out" 2>&1
rc=$?
sed 's/^/# e2e: /' "$T/e2e.out" | grep -v '^# e2e: ok' | head -40
check "state e2e passes with the shared tables in Redis" [ "$rc" -eq 0 ]

n=$(redis-cli -s "$REDIS_SOCK" --scan --pattern 'e2e:fp:*' | wc -l)
check "fingerprints are Redis keys with a TTL ($n)" sh -c "[ $n -gt 0 ] &&
    k=\$(redis-cli -s '$REDIS_SOCK' --scan --pattern 'e2e:fp:*' | head -1) &&
    [ \$(redis-cli -s '$REDIS_SOCK' ttl \"\$k\") -gt 86400 ]"
check "sender counts are keyed by a hash tag of the sender" \
    sh -c "redis-cli -s '$REDIS_SOCK' --scan --pattern 'e2e:{sam@reporter.example}:day:*' | grep -q ."
check "simhash bands are sorted sets" \
    sh -c "k=\$(redis-cli -s '$REDIS_SOCK' --scan --pattern 'e2e:band:*' | head -1) &&
           [ \"\$(redis-cli -s '$REDIS_SOCK' type \"\$k\")\" = zset ]"

mkdir "$T/st"
"$T/slopctl" scan --json --rules "$RULES" --state "$T/st" --record "$HERE/../fixtures/det-genuine-report.eml" \
    >/dev/null 2>"$T/err" || true
"$T/slopctl" db stats --state "$T/st" >"$T/stats" 2>&1
check "db stats: the Redis side counted" grep -qE '^ +seen_fp +[1-9][0-9]* keys' "$T/stats"
check "db stats: the local seen_fp table stays empty" grep -qE '^ +seen_fp +0 entries' "$T/stats"

# A server that answers with an error (a user allowed to read only): the
# failed record names Redis, not the state directory.
redis-cli -s "$REDIS_SOCK" ACL SETUSER reader on '>reader-pw' '~*' +@read +ping +auth >/dev/null
printf 'reader-pw\n' >"$T/reader.pw"
"$T/slopctl" --redis-user reader --redis-password-file "$T/reader.pw" scan --json --rules "$RULES" \
    --state "$T/st" --record "$HERE/../fixtures/det-genuine-report.eml" >/dev/null 2>"$T/err"
check "a Redis error reply to a record names Redis" \
    grep -q "cannot record .* in Redis 'unix:$REDIS_SOCK': .*Redis protocol error" "$T/err"

# slopctl -c reads the shared-state settings from the daemon's file
# (config_redis_options()): the prefix finds the keys above, the user and
# password file make the same record fail as the reader's.
cat >"$T/milter.conf" <<EOC
StateBackend redis
RedisServer unix:$REDIS_SOCK
RedisPrefix e2e:
RedisUser reader
RedisPasswordFile $T/reader.pw
EOC
"$SLOPCTL" -c "$T/milter.conf" db stats --state "$T/st" >"$T/stats" 2>&1
check "-c: db stats counts the keys under the file's RedisPrefix" \
    grep -qE '^ +seen_fp +[1-9][0-9]* keys' "$T/stats"
"$SLOPCTL" -c "$T/milter.conf" scan --json --rules "$RULES" --state "$T/st" --record \
    "$HERE/../fixtures/det-genuine-report.eml" >/dev/null 2>"$T/err"
check "-c: a record as the file's RedisUser with its password is refused" \
    grep -q "cannot record .* in Redis 'unix:$REDIS_SOCK': .*Redis protocol error" "$T/err"

redis_stop
"$T/slopctl" scan --json --rules "$RULES" --state "$T/st" "$HERE/../fixtures/det-genuine-report.eml" \
    >/dev/null 2>"$T/err"
rc=$?
check "slopctl with Redis gone: EX_UNAVAILABLE and a reason ($rc)" \
    sh -c "[ $rc -eq 69 ] && grep -q 'Redis' '$T/err'"

[ "$fail" -eq 0 ]
