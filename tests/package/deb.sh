#!/bin/bash
# The Debian packages end to end (ctest label package; `make test-package`,
# .ci/run's package stage):
#   build slop-milter and slopctl with scripts/build-deb; lintian, failing
#   on any error or warning; install both with dpkg -i on this machine;
#   check the user, directories, conffile, man pages and rules; scan a
#   message with the installed slopctl; start the daemon as its unit does
#   (ExecStartPre and ExecStart read from the installed unit, run as its
#   User= and Group= with its UMask= and the directories systemd would
#   pass), scan through it with miltertest; stop it; remove the packages
#   (state and configuration stay) and purge them (both gone).
# Usage: deb.sh SOURCE_DIR WORK_DIR
# Needs root and scripts/install-deps --package. It installs into this
# machine, so it refuses (skip, or failure under SLOP_REQUIRE_INTEGRATION)
# where slop-milter is already installed or has left state behind.
set -u
src=$1 work=$2
# shellcheck disable=SC2034 # read by testlib.sh
test_name=package passed=0 failed=0 daemon_pid=""
# shellcheck source-path=SCRIPTDIR source=../milter/testlib.sh
. "$src/tests/milter/testlib.sh"

[ "$(id -u)" -eq 0 ] || skip "needs root (dpkg -i)"
for t in dpkg-buildpackage dh lintian miltertest setpriv systemd-sysusers systemd-tmpfiles; do
    command -v "$t" >/dev/null || skip "$t not installed (scripts/install-deps --package)"
done
for p in slop-milter slopctl; do
    st=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null)
    if [ -n "$st" ] && [ "$st" != not-installed ]; then
        skip "$p is installed here ($st); this test would purge it"
    fi
done
for d in /var/lib/slop-milter /etc/slop-milter; do
    [ -e "$d" ] && skip "$d exists; this test would delete it"
done

