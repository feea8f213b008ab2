#!/bin/sh
# A private Postfix instance for the milter end-to-end tests.
#
# Everything lives under one directory ROOT (made by the caller, e.g. with
# mktemp -d): config in ROOT/etc, queue in ROOT/queue, data in ROOT/data,
# delivered mail in ROOT/mail/<recipient>/<n>.eml, the Postfix log in
# ROOT/postfix.log. It never reads or writes /etc/postfix (Postfix still
# reads the read-only postfix-files from its compiled-in meta_directory) and
# binds only 127.0.0.1:PORT.
#
# Recipe for a non-default config directory: `postfix -c DIR start` run as
# root works without listing DIR in alternate_config_directories of the
# default main.cf (that list only guards the set-gid postdrop/sendmail paths
# used by unprivileged users); every other command gets the directory as
# `-c DIR` (postconf, postqueue, postsuper) or MAIL_CONFIG=DIR. Daemons are
# not chrooted (master.cf column 5 = n) so they see ROOT paths as they are.
# Local delivery: every test domain is in mydestination, local_transport is
# a pipe(8) service running ROOT/deliver.sh as nobody (pipe refuses root and
# the mail_owner), which writes one file per message and recipient.
#
# Usage: postfix-harness.sh COMMAND ROOT [ARGS]
#   init ROOT PORT [MILTER_SOCKET] [DEFAULT_ACTION]   write the configuration
#   start ROOT | stop ROOT | status ROOT
#   set ROOT name=value...        change main.cf and reload if running
#   send ROOT FILE FROM TO [swaks options]   exit status: 0 accepted,
#                                 4 temporary failure, 5 permanent failure
#   count ROOT RCPT               messages delivered to RCPT
#   wait ROOT RCPT N [SECONDS]    wait until RCPT has >= N messages
#   queue ROOT [deferred|hold|active|incoming|all]   messages in that queue
#   settle ROOT [SECONDS]         wait until incoming+active are empty
#   flush ROOT                    retry deferred mail now
#   mailbox ROOT RCPT             print the path of RCPT's mail directory
# Bounded waits: every loop has a maximum count. Exit 77 when Postfix or
# swaks is missing (the caller decides whether that is a skip).
set -eu

cmd=${1:-}
root=${2:-}
[ -n "$cmd" ] && [ -n "$root" ] || {
    sed -n '22,35p' "$0" >&2
    exit 64
}
shift 2

etc=$root/etc
queue=$root/queue
postfix_bin=${POSTFIX:-/usr/sbin/postfix}
postconf_bin=${POSTCONF:-/usr/sbin/postconf}
. "$(dirname "$0")/mta-common.sh"

