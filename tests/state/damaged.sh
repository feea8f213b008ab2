#!/bin/sh
# A damaged state: data.mdb cut short (as a full disk or a bad copy
# leaves it), emptied, a FIFO, of a newer schema, and with 50 damaged
# pages under whole meta pages (the daemon answering the next 100
# messages through miltertest). slop-milter (-n and a real start) and
# slopctl db stats must name the damage and exit 73, never die by a
# signal; OnStateError run-without starts without state; slopctl db check
# tells a whole environment from a damaged one, and db recover copies a
# whole one exactly.
# Usage: sh damaged.sh SLOPCTL SLOP_MILTER RULES_DIR
set -u

if [ $# -ne 3 ]; then
    echo "usage: sh damaged.sh SLOPCTL SLOP_MILTER RULES_DIR" >&2
    exit 2
fi
SLOPCTL=$1
MILTER=$2
RULES=$3
HERE=$(cd "$(dirname "$0")" && pwd)
MSGS=$HERE/../milter/msgs
unset SLOP_RULES_DIR STATE_DIRECTORY RUNTIME_DIRECTORY

T=$(mktemp -d "${TMPDIR:-/tmp}/slop-damaged.XXXXXX") || exit 1
pid=
cleanup() {
    [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
    rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' HUP INT TERM

pass=0
fail=0
ok() {
    pass=$((pass + 1))
    printf 'ok - %s\n' "$1"
}
not_ok() {
    fail=$((fail + 1))
    printf 'not ok - %s (exit %s)\n' "$1" "$rc"
    for f in "$T/out" "$T/err"; do
        [ -s "$f" ] && sed 's/^/#   /' "$f" | head -20
    done
}
# expect DESC WANT_EXIT PATTERN CMD...: CMD exits WANT_EXIT (never by a
# signal: a shell reports those as 128+n) and stderr matches PATTERN
# (empty: anything), within $limit seconds (30 when unset).
expect() {
    desc=$1 want=$2 pattern=$3
    shift 3
    timeout -k 5 "${limit:-30}" "$@" >"$T/out" 2>"$T/err"
    rc=$?
    if [ "$rc" -eq "$want" ] && { [ -z "$pattern" ] || grep -Eq -- "$pattern" "$T/err"; }; then
        ok "$desc"
    else
        not_ok "$desc"
    fi
}

# ---- a state of some size: a tree index of a few hundred names ----
mkdir "$T/src"
i=0
while [ $i -lt 400 ]; do
    printf 'int handler_%d(void)\n{\n\treturn %d;\n}\n#define LIMIT_%d 1\n' $i $i $i \
        >"$T/src/f$i.c"
    i=$((i + 1))
done
if ! "$SLOPCTL" import tree --state "$T/good" "$T/src" >"$T/out" 2>"$T/err"; then
    rc=$?
    not_ok "import a tree"
    exit 1
fi
size=$(wc -c <"$T/good/data.mdb")
if [ "$size" -le 16384 ]; then
    echo "Bail out! the state is only $size bytes: nothing to cut short"
    exit 1
fi

expect "db check: a whole state is OK" 0 '' "$SLOPCTL" db check --state "$T/good"
grep -q "tree_sym .* 800 of 800 entries read" "$T/out" || {
    rc=0
    not_ok "db check walks every entry"
}

conf() { # conf DIR [EXTRA]: a configuration using state DIR
    printf 'RulesDir %s\nStateDir %s\nSocket local:%s/milter.sock\nSyslog no\n%b' \
        "$RULES" "$1" "$T" "${2:-}" >"$T/milter.conf"
}

damage() { # damage NAME SIZE: a copy of the good state cut to SIZE bytes
    rm -rf "${T:?}/$1"
    cp -a "$T/good" "$T/$1"
    truncate -s "$2" "$T/$1/data.mdb"
}

for kind in truncated empty; do
    if [ $kind = truncated ]; then
        damage $kind 8000
        why='8000 bytes, but transaction'
    else
        damage $kind 0
        why='empty file'
    fi
    msg="data.mdb damaged \\($why"
    expect "$kind: db stats names the damage" 73 "$msg" \
        "$SLOPCTL" db stats --state "$T/$kind"
    expect "$kind: db check names the damage" 73 "$msg" \
        "$SLOPCTL" db check --state "$T/$kind"
    expect "$kind: scan --state names the damage" 73 "$msg" \
        "$SLOPCTL" scan --state "$T/$kind" --rules "$RULES" /dev/null
    conf "$T/$kind"
    expect "$kind: slop-milter -n refuses" 73 "StateDir: $msg" \
        "$MILTER" -n -c "$T/milter.conf"
    expect "$kind: slop-milter refuses to start" 73 "StateDir: $msg" \
        "$MILTER" -f -c "$T/milter.conf"
    if [ -S "$T/milter.sock" ]; then
        rc=73
        not_ok "$kind: no socket is left behind"
    fi
    if [ "$(wc -c <"$T/$kind/data.mdb")" -ne "$( [ $kind = empty ] && echo 0 || echo 8000)" ]; then
        rc=73
        not_ok "$kind: the damaged file is left as it was"
    fi
done

# A data file removed where state existed is no first start.
rm -rf "$T/missing"
cp -a "$T/good" "$T/missing"
rm "$T/missing/data.mdb"
conf "$T/missing"
expect "missing: slop-milter -n refuses" 73 "StateDir: data.mdb damaged \\(missing, where state" \
    "$MILTER" -n -c "$T/milter.conf"

# A FIFO where data.mdb belongs (or lock.mdb): opening it would wait for
# a writer forever. Every program refuses it at once, naming it.
rm -rf "$T/fifo" "$T/fifolock"
cp -a "$T/good" "$T/fifo"
rm "$T/fifo/data.mdb"
mkfifo "$T/fifo/data.mdb"
cp -a "$T/good" "$T/fifolock"
rm -f "$T/fifolock/lock.mdb"
mkfifo "$T/fifolock/lock.mdb"
# Ten seconds each: a hang is the failure, and would take minutes in all.
limit=10
for d in fifo fifolock; do
    [ $d = fifo ] && what='data.mdb damaged \(a FIFO, not a regular file' ||
        what='data.mdb damaged \(lock.mdb is a FIFO, not a regular file'
    conf "$T/$d"
    expect "$d: slop-milter -n refuses at once" 73 "StateDir: $what" \
        "$MILTER" -n -c "$T/milter.conf"
    expect "$d: slop-milter refuses to start at once" 73 "StateDir: $what" \
        "$MILTER" -f -c "$T/milter.conf"
    expect "$d: db stats refuses at once" 73 "$what" "$SLOPCTL" db stats --state "$T/$d"
    expect "$d: db check refuses at once" 73 "$what" "$SLOPCTL" db check --state "$T/$d"
    expect "$d: scan --state refuses at once" 73 "$what" \
        "$SLOPCTL" scan --state "$T/$d" --rules "$RULES" /dev/null
done
limit=

# A state written by a newer release (schema 99): both programs refuse it
# in the same words, db check included.
if command -v mdb_load >/dev/null 2>&1; then
    rm -rf "$T/newer"
    cp -a "$T/good" "$T/newer"
    # "schema_version" -> 99 as a host-order uint32 (little-endian here).
    printf 'VERSION=3\nformat=bytevalue\ndatabase=meta\ntype=btree\nHEADER=END\n %s\n %s\nDATA=END\n' \
        736368656d615f76657273696f6e 63000000 | mdb_load -s meta "$T/newer"
    what='data.mdb has schema 99, newer than the [0-9]+ this release reads'
    conf "$T/newer"
    expect "schema 99: slop-milter -n refuses" 73 "cannot open StateDir '$T/newer': $what" \
        "$MILTER" -n -c "$T/milter.conf"
    expect "schema 99: slop-milter refuses to start" 73 "cannot open StateDir '$T/newer': $what" \
        "$MILTER" -f -c "$T/milter.conf"
    expect "schema 99: db check says so" 73 "cannot open state in '$T/newer': $what" \
        "$SLOPCTL" db check --state "$T/newer"
    expect "schema 99: db stats says so" 73 "cannot open state in '$T/newer': $what" \
        "$SLOPCTL" db stats --state "$T/newer"
fi

# OnStateError run-without: the daemon serves, without state.
conf "$T/truncated" "OnStateError run-without\n"
expect "run-without: slop-milter -n says OK" 0 "running without state" \
    "$MILTER" -n -c "$T/milter.conf"
"$MILTER" -f -c "$T/milter.conf" >"$T/out" 2>"$T/err" &
pid=$!
n=0
while [ ! -S "$T/milter.sock" ] && [ $n -lt 100 ] && kill -0 "$pid" 2>/dev/null; do
    sleep 0.1
    n=$((n + 1))
done
rc=listening
if [ -S "$T/milter.sock" ] && grep -q "running without state" "$T/err"; then
    ok "run-without: slop-milter starts and listens"
else
    not_ok "run-without: slop-milter starts and listens"
fi
kill "$pid" 2>/dev/null
wait "$pid"
rc=$?
pid=
if [ "$rc" -eq 0 ]; then ok "run-without: stops cleanly"; else not_ok "run-without: stops cleanly"; fi

# ---- damaged pages: the meta pages whole, 50 pages overwritten ----
# LMDB trusts its pages: a damaged branch or leaf page makes it abort or
# fault in the process that reads it. Every program must find the damage
# first (a page walk in a child when the file changed since it was last
# found whole), and the daemon serve on under OnStateError.
mkdir "$T/bigsrc"
awk -v dir="$T/bigsrc" 'BEGIN {
    for (i = 0; i < 8000; i++) {
        f = dir "/f" i ".c"
        printf "int handler_%d(void)\n{\n\treturn %d;\n}\n", i, i > f
        printf "static int helper_%d_x(int a)\n{\n\treturn a;\n}\n#define LIMIT_%d 1\n", i, i > f
        close(f)
    }
}'
"$SLOPCTL" import tree --state "$T/big" "$T/bigsrc" >"$T/out" 2>"$T/err" || {
    rc=$?
    not_ok "import a large tree"
}
"$SLOPCTL" scan --record --state "$T/big" --rules "$RULES" "$MSGS"/*.eml >/dev/null 2>"$T/err" || {
    rc=$?
    not_ok "record the test messages"
}
expect "pages: db check: the whole state is OK" 0 '' "$SLOPCTL" db check --state "$T/big"

# damage_pages DIR N SEED: overwrite N distinct pages past the two meta
# pages, chosen by awk's generator from SEED, with pages of slopctl's own
# binary (bytes that are no LMDB page).
damage_pages() {
    pages=$(($(wc -c <"$1/data.mdb") / 4096))
    binpages=$(($(wc -c <"$SLOPCTL") / 4096))
    awk -v n="$2" -v p="$pages" -v seed="$3" 'BEGIN {
        srand(seed)
        while (k < n && k < p - 2) {
            x = 2 + int(rand() * (p - 2))
            if (!(x in s)) { s[x] = 1; k++; print x }
        }
    }' | while read -r pg; do
        dd if="$SLOPCTL" of="$1/data.mdb" bs=4096 skip=$((pg % (binpages - 1) + 1)) seek="$pg" \
            count=1 conv=notrunc 2>/dev/null
    done
}

# wait_socket PID: until the daemon listens (bounded), or is gone.
wait_socket() {
    n=0
    while [ ! -S "$T/milter.sock" ] && [ $n -lt 300 ] && kill -0 "$1" 2>/dev/null; do
        sleep 0.1
        n=$((n + 1))
    done
}

pages_want='data.mdb damaged \(table '
for seed in 1 2; do
    d=pages$seed
    rm -rf "${T:?}/$d"
    cp -a "$T/big" "$T/$d"
    damage_pages "$T/$d" 50 $seed
    cp -a "$T/$d" "$T/$d.slopctl"
    expect "$d: slopctl scan --state names the damage" 73 "$pages_want" \
        "$SLOPCTL" scan --state "$T/$d.slopctl" --rules "$RULES" "$MSGS/genuine-patch.eml"
    expect "$d: the next slopctl learns it without a walk" 73 "$pages_want" \
        "$SLOPCTL" db stats --state "$T/$d.slopctl"
    conf "$T/$d"
    expect "$d: slop-milter -n names the damage" 73 "StateDir: $pages_want" \
        "$MILTER" -n -c "$T/milter.conf"
    conf "$T/$d" "OnStateError run-without\n"
    rm -f "$T/milter.sock"
    "$MILTER" -f -c "$T/milter.conf" >"$T/out" 2>"$T/daemon.err" &
    pid=$!
    wait_socket "$pid"
    if command -v miltertest >/dev/null 2>&1; then
        timeout -k 5 600 miltertest -s "$HERE/mt-damaged.lua" -D WORK="$T" -D MSGS="$MSGS" \
            -D COUNT=100 >"$T/mt.out" 2>&1
        rc=$?
        if [ $rc -eq 0 ] && grep -q "answered 100 of 100" "$T/mt.out"; then
            ok "$d: the daemon answers the next 100 messages"
        else
            sed 's/^/#   mt: /' "$T/mt.out" | tail -5
            not_ok "$d: the daemon answers the next 100 messages"
        fi
    fi
    rc=alive
    if kill -0 "$pid" 2>/dev/null; then ok "$d: the daemon still runs"; else not_ok "$d: the daemon still runs"; fi
    kill "$pid" 2>/dev/null
    wait "$pid"
    rc=$?
    pid=
    if [ $rc -eq 0 ]; then ok "$d: the daemon stops cleanly"; else not_ok "$d: the daemon stops cleanly"; fi
    n=$(grep -cE "StateDir: ${pages_want}.*running without state" "$T/daemon.err")
    rc=$n
    if [ "$n" -eq 1 ]; then ok "$d: one log line names the damage"; else
        sed 's/^/#   daemon: /' "$T/daemon.err" | tail -5
        not_ok "$d: one log line names the damage"
    fi
done

# A page damaged while the daemon runs, after its start's walk: LMDB meets
# it. Every branch page made to count one key (mp_lower 18) fails LMDB's
# "NUMKEYS(mp) > 1" assertion at the next search. The assertion handler
# records the damage before LMDB aborts: one abort, then a degraded start.
rm -rf "$T/live"
cp -a "$T/big" "$T/live"
conf "$T/live"
rm -f "$T/milter.sock"
"$MILTER" -f -c "$T/milter.conf" >"$T/out" 2>"$T/daemon.err" &
pid=$!
wait_socket "$pid"
pages=$(($(wc -c <"$T/live/data.mdb") / 4096))
pg=2
branches=0
while [ $pg -lt "$pages" ]; do
    flags=$(od -An -tu2 -j $((pg * 4096 + 10)) -N2 "$T/live/data.mdb" | tr -d ' ')
    if [ $((flags & 1)) -eq 1 ]; then
        printf '\022\000' | dd of="$T/live/data.mdb" bs=1 seek=$((pg * 4096 + 12)) conv=notrunc \
            2>/dev/null
        branches=$((branches + 1))
    fi
    pg=$((pg + 1))
done
if command -v miltertest >/dev/null 2>&1 && [ $branches -gt 0 ]; then
    timeout -k 5 300 miltertest -s "$HERE/mt-damaged.lua" -D WORK="$T" -D MSGS="$MSGS" \
        -D COUNT=5 >"$T/mt.out" 2>&1
    n=0
    while kill -0 "$pid" 2>/dev/null && [ $n -lt 100 ]; do
        sleep 0.1
        n=$((n + 1))
    done
    kill "$pid" 2>/dev/null
    wait "$pid"
    rc=$?
    pid=
    lmdb_want='data.mdb damaged \(LMDB stopped on a damaged page: .*Assertion'
    if [ $rc -eq 134 ] && grep -Eq "StateDir: $lmdb_want" "$T/daemon.err"; then
        ok "live: LMDB's assertion is logged and recorded before it aborts"
    else
        sed 's/^/#   daemon: /' "$T/daemon.err" | tail -5
        not_ok "live: LMDB's assertion is logged and recorded before it aborts"
    fi
    expect "live: slop-milter -n finds the recorded damage" 73 "StateDir: $lmdb_want" \
        "$MILTER" -n -c "$T/milter.conf"
    expect "live: slopctl finds the recorded damage" 73 "$lmdb_want" \
        "$SLOPCTL" db stats --state "$T/live"
    conf "$T/live" "OnStateError run-without\n"
    rm -f "$T/milter.sock"
    "$MILTER" -f -c "$T/milter.conf" >"$T/out" 2>"$T/daemon.err" &
    pid=$!
    wait_socket "$pid"
    timeout -k 5 300 miltertest -s "$HERE/mt-damaged.lua" -D WORK="$T" -D MSGS="$MSGS" \
        -D COUNT=10 >"$T/mt.out" 2>&1
    rc=$?
    if [ $rc -eq 0 ] && grep -q "answered 10 of 10" "$T/mt.out" && kill -0 "$pid" 2>/dev/null &&
        grep -Eq "StateDir: $lmdb_want.*running without state" "$T/daemon.err"; then
        ok "live: the next start runs without state and answers"
    else
        sed 's/^/#   daemon: /' "$T/daemon.err" | tail -5
        not_ok "live: the next start runs without state and answers"
    fi
    kill "$pid" 2>/dev/null
    wait "$pid"
    pid=
fi

# OnStateError tempfail and accept: the daemon starts over the damage and
# answers every message 4xx at MAIL FROM, or lets it through unscanned.
cat >"$T/down.lua" <<'EOF'
local lib = dofile(MSGS .. "/../lib.lua")
local conn = lib.connect()
mt.macro(conn, SMFIC_MAIL, "i", "DOWN1")
if mt.mailfrom(conn, "casey@example.test") ~= nil then
    error("mt.mailfrom() failed")
end
local r = mt.getreply(conn)
if r == SMFIR_REPLYCODE then
    mt.echo("mail: replycode")
    return
end
mt.disconnect(conn)
conn = lib.connect()
r = lib.send(conn, MSGS .. "/genuine-patch.eml", { qid = "DOWN2" })
mt.echo("message: " .. ((r == SMFIR_CONTINUE or r == SMFIR_ACCEPT) and "passed" or tostring(r)) ..
    (lib.header(conn, "X-Slop-Status") and " scanned" or " unscanned"))
EOF
for how in tempfail accept; do
    conf "$T/pages1" "OnStateError $how\n"
    expect "$how: slop-milter -n starts over damaged pages" 0 "OnStateError $how" \
        "$MILTER" -n -c "$T/milter.conf"
    command -v miltertest >/dev/null 2>&1 || continue
    rm -f "$T/milter.sock"
    "$MILTER" -f -c "$T/milter.conf" >"$T/out" 2>"$T/daemon.err" &
    pid=$!
    wait_socket "$pid"
    timeout -k 5 120 miltertest -s "$T/down.lua" -D WORK="$T" -D MSGS="$MSGS" >"$T/mt.out" 2>&1
    if [ $how = tempfail ]; then want='mail: replycode'; else want='message: passed unscanned'; fi
    rc=$(tail -1 "$T/mt.out")
    if grep -q "$want" "$T/mt.out"; then ok "$how: $want"; else not_ok "$how: $want"; fi
    kill "$pid" 2>/dev/null
    wait "$pid"
    pid=
done

# A walk that found the state whole is not repeated until it changes.
expect "pages: a whole state walked once" 0 '' "$SLOPCTL" db stats --state "$T/big"
if [ -s "$T/big/state.checked" ]; then ok "pages: state.checked records the walk"; else
    rc=none
    not_ok "pages: state.checked records the walk"
fi

# ---- recover ----
expect "db recover: a whole state round-trips" 0 '' \
    "$SLOPCTL" db recover --state "$T/good" "$T/copy"
expect "db check: the copy is OK" 0 '' "$SLOPCTL" db check --state "$T/copy"
if command -v mdb_dump >/dev/null 2>&1; then
    # Every named database, key and value; the map size may differ.
    mdb_dump -a "$T/good" | grep -v '^mapsize=' >"$T/dump.good"
    mdb_dump -a "$T/copy" | grep -v '^mapsize=' >"$T/dump.copy"
    rc=dump
    if [ -s "$T/dump.good" ] && cmp -s "$T/dump.good" "$T/dump.copy"; then
        ok "db recover: the copy holds the same tables, keys and values"
    else
        not_ok "db recover: the copy holds the same tables, keys and values"
    fi
fi
expect "db recover: refuses a directory holding a state" 73 "already holds a state" \
    "$SLOPCTL" db recover --state "$T/good" "$T/copy"
expect "db recover: a truncated state ends without a signal" 65 "copying what can be read" \
    "$SLOPCTL" db recover --state "$T/truncated" "$T/rescued"
expect "db check: what was rescued is a whole state" 0 '' \
    "$SLOPCTL" db check --state "$T/rescued"

printf '1..%d\n' $((pass + fail))
[ "$fail" -eq 0 ]
