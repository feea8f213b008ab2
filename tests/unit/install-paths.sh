#!/bin/sh
# Installed binaries know only installed paths (issue 31 item 5): no file
# `cmake --install` writes holds the source or build directory, and the
# installed daemon's defaults are the system's, while the same build run
# from its tree keeps its state and socket there (make run), as any user.
# usage: install-paths.sh BUILD-DIR SOURCE-DIR [release|sanitize]
# (sanitize: the build keeps its sources' paths for its reports and is
# never installed, so the path check is left out)
set -u
build=$1 src=$2 mode=${3:-release}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/slop-install-paths.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
passed=0 failed=0
test_name=install-paths
# shellcheck source=../milter/testlib.sh
. "$(dirname "$0")/../milter/testlib.sh"

# Stripped, as a package ships them (dh_strip); DESTDIR keeps every file,
# the configuration included, under $tmp.
if ! DESTDIR=$tmp cmake --install "$build" --strip >"$tmp/install.log" 2>&1; then
    cat "$tmp/install.log"
    echo "0 passed, 1 failed"
    exit 1
fi
if [ "$mode" = sanitize ]; then
    echo "skip: a sanitizer build keeps its sources' paths for its reports; never installed"
else
    leaks=$(grep -rlF -e "$src" -e "$build" "$tmp" --exclude=install.log | sed "s|^$tmp||")
    check "no installed file names the source or build tree${leaks:+: $(echo $leaks)}" [ -z "$leaks" ]
fi

sbin=$(find "$tmp" -path '*/sbin/slop-milter' -type f | head -1)
rules=$(find "$tmp" -path '*/share/slop-milter/rules' -type d | head -1)
check "installed daemon and rules found" [ -x "$sbin" ] && [ -d "$rules" ]
printf 'RulesDir %s\n' "$rules" >"$tmp/t.conf"
env -u STATE_DIRECTORY -u RUNTIME_DIRECTORY "$sbin" -c "$tmp/t.conf" --dump-config \
    >"$tmp/installed" 2>&1
check "installed: StateDir /var/lib/slop-milter" grep -qx 'StateDir /var/lib/slop-milter' "$tmp/installed"
check "installed: Socket in /run/slop-milter" \
    grep -qx 'Socket local:/run/slop-milter/slop-milter.sock' "$tmp/installed"

env -u STATE_DIRECTORY -u RUNTIME_DIRECTORY "$build/milter/slop-milter" --dump-config \
    >"$tmp/tree" 2>&1
check "build tree: StateDir in it" grep -qx "StateDir $build/var/state" "$tmp/tree"
check "build tree: Socket in it" grep -qx "Socket local:$build/slop-milter.sock" "$tmp/tree"
check "build tree: the source tree's rules" grep -qx "RulesDir $src/rules" "$tmp/tree"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
