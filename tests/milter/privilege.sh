#!/bin/bash
# Least privilege of the built slop-milter.
# Usage: privilege.sh SLOP_MILTER MILTER_LOAD RULES_DIR
#
# Covers:
#  - started as root with "UserID nobody", the daemon runs as nobody:nogroup
#    (every thread: real, effective, saved and file-system ids), with no
#    supplementary root group and no capabilities;
#  - the socket has SocketMode (0660 by default) and belongs to nobody; the
#    StateDir is 0750 and its files 0640, all nobody's; the PidFile holds
#    the pid and cannot be rewritten by the daemon's user;
#  - a UserID that does not exist is refused (no socket, non-zero exit);
#  - started as root without UserID, the daemon runs but logs a warning;
#  - a reply through ReplyTransport sendmail runs the program as nobody with
#    the recipient as one argv element: an address full of shell syntax
#    (backquotes, $, |, &, *, {}) runs nothing;
#  - no shell in the source: no system(3), popen(3), exec*p or /bin/sh in
#    milter/, state/, classifier/; no system(3), popen(3), shell in slopctl/;
#  - systemd-analyze security --offline=true rates systemd/slop-milter.service
#    "OK" (skipped when systemd-analyze is missing, a failure under
#    SLOP_REQUIRE_INTEGRATION: it is in Debian's package systemd).
#
# Skips (exit 77) when not root unless SLOP_REQUIRE_INTEGRATION is set. The
# daemon is stopped by its pid; loops are bounded; no network.
set -u
bin=$1 load=$2 rules=$3
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
msgs=$here/msgs
passed=0 failed=0 skipped=0
t_start=$(date +%s)
test_name=privilege
# shellcheck source-path=SCRIPTDIR source=testlib.sh
. "$here/testlib.sh"

[ "$(id -u)" -eq 0 ] || skip "needs root (the daemon must start as root to drop to UserID)"
[ -x "$bin" ] && [ -x "$load" ] || skip "slop-milter or milter-load not built"
id nobody >/dev/null 2>&1 && getent group nogroup >/dev/null || skip "no user nobody or group nogroup"
command -v runuser >/dev/null 2>&1 || skip "runuser not found (Debian package util-linux)"
nobody_uid=$(id -u nobody)
nogroup_gid=$(getent group nogroup | cut -d: -f3)

root=$(mktemp -d "${TMPDIR:-/tmp}/slop-privilege.XXXXXX") || exit 1
chmod 755 "$root"
# Reloads read the rules as nobody: a copy of them, so a checkout under a
# 0700 directory works.
world_copy "$root/pub" "$rules" || exit 1
rules=$root/pub/$(basename "$rules")
# run/ (socket, PidFile) stays root's, as /run/slop-milter would be made by
# systemd; lib/ is where nobody may create its StateDir; out/ is for the
# fake sendmail.
mkdir -p "$root/run" "$root/lib" "$root/out"
chmod 755 "$root/run"
chown nobody:nogroup "$root/lib" "$root/out"
daemon_pid=""

