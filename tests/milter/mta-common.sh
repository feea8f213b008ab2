# Shared by postfix-harness.sh and sendmail-harness.sh (sourced, not run).
# Expects $root (the instance directory) to be set. Delivered mail is one
# file per message under $root/mail/<recipient>/; the SMTP transcript of each
# send is kept under $root/swaks/ for post-mortems.

need() {
    for b in "$@"; do
        command -v "$b" >/dev/null 2>&1 || {
            echo "${0##*/}: $b not found" >&2
            exit 77
        }
    done
}

# Poll every 0.1 s, at most $2 seconds, until the shell condition $1 holds.
poll() {
    _n=0
    _max=$(($2 * 10))
    while ! eval "$1"; do
        _n=$((_n + 1))
        [ "$_n" -ge "$_max" ] && return 1
        sleep 0.1
    done
    return 0
}

# The live process whose id FILE holds, printed; fails when there is none.
pidfile_pid() {
    [ -s "$1" ] || return 1
    _p=$(tr -dc '0-9' <"$1")
    [ -n "$_p" ] && kill -0 "$_p" 2>/dev/null && echo "$_p"
}

# Stop the process whose id FILE holds: TERM, up to 10 s, then KILL.
pidfile_stop() {
    _p=$(pidfile_pid "$1") || return 0
    kill -TERM "$_p" 2>/dev/null || true
    poll "! kill -0 $_p 2>/dev/null" 10 && return 0
    kill -KILL "$_p" 2>/dev/null || true
}

# The local delivery agent both MTAs run as nobody: stdin becomes one file.
# Exit 75 (EX_TEMPFAIL) on any failure so the MTA defers instead of bouncing.
mta_write_deliver() {
    mkdir -p "$root/mail"
    chown nobody "$root/mail"
    chmod 755 "$root/mail"
    cat >"$root/deliver.sh" <<'EOF'
#!/bin/sh
set -u
dir=$1/$(printf '%s' "$2" | tr 'A-Z/' 'a-z_')
mkdir -p "$dir" || exit 75
umask 022
tmp=$(mktemp "$dir/.tmp.XXXXXX") || exit 75
cat >"$tmp" || { rm -f "$tmp"; exit 75; }
mv "$tmp" "$dir/$(date +%s%N).$$.eml" || exit 75
exit 0
EOF
    chmod 755 "$root/deliver.sh"
    # A 0700 parent (mktemp -d) makes every delivery fail permanently.
    if command -v runuser >/dev/null 2>&1 &&
        ! runuser -u nobody -- test -r "$root/deliver.sh"; then
        echo "${0##*/}: $root is not reachable by user nobody" >&2
        exit 1
    fi
}

# mta_send FILE FROM TO [swaks options]: exit 0 when the MTA accepted the
# message, 4 on a 4xx reply, 5 on a 5xx reply, 1 on anything else. The last
# transcript is also in $root/swaks/last.log.
mta_send() {
    need swaks
    _file=$1 _from=$2 _to=$3
    shift 3
    _port=$(cat "$root/port")
    mkdir -p "$root/swaks"
    _out=$root/swaks/$(date +%s%N).$$.log
    set +e
    swaks --server 127.0.0.1 --port "$_port" --from "$_from" --to "$_to" \
        --data @"$_file" --timeout 60 --hide-informational "$@" >"$_out" 2>&1
    _rc=$?
    set -e
    cp "$_out" "$root/swaks/last.log"
    [ "$_rc" -eq 0 ] && exit 0
    # swaks marks a failing server reply with "<**"; its first digit is
    # the class.
    _fail=$(grep -E '^ *<~?\*\* *[0-9]{3}' "$_out" | head -n 1 |
        sed -E 's/^ *<~?\*\* *([0-9]).*/\1/')
    case "$_fail" in
    4) exit 4 ;;
    5) exit 5 ;;
    esac
    cat "$_out" >&2
    exit 1
}

mta_count() {
    _d=$root/mail/$(printf '%s' "$1" | tr 'A-Z/' 'a-z_')
    if [ -d "$_d" ]; then
        find "$_d" -maxdepth 1 -name '*.eml' | wc -l
    else
        echo 0
    fi
}

# mta_wait RCPT N [SECONDS]: until RCPT has at least N messages.
mta_wait() {
    poll "[ \$(mta_count '$1') -ge $2 ]" "${3:-30}"
}

mta_mailbox() {
    echo "$root/mail/$(printf '%s' "$1" | tr 'A-Z/' 'a-z_')"
}