master_pid() {
    f=$queue/pid/master.pid
    [ -s "$f" ] || return 1
    pid=$(tr -dc '0-9' <"$f")
    [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && echo "$pid"
}

pf_init() {
    port=$1
    sock=${2:-$root/milter.sock}
    default_action=${3:-accept}
    need "$postfix_bin" "$postconf_bin"
    mkdir -p "$etc" "$queue" "$root/data" "$root/mail"
    # Postfix daemons run as postfix, the pipe as nobody: both must reach
    # into ROOT, which mktemp created 0700.
    chmod 755 "$root"
    chown postfix "$root/data"

    mta_write_deliver

    cat >"$etc/main.cf" <<EOF
# Private test instance; see tests/milter/postfix-harness.sh.
compatibility_level = 3.6
config_directory = $etc
queue_directory = $queue
data_directory = $root/data
mail_owner = postfix
setgid_group = postdrop
myhostname = mx.slop.test
mydomain = slop.test
myorigin = slop.test
mydestination = slop.test, example.test, lists.test, localhost
inet_interfaces = 127.0.0.1
inet_protocols = ipv4
mynetworks = 127.0.0.0/8
smtpd_peername_lookup = no
smtpd_relay_restrictions = permit_mynetworks, reject_unauth_destination
disable_dns_lookups = yes
smtp_dns_support_level = disabled
alias_maps =
alias_database =
local_recipient_maps =
local_transport = deliver
biff = no
append_dot_mydomain = no
relayhost =
maillog_file = $root/postfix.log
maillog_file_prefixes = $root
smtputf8_enable = no
# Small timers so a deferred message is retried within the test's time.
queue_run_delay = 2s
minimal_backoff_time = 2s
maximal_backoff_time = 4s
# Milter: the daemon under test.
smtpd_milters = unix:$sock
non_smtpd_milters = \$smtpd_milters
milter_protocol = 6
milter_default_action = $default_action
milter_connect_timeout = 5s
milter_command_timeout = 10s
milter_content_timeout = 30s
milter_mail_macros = i {auth_authen} {auth_type} {mail_addr} {mail_host} {mail_mailer}
EOF

    cat >"$etc/master.cf" <<EOF
# service type private unpriv chroot wakeup maxproc command
127.0.0.1:$port inet n - n - - smtpd
pickup    unix  n       -       n       60      1       pickup
cleanup   unix  n       -       n       -       0       cleanup
qmgr      unix  n       -       n       300     1       qmgr
rewrite   unix  -       -       n       -       -       trivial-rewrite
bounce    unix  -       -       n       -       0       bounce
defer     unix  -       -       n       -       0       bounce
trace     unix  -       -       n       -       0       bounce
verify    unix  -       -       n       -       1       verify
flush     unix  n       -       n       1000?   0       flush
proxymap  unix  -       -       n       -       -       proxymap
proxywrite unix -       -       n       -       1       proxymap
smtp      unix  -       -       n       -       -       smtp
relay     unix  -       -       n       -       -       smtp
showq     unix  n       -       n       -       -       showq
error     unix  -       -       n       -       -       error
retry     unix  -       -       n       -       -       error
discard   unix  -       -       n       -       -       discard
local     unix  -       n       n       -       -       local
anvil     unix  -       -       n       -       1       anvil
scache    unix  -       -       n       -       1       scache
postlog   unix-dgram n  -       n       -       1       postlogd
deliver   unix  -       n       n       -       -       pipe
  flags=DRq user=nobody argv=/bin/sh $root/deliver.sh $root/mail \${recipient}
EOF
    echo "$port" >"$root/port"
    "$postconf_bin" -c "$etc" -n >/dev/null
}

pf_start() {
    need "$postfix_bin"
    [ -f "$etc/main.cf" ] || {
        echo "postfix-harness: run init first" >&2
        exit 64
    }
    if master_pid >/dev/null; then
        return 0
    fi
    # `postfix start` runs `postfix check`, which creates the queue
    # directories with the right owners (post-install create-missing).
    "$postfix_bin" -c "$etc" start >"$root/start.log" 2>&1 || {
        cat "$root/start.log" >&2
        exit 1
    }
    port=$(cat "$root/port")
    if ! poll "master_pid >/dev/null && ss -Hltn 'sport = :$port' | grep -q ." 100; then
        echo "postfix-harness: master did not come up on port $port" >&2
        cat "$root/start.log" "$root/postfix.log" >&2 2>/dev/null || true
        exit 1
    fi
}

pf_stop() {
    pid=$(master_pid) || pid=""
    "$postfix_bin" -c "$etc" stop >/dev/null 2>&1 || true
    [ -n "$pid" ] || return 0
    poll "! kill -0 $pid 2>/dev/null" 10 && return 0
    kill -TERM "$pid" 2>/dev/null || true
    poll "! kill -0 $pid 2>/dev/null" 5 && return 0
    kill -KILL "$pid" 2>/dev/null || true
}

pf_set() {
    "$postconf_bin" -c "$etc" -e "$@"
    if master_pid >/dev/null; then
        "$postfix_bin" -c "$etc" reload >/dev/null 2>&1
        # reload is asynchronous; give master a moment to restart smtpd.
        sleep 1
    fi
}

pf_queue() {
    which=${1:-all}
    case "$which" in
    all) dirs="incoming active deferred hold maildrop" ;;
    *) dirs=$which ;;
    esac
    n=0
    for d in $dirs; do
        [ -d "$queue/$d" ] || continue
        c=$(find "$queue/$d" -type f | wc -l)
        n=$((n + c))
    done
    echo "$n"
}

pf_settle() {
    secs=${1:-30}
    poll "[ \$(pf_queue 'incoming active maildrop') -eq 0 ]" "$secs"
}

case "$cmd" in
init) pf_init "$@" ;;
start) pf_start ;;
stop) pf_stop ;;
status) master_pid ;;
set) pf_set "$@" ;;
send) mta_send "$@" ;;
count) mta_count "$1" ;;
wait) mta_wait "$@" ;;
queue) pf_queue "$@" ;;
settle) pf_settle "$@" ;;
flush) "${POSTQUEUE:-/usr/sbin/postqueue}" -c "$etc" -f ;;
mailbox) mta_mailbox "$1" ;;
*)
    echo "postfix-harness: unknown command '$cmd'" >&2
    exit 64
    ;;
esac