cleanup() {
    stop_pid "$daemon_pid" 100
    daemon_pid=""
    remove_workdir "$root" "${SLOP_KEEP_E2E:-}"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# A stand-in for sendmail(8): records who ran it and its argv, one per line.
cat >"$root/fake-sendmail" <<EOF
#!/bin/sh
o=$root/out/call.\$\$
{ echo "uid=\$(id -u) gid=\$(id -g)"; for a in "\$@"; do printf 'arg:%s\\n' "\$a"; done; } >"\$o.tmp"
cat >"\$o.msg"
mv "\$o.tmp" "\$o.args"
exit 0
EOF
chmod 755 "$root/fake-sendmail"

conf=$root/slop-milter.conf
sock=$root/run/milter.sock
state=$root/lib/state
pidfile=$root/run/slop-milter.pid
cat >"$conf" <<EOF
Socket unix:$sock
UserID nobody
PidFile $pidfile
Syslog no
RulesDir $rules
StateDir $state
Recipients security@slop.test
ReplyTransport sendmail
SendmailPath $root/fake-sendmail
ReplyFrom slop-milter <postmaster@slop.test>
ReplyRequires any
EOF

# ---- a UserID that does not exist ----------------------------------------------------
sed 's/^UserID nobody$/UserID slop-no-such-user-x/' "$conf" >"$root/bad.conf"
sed -i "s|^Socket .*|Socket unix:$root/run/bad.sock|" "$root/bad.conf"
timeout 20 "$bin" -f -c "$root/bad.conf" >"$root/bad.log" 2>&1
rc=$?
check "unknown UserID: refused (exit $rc)" [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ]
check "unknown UserID: says why" grep -q "no user 'slop-no-such-user-x'" "$root/bad.log"
check "unknown UserID: no socket left" [ ! -e "$root/run/bad.sock" ]

# ---- root without UserID: runs, but says so -------------------------------------------------
grep -Ev '^(UserID|PidFile) ' "$conf" | sed "s|^Socket .*|Socket unix:$root/run/root.sock|; s|^StateDir .*|StateDir $root/run/rootstate|" >"$root/root.conf"
"$bin" -f -c "$root/root.conf" >"$root/root.log" 2>&1 &
daemon_pid=$!
n=0
while ! grep -q 'starting' "$root/root.log" && [ "$n" -lt 100 ] && kill -0 "$daemon_pid" 2>/dev/null; do
    sleep 0.1
    n=$((n + 1))
done
check "no UserID as root: starts" grep -q 'starting' "$root/root.log"
check "no UserID as root: warns that it stays root" \
    grep -q 'running as root: UserID is not set' "$root/root.log"
stop_pid "$daemon_pid" 100
daemon_pid=""

# ---- the running daemon ------------------------------------------------------------------
"$bin" -f -c "$conf" >"$root/daemon.log" 2>&1 &
daemon_pid=$!
n=0
while ! grep -q 'starting' "$root/daemon.log" && [ "$n" -lt 100 ]; do
    sleep 0.1
    n=$((n + 1))
done
check "daemon starts" kill -0 "$daemon_pid"
if ! kill -0 "$daemon_pid" 2>/dev/null; then
    cat "$root/daemon.log"
    echo "$passed passed, $failed failed"
    exit 1
fi

check "ps: uid is nobody" [ "$(ps -o uid= -p "$daemon_pid" | tr -d ' ')" = "$nobody_uid" ]
check "ps: gid is nogroup" [ "$(ps -o gid= -p "$daemon_pid" | tr -d ' ')" = "$nogroup_gid" ]
# Uid:/Gid: list real, effective, saved and file-system ids: all four, in
# every thread (a thread started before the drop would keep root's).
ids_ok() {
    local f line bad=0 nt=0
    for f in /proc/"$daemon_pid"/task/*/status; do
        nt=$((nt + 1))
        line=$(awk '/^Uid:/ { print $2, $3, $4, $5 }' "$f")
        [ "$line" = "$nobody_uid $nobody_uid $nobody_uid $nobody_uid" ] || bad=1
        line=$(awk '/^Gid:/ { print $2, $3, $4, $5 }' "$f")
        [ "$line" = "$nogroup_gid $nogroup_gid $nogroup_gid $nogroup_gid" ] || bad=1
        awk '/^Groups:/ { for (i = 2; i <= NF; i++) if ($i == 0) exit 1 }' "$f" || bad=1
        grep -Eq '^CapEff:[[:space:]]+0+$' "$f" || bad=1
        grep -Eq '^CapPrm:[[:space:]]+0+$' "$f" || bad=1
    done
    echo "  threads checked: $nt"
    [ "$nt" -ge 1 ] && [ "$bad" -eq 0 ]
}
check "every thread: uids nobody, gids nogroup, no group 0, no capabilities" ids_ok

check "socket mode 660 (SocketMode default)" [ "$(stat -c %a "$sock")" = 660 ]
check "socket owned by nobody:nogroup" [ "$(stat -c %U:%G "$sock")" = nobody:nogroup ]

# One message from a sender whose address is shell syntax; the reply goes
# to the fake sendmail.
evil='x`touch${IFS}'"$root"'/pwned`$HOME|y&z*{w}@example.test'
out=$("$load" -n 1 -f "$evil" -R security@slop.test "unix:$sock" "$msgs/slop-patch.eml" 2>&1)
echo "  milter-load: $out"
check "message scanned" sh -c "printf '%s' '$out' | grep -q 'messages=1 .* errors=0'"
n=0
while ! ls "$root"/out/*.args >/dev/null 2>&1 && [ "$n" -lt 150 ]; do
    sleep 0.1
    n=$((n + 1))
done
args=$(ls "$root"/out/*.args 2>/dev/null | head -n 1)
check "sendmail was run for the reply" [ -n "$args" ]
if [ -n "$args" ]; then
    echo "  sendmail: $(tr '\n' ' ' <"$args")"
    check "sendmail ran as nobody" grep -qx "uid=$nobody_uid gid=$nogroup_gid" "$args"
    check "the recipient is one argv element, unchanged" grep -qxF "arg:$evil" "$args"
    check "the envelope sender is null (-f '' or -f '<>')" \
        awk 'p && ($0 == "arg:" || $0 == "arg:<>") { ok = 1 } { p = $0 == "arg:-f" } END { exit !ok }' "$args"
    check "options end (--) before the recipient" \
        awk -v r="arg:$evil" '$0 == "arg:--" { d = 1 } $0 == r && d { ok = 1 } END { exit !ok }' "$args"
fi
sleep 0.5
check "nothing in the address was run" [ ! -e "$root/pwned" ]

# State: the directory 0750, every file 0640, all nobody's; the key that
# signs our replies (reply.key) 0600.
check "StateDir 750 nobody:nogroup" [ "$(stat -c '%a %U:%G' "$state")" = "750 nobody:nogroup" ]
state_files_ok() {
    local f bad=0 nf=0
    for f in $(find "$state" -mindepth 1); do
        nf=$((nf + 1))
        if [ -d "$f" ]; then
            [ "$(stat -c '%a %U' "$f")" = "750 nobody" ] || { echo "  $(stat -c '%a %U:%G %n' "$f")"; bad=1; }
        elif [ "${f##*/}" = reply.key ]; then
            [ "$(stat -c '%a %U' "$f")" = "600 nobody" ] || { echo "  $(stat -c '%a %U:%G %n' "$f")"; bad=1; }
        else
            [ "$(stat -c '%a %U' "$f")" = "640 nobody" ] || { echo "  $(stat -c '%a %U:%G %n' "$f")"; bad=1; }
        fi
    done
    echo "  state entries: $nf"
    [ "$nf" -ge 1 ] && [ "$bad" -eq 0 ]
}
check "state files 640 nobody (dirs 750)" state_files_ok
check "nothing under StateDir for others" sh -c "[ -z \"\$(find '$state' -perm /007)\" ]"