installed="" pub=""
cleanup() {
    stop_daemon
    [ -z "$pub" ] || rm -rf "$pub"
    if [ -n "$installed" ]; then
        dpkg -P slop-milter slopctl >/dev/null 2>&1
    fi
    remove_workdir "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
rm -rf "$work"
mkdir -p "$work"

# ---- build and lintian ------------------------------------------------
# nocheck: the unit tests ran in `make test` already; `make deb` runs them.
if DEB_BUILD_OPTIONS=nocheck "$src/scripts/build-deb" "$work/deb" >"$work/build.log" 2>&1; then
    check "dpkg-buildpackage" true
else
    tail -40 "$work/build.log"
    check "dpkg-buildpackage (log: $work/build.log)" false
    echo "$passed passed, $failed failed"
    exit 1
fi
deb_milter=$(ls "$work"/deb/slop-milter_*.deb)
deb_ctl=$(ls "$work"/deb/slopctl_*.deb)
lintian --fail-on error,warning --display-info --pedantic "$work"/deb/*.changes >"$work/lintian.log" 2>&1
lint_rc=$?
grep -v 'running with root privileges' "$work/lintian.log"
check "lintian: no errors or warnings" [ "$lint_rc" -eq 0 ]

# ---- install ------------------------------------------------------------
installed=yes
if dpkg -i "$deb_ctl" "$deb_milter" >"$work/dpkg-i.log" 2>&1; then
    check "dpkg -i" true
else
    cat "$work/dpkg-i.log"
    check "dpkg -i" false
fi
# Where systemd runs, the postinst started the service: this test starts
# the daemon itself.
if [ -d /run/systemd/system ]; then
    systemctl stop slop-milter.service
fi

user=slop-milter
user_exists() { getent passwd "$user" >/dev/null; }
check "user $user created (sysusers.d)" user_exists
# Postfix's user joins the socket's group (postinst), where Postfix is here.
if getent passwd postfix >/dev/null; then
    postfix_in_group() { id -nG postfix | tr ' ' '\n' | grep -qx "$user"; }
    check "postfix in group $user (postinst)" postfix_in_group
fi
check "README.Debian installed" sh -c "ls /usr/share/doc/slop-milter/README.Debian* >/dev/null 2>&1"
check "/var/lib/slop-milter is $user's, 0750 (tmpfiles.d)" \
    [ "$(stat -c '%U:%G %a' /var/lib/slop-milter 2>/dev/null)" = "$user:$user 750" ]
check "/run/slop-milter is $user's (tmpfiles.d)" \
    [ "$(stat -c '%U:%G' /run/slop-milter 2>/dev/null)" = "$user:$user" ]
conffiles=$(dpkg-query -W -f='${Conffiles}' slop-milter)
check "slop-milter.conf is a conffile" grep -q ' /etc/slop-milter/slop-milter.conf ' <<<"$conffiles"
check "daemon in /usr/sbin" [ -x /usr/sbin/slop-milter ]
check "slopctl in /usr/bin" [ -x /usr/bin/slopctl ]
check "fitted scores beside the rules" [ -f /usr/share/slop-milter/rules/90-fitted.scores ]
missing=""
for page in "$src"/docs/*.[158]; do
    name=$(basename "$page")
    [ -f "/usr/share/man/man${name##*.}/$name.gz" ] || missing="$missing $name"
done
check "every docs/ man page installed${missing:+ (missing:$missing)}" [ -z "$missing" ]
unit=$(dpkg -L slop-milter | grep '/systemd/system/slop-milter\.service$')
check "unit installed" [ -f "$unit" ]

# ---- slopctl --------------------------------------------------------------
# slopctl runs as $user: a copy of the messages (and of lib.lua, which
# mt-installed.lua loads from beside them) it can read wherever the
# checkout is (under a 0700 directory too).
pub=$(mktemp -d "${TMPDIR:-/tmp}/slop-deb.XXXXXX") || exit 1
world_copy "$pub" "$src/tests/milter/msgs" "$src/tests/milter/lib.lua" || exit 1
msgs=$pub/msgs
as_user() {
    setpriv --reuid="$user" --regid="$user" --init-groups --inh-caps=-all -- "$@"
}
json=$(cd / && as_user /usr/bin/slopctl scan --json --no-state "$msgs/lock-swap.eml")
score=$(sed -n 's/.*"score":\([-0-9.]*\),"action".*/\1/p' <<<"$json")
check "slopctl scans with the installed rules (score $score)" \
    grep -q '"rule":"LOCK_UNLOCK_TO_DESTROY"' <<<"$json"
# Installed binaries know only installed paths: none of the tree the
# package was built in, and slopctl's state is the daemon's, whoever runs it.
leaks=$(dpkg -L slop-milter slopctl | while read -r f; do
    [ -f "$f" ] && grep -qF -e "$src" -e "$work" "$f" && echo "$f"
done)
check "no build-tree path in the package${leaks:+ (in:$(echo $leaks))}" [ -z "$leaks" ]
stats=$(cd / && as_user env -u STATE_DIRECTORY /usr/bin/slopctl learn --stats 2>&1)
stats_installed() {
    ! grep -qF -e "$src" -e "$work" <<<"$stats" &&
        grep -Eq 'slop messages|/var/lib/slop-milter' <<<"$stats"
}
check "slopctl as $user looks in /var/lib/slop-milter" stats_installed

# ---- the daemon, as the unit runs it --------------------------------------
unit_get() { sed -n "s/^$1=//p" "$unit" | tail -1; }
exec_pre=$(unit_get ExecStartPre)
exec_start=$(unit_get ExecStart)
check "unit runs as User=$user" [ "$(unit_get User)" = "$user" ]
check "ExecStart is a plain absolute command" [ "${exec_start#/}" != "$exec_start" ]
umask_=$(unit_get UMask)
state_dir=/var/lib/$(unit_get StateDirectory)
runtime_dir=/run/$(unit_get RuntimeDirectory)
# What systemd passes: StateDirectory= and RuntimeDirectory= as
# $STATE_DIRECTORY and $RUNTIME_DIRECTORY, the unit's UMask=, no
# capabilities, the user's groups. One simple command, so $! is the
# daemon's pid (setpriv, env and sh each exec the next).
# shellcheck disable=SC2016 # $0 and $@ are the inner shell's
unit_run=(setpriv --reuid="$user" --regid="$user" --init-groups --inh-caps=-all --
    env -i -C / PATH=/usr/sbin:/usr/bin:/sbin:/bin
    STATE_DIRECTORY="$state_dir" RUNTIME_DIRECTORY="$runtime_dir"
    sh -c 'umask "$0"; exec "$@"' "${umask_:-0022}")
# shellcheck disable=SC2086 # the unit's command line, split as systemd does
check "ExecStartPre ($exec_pre)" "${unit_run[@]}" $exec_pre
sock=$runtime_dir/slop-milter.sock
# shellcheck disable=SC2086
"${unit_run[@]}" $exec_start >"$work/daemon.log" 2>&1 &
daemon_pid=$!
n=0
while [ ! -S "$sock" ] && [ "$n" -lt 300 ] && kill -0 "$daemon_pid" 2>/dev/null; do
    sleep 0.1
    n=$((n + 1))
done
check "daemon listens on $sock" [ -S "$sock" ]
check "daemon runs as $user" [ "$(ps -o user= -p "$daemon_pid" 2>/dev/null)" = "$user" ]
mkdir -p "$work/mt"
if miltertest -s "$src/tests/package/mt-installed.lua" -D SOCK="$sock" -D MSGS="$msgs" \
    -D WORK="$work/mt" -D SCORE="${score:-none}"; then
    check "miltertest through the installed daemon" true
else
    cat "$work/daemon.log"
    check "miltertest through the installed daemon" false
fi
stop_daemon
check "state created in $state_dir, $user's" \
    [ "$(stat -c %U "$state_dir/data.mdb" 2>/dev/null)" = "$user" ]

# ---- remove, then purge -----------------------------------------------------
check "dpkg -r" dpkg -r slop-milter slopctl
check "removed: daemon gone" [ ! -e /usr/sbin/slop-milter ]
check "removed: state kept" [ -f "$state_dir/data.mdb" ]
check "removed: configuration kept" [ -f /etc/slop-milter/slop-milter.conf ]
check "dpkg -P" dpkg -P slop-milter slopctl
installed=""
check "purged: state gone" [ ! -e "$state_dir" ]
check "purged: configuration gone" [ ! -e /etc/slop-milter ]
left=$(dpkg-query -W -f='${db:Status-Status}\n' slop-milter slopctl 2>/dev/null |
    grep -v '^not-installed$')
check "purged: no package left" [ -z "$left" ]

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