check "PidFile holds the pid" [ "$(tr -dc 0-9 <"$pidfile")" = "$daemon_pid" ]
echo "  PidFile: $(stat -c '%a %U:%G' "$pidfile")"
check "PidFile not writable by group or others" [ -z "$(find "$pidfile" -perm /022)" ]
check "PidFile not writable by the daemon's user" sh -c "! runuser -u nobody -- test -w '$pidfile'"

kill "$daemon_pid"
n=0
while kill -0 "$daemon_pid" 2>/dev/null && [ "$n" -lt 100 ]; do
    sleep 0.1
    n=$((n + 1))
done
wait "$daemon_pid" 2>/dev/null
rc=$?
check "SIGTERM: clean exit (status $rc)" [ "$rc" -eq 0 ]
check "UserID set: no warning about root" sh -c "! grep -q 'running as root' '$root/daemon.log'"
daemon_pid=""
check "no sanitizer report" sh -c "! grep -Eq 'AddressSanitizer|LeakSanitizer|runtime error' '$root/daemon.log'"

# ---- no shell anywhere in the source ---------------------------------------------------
# The daemon's code: no shell and no PATH search (exec*p may also hand a
# file to /bin/sh). slopctl, an administrator's tool, runs git and
# mdb_dump/mdb_load by name: no shell there either.
shell_re='(^|[^_a-zA-Z0-9.>])(system|popen)[[:space:]]*\(|/bin/sh|\<(sh|bash) -c\>'
# A name in quotes is a word the code looks for in a mail (poc_program.c
# lists the exec calls a reproducer may make), not a call.
hits=$(grep -rnE "$shell_re|(^|[^\"])\<(exec(lp|vp|vpe)|posix_spawnp)\>" --include='*.c' --include='*.h' \
    "$src/milter" "$src/state" "$src/classifier" 2>/dev/null)
[ -n "$hits" ] && printf '%s\n' "$hits"
check "daemon source: no system(), popen(), exec*p() or shell in milter/ state/ classifier/" [ -z "$hits" ]
hits=$(grep -rnE "$shell_re" --include='*.c' --include='*.h' "$src/slopctl" 2>/dev/null)
[ -n "$hits" ] && printf '%s\n' "$hits"
check "slopctl source: no system(), popen() or shell" [ -z "$hits" ]
execs=$(grep -rnE '\<exec(l|le|v|ve)[[:space:]]*\(' --include='*.c' "$src/milter" "$src/state" "$src/classifier" | wc -l)
echo "  exec calls in the daemon (absolute path, no shell): $execs"

# ---- the systemd unit ------------------------------------------------------------------
unit=$src/systemd/slop-milter.service
check "unit runs as its own user" grep -qx 'User=slop-milter' "$unit"
check "unit sets NoNewPrivileges" grep -qx 'NoNewPrivileges=yes' "$unit"
check "unit has an empty capability bounding set" grep -qx 'CapabilityBoundingSet=' "$unit"
if command -v systemd-analyze >/dev/null 2>&1; then
    sa=$(systemd-analyze security --offline=true --no-pager "$unit" 2>&1)
    level=$(printf '%s\n' "$sa" | sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\) \([A-Z]*\).*/\1 \2/p')
    echo "  systemd-analyze: overall exposure ${level:-not found}"
    check "systemd-analyze security --offline=true: exposure level OK" \
        sh -c "printf '%s' '$level' | grep -Eq '^[0-9.]+ OK$'"
elif [ -n "${SLOP_REQUIRE_INTEGRATION:-}" ]; then
    check "systemd-analyze present (Debian package systemd)" false
else
    skipped=$((skipped + 1))
    echo "skip: systemd-analyze not found (Debian package systemd)"
fi

echo "privilege: $(($(date +%s) - t_start)) s"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
