#!/bin/sh
# Load and fault tests: the built slop-milter behind the private Postfix of
# postfix-harness.sh on loopback, fed by Postfix's smtp-source(1).
# Usage: load.sh SLOP_MILTER RULES_DIR [PHASE...]
#   phases (default: all, in this order):
#   load      20 parallel sessions, 400 messages of a ~10 KB patch
#   kill      SIGKILL and restart of the daemon, twice, while 10 sessions
#             send 200 messages; once with milter_default_action accept,
#             once with tempfail (the refused mail is then sent again, as
#             a client retrying, and must all arrive)
#   reload    SIGUSR1 every 0.2 s while 10 sessions send 200 messages
#   fullstate StateDir on a full 256 KB tmpfs (fallback when mounting is
#             not allowed: a file-size limit on the daemon, SIGXFSZ
#             ignored): state writes fail, mail flows, verdicts logged
#   sendmail  ReplyTransport sendmail with a sendmail(8) that never
#             returns: mail keeps flowing, the reply sender kills the
#             child when its 30 s per-send timeout runs out
#
# Every phase accounts for each message by its recipient: smtp-source -N
# numbers the recipient of message n as "n<rcpt>", so message n is either
# delivered (exactly one file in its mailbox), still in the Postfix queue,
# or refused to the client (a 4xx smtp-source reports). The checks:
# delivered + queued + refused = sent, no mailbox with two files, and every
# scanned message delivered has exactly one decision line (its queue id,
# result=) in the daemon's log.
#
# SIGKILL of a writer inside an LMDB transaction is tested directly in
# tests/unit/test_state.c (test_killed_writer); here the kill phase checks
# that the daemon reopens the state after each kill and records again.
#
# Needs root (Postfix), smtp-source and swaks; exits 77 (skipped) without
# them unless SLOP_REQUIRE_INTEGRATION is set. Every process started here
# is stopped by its pid; every loop is bounded.
set -u
bin=$1 rules=$(cd "$2" && pwd) || exit 64
shift 2
phases=${*:-load kill reload fullstate sendmail}
here=$(cd "$(dirname "$0")" && pwd)
harness=$here/postfix-harness.sh
msgs=$here/msgs
smtp_source=${SMTP_SOURCE:-/usr/sbin/smtp-source}
passed=0 failed=0
t_start=$(date +%s)
test_name=load
# shellcheck source-path=SCRIPTDIR source=testlib.sh
. "$here/testlib.sh"

# both [ A ] [ B ]: two test(1) conditions, as one check.
both() {
    shift
    a1=$1 a2=$2 a3=$3
    shift 4
    test "$a1" "$a2" "$a3" && "$@"
}

alive() { [ -n "$1" ] && kill -0 "$1" 2>/dev/null; }
not() { ! "$@"; }

[ "$(id -u)" -eq 0 ] || skip "needs root (Postfix binds, changes users and owns its queue)"
[ -x /usr/sbin/postfix ] || skip "postfix not found (Debian package postfix)"
[ -x "$smtp_source" ] || skip "smtp-source not found (Debian package postfix)"
command -v swaks >/dev/null 2>&1 || skip "swaks not found (Debian package swaks)"

root=$(mktemp -d "${TMPDIR:-/tmp}/slop-load.XXXXXX") || exit 1
chmod 755 "$root"
mroot=$root/mta
mkdir -p "$mroot"
daemon_pid="" source_pid="" mounted="" log=""

h() {
    hc=$1
    shift
    sh "$harness" "$hc" "$mroot" "$@"
}

stop_source() {
    [ -n "$source_pid" ] || return 0
    kill "$source_pid" 2>/dev/null
    wait "$source_pid" 2>/dev/null
    source_pid=""
}

# Fake sendmail children record their pids; a SIGKILLed daemon leaves them.
stop_fake_sendmail() {
    [ -s "$root/fake-sendmail.pids" ] || return 0
    for p in $(cat "$root/fake-sendmail.pids"); do
        kill -9 "$p" 2>/dev/null
    done
}

cleanup() {
    stop_source
    stop_daemon
    stop_fake_sendmail
    [ -n "${fifo_cat_pid:-}" ] && kill "$fifo_cat_pid" 2>/dev/null
    h stop >/dev/null 2>&1
    [ -n "$mounted" ] && umount "$mounted" 2>/dev/null
    remove_workdir "$root" "${SLOP_KEEP_LOAD:-}"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

port=$(free_port 20025) || skip "no free port"

# ---- the daemon, one instance directory per phase ----------------------------
# dir/slop-milter.conf, dir/state, dir/daemon.log; the socket is shared so
# Postfix's main.cf stays the same across phases.
sock=$root/milter.sock
write_conf() { # DIR [extra lines]
    d=$1
    shift
    mkdir -p "$d"
    chmod 755 "$d"
    cat >"$d/slop-milter.conf.new" <<EOF
Socket unix:$sock
SocketMode 0666
Syslog no
RulesDir $rules
StateDir ${state_dir:-$d/state}
ReplyFrom slop-milter <postmaster@slop.test>
ReplyRequires any
${reply_conf:-ReplyTransport smtp
SMTPServer 127.0.0.1:$port
ReplyThreshold 0}
$*
EOF
    mv "$d/slop-milter.conf.new" "$d/slop-milter.conf"
}

# start_daemon DIR [wrapper...]: runs "$wrapper $bin -f -c conf", waits for
# this start's "starting" line.
start_daemon() {
    d=$1
    shift
    log=$d/daemon.log
    touch "$log"
    before=$(grep -c ' starting: ' "$log")
    "$@" "$bin" -f -c "$d/slop-milter.conf" >>"${daemon_out:-$log}" 2>&1 &
    daemon_pid=$!
    n=0
    while [ "$(grep -c ' starting: ' "$log")" -le "$before" ] && [ "$n" -lt 150 ]; do
        kill -0 "$daemon_pid" 2>/dev/null || break
        sleep 0.1
        n=$((n + 1))
    done
    # "starting" comes just before the listen; give libmilter a moment.
    sleep 0.3
    kill -0 "$daemon_pid" 2>/dev/null
}

kill9_daemon() {
    kill -9 "$daemon_pid" 2>/dev/null
    wait "$daemon_pid" 2>/dev/null
    daemon_pid=""
}

# ---- sending and accounting -----------------------------------------------------
# send_bg TAG COUNT SESSIONS [smtp-source options]: recipients n-TAG@slop.test.
send_bg() {
    tag=$1 count=$2 sessions=$3
    shift 3
    "$smtp_source" -4 -A -N -s "$sessions" -m "$count" -f dana@example.test \
        -t "$tag@slop.test" -F "$root/patch.eml" "$@" "127.0.0.1:$port" \
        >"$root/$tag.source.log" 2>&1 &
    source_pid=$!
}

wait_source() { # SECONDS
    n=0
    while kill -0 "$source_pid" 2>/dev/null && [ "$n" -lt $(($1 * 10)) ]; do
        sleep 0.1
        n=$((n + 1))
    done
    if kill -0 "$source_pid" 2>/dev/null; then
        echo "  smtp-source still running after $1 s, stopping it"
        stop_source
        return 1
    fi
    wait "$source_pid" 2>/dev/null
    source_pid=""
    return 0
}

# Mailboxes of phase TAG, one line per delivered file: "n qid scanned".
delivered_list() {
    tag=$1
    for d in "$mroot/mail/"[0-9]*"$tag@slop.test"; do
        [ -d "$d" ] || continue
        for f in "$d"/*.eml; do
            [ -f "$f" ] || continue
            n=${d##*/}
            n=${n%%"$tag@slop.test"}
            awk -v n="$n" '
                /^$/ { exit }
                /^[ \t]+by mx\.slop\.test \(Postfix\) with E?SMTP id / && qid == "" {
                    qid = $NF; sub(/;$/, "", qid) }
                /^X-Slop-Status:/ { scanned = 1 }
                END { print n, (qid == "" ? "-" : qid), scanned + 0 }' "$f"
        done
    done
}

# Recipients of TAG still in the Postfix queue (any queue), one per line.
queued_list() {
    "${POSTQUEUE:-/usr/sbin/postqueue}" -c "$mroot/etc" -j 2>/dev/null |
        grep -o "\"address\": *\"[0-9]*$1@slop.test\"" | sed 's/.*"\([0-9]*\)[^"]*"$/\1/'
}

# Queue ids the daemon logged a decision for, one line each (repeats kept).
decision_qids() { # LOG...
    cat "$@" 2>/dev/null | sed -n 's/.*]: \([0-9A-Za-z]*\): from=<.*> .*result=.*/\1/p'
}

# account TAG SENT LOG...: sets delivered files dups queued refused lost
# scanned unscanned decided undecided dupdecisions; prints them.
account() {
    tag=$1 sent=$2
    shift 2
    delivered_list "$tag" | sort -n >"$root/$tag.delivered"
    queued_list "$tag" | sort -n -u >"$root/$tag.queued"
    decision_qids "$@" | sort >"$root/$tag.decisions"
    files=$(wc -l <"$root/$tag.delivered")
    delivered=$(cut -d' ' -f1 "$root/$tag.delivered" | sort -u | wc -l)
    dups=$((files - delivered))
    queued=$(wc -l <"$root/$tag.queued")
    # What smtp-source was told: 4xx (retry later) or 5xx, one per message.
    refused=$(grep -c 'rejected: 4[0-9][0-9]' "$root/$tag.source.log")
    rejected=$(grep -c 'rejected: 5[0-9][0-9]' "$root/$tag.source.log")
    # Numbers 1..SENT that are neither delivered nor queued.
    seq 1 "$sent" | sort >"$root/$tag.all"
    cut -d' ' -f1 "$root/$tag.delivered" | cat - "$root/$tag.queued" | sort -u >"$root/$tag.seen"
    comm -23 "$root/$tag.all" "$root/$tag.seen" >"$root/$tag.missing"
    missing=$(wc -l <"$root/$tag.missing")
    scanned=$(awk '$3 == 1' "$root/$tag.delivered" | wc -l)
    unscanned=$((files - scanned))
    awk '$3 == 1 { print $2 }' "$root/$tag.delivered" | sort >"$root/$tag.scanned.qids"
    undecided=$(sort -u "$root/$tag.decisions" | comm -23 "$root/$tag.scanned.qids" - | wc -l)
    dupdecisions=$(uniq -d "$root/$tag.decisions" | wc -l)
    decided=$(sort -u "$root/$tag.decisions" | comm -12 - "$root/$tag.scanned.qids" | wc -l)
    echo "  counts[$tag]: sent=$sent delivered=$delivered files=$files queued=$queued" \
        "refused(4xx)=$refused rejected(5xx)=$rejected missing=$missing duplicates=$dups" \
        "scanned=$scanned unscanned=$unscanned decisions=$(wc -l <"$root/$tag.decisions")" \
        "scanned-without-decision=$undecided qids-decided-twice=$dupdecisions"
}

# The common checks after account(). KILLED is how many SIGKILLs the phase
# sent (default 0): a kill can land after a message's header changes reached
# the MTA and before its decision line was written. The MTA then applies
# milter_default_action and the message is still accounted for, but it
# carries our headers without a decision line: at most one per kill.
check_counts() { # TAG SENT [KILLED]
    check "$1: delivered + queued + refused = sent ($delivered + $queued + $refused = $2)" \
        [ $((delivered + queued + refused + rejected)) -eq "$2" ]
    check "$1: the unaccounted-for messages are exactly the refused ones" [ "$missing" -eq "$refused" ]
    check "$1: no message delivered twice" [ "$dups" -eq 0 ]
    check "$1: every scanned message has a decision line (but what a kill cut: ${3:-0})" \
        [ "$undecided" -le "${3:-0}" ]
    check "$1: no queue id has two decision lines" [ "$dupdecisions" -eq 0 ]
}

settle() {
    h settle 60 || echo "  postfix queue not settled after 60 s"
}

state_warnings() { # LOG
    grep -c 'cannot record the message in StateDir' "$1"
}

# ---- test message: a clean ~10 KB patch ---------------------------------------
# One file changed in 32 hunks, each adding an error check; scored "No".
gen_patch() {
    awk -v hunks=32 'BEGIN {
        print "From: Dana Keeper <dana@example.test>"
        print "To: security@slop.test"
        print "Subject: [PATCH net-next] foo: check the return value of every foo_reg_write()"
        print "Date: Fri, 13 Mar 2026 10:15:00 +0000"
        print "Message-ID: <20260313101500.load-1@example.test>"
        print "MIME-Version: 1.0"
        print "Content-Type: text/plain; charset=us-ascii"
        print ""
        print "foo_hw_setup() and its helpers ignore the result of foo_reg_write(),"
        print "so a bus error during setup leaves the block half configured and the"
        print "driver carries on as if the link were up. Seen on v6.8-rc3 with a"
        print "board whose regulator comes up late: the first writes time out and"
        print "the interface never passes traffic until it is reloaded."
        print ""
        print "Propagate the error from each write, as foo_hw_reset() already does."
        print ""
        print "Fixes: 1a2b3c4d5e6f (\"foo: add driver for the foo bridge\")"
        print "Signed-off-by: Dana Keeper <dana@example.test>"
        print "---"
        print " drivers/net/foo/foo_hw.c | " hunks * 4 " ++++++++++++++++++++++++++++++-----------"
        print " 1 file changed, " hunks * 3 " insertions(+), " hunks " deletions(-)"
        print ""
        print "diff --git a/drivers/net/foo/foo_hw.c b/drivers/net/foo/foo_hw.c"
        print "index 3c4d5e6..7f8a9b0 100644"
        print "--- a/drivers/net/foo/foo_hw.c"
        print "+++ b/drivers/net/foo/foo_hw.c"
        for (h = 0; h < hunks; h++) {
            old = 40 + h * 20
            new = old + 2 * h
            printf "@@ -%d,7 +%d,9 @@ static int foo_hw_setup_block%d(struct foo_priv *priv)\n", old, new, h
            printf " \tu32 val%d = priv->cfg[%d];\n", h, h
            printf " \tint ret;\n"
            printf " \n"
            printf "-\tfoo_reg_write(priv, FOO_REG_CTRL%d, val%d);\n", h, h
            printf "+\tret = foo_reg_write(priv, FOO_REG_CTRL%d, val%d);\n", h, h
            printf "+\tif (ret)\n"
            printf "+\t\treturn ret;\n"
            printf " \n"
            printf " \tpriv->block[%d].ready = true;\n", h
            printf " \treturn 0;\n"
        }
        print "-- "
        print "2.43.0"
    }'
}
gen_patch >"$root/patch.eml"

# ---- start Postfix --------------------------------------------------------------
mta_up=false
for try in 1 2 3; do
    h init "$port" "$sock" accept || skip "cannot set up postfix"
    if h start; then
        mta_up=true
        break
    fi
    h stop >/dev/null 2>&1
    port=$((port + 1 + try * 13))
done
check "postfix starts on 127.0.0.1:$port" $mta_up
$mta_up || exit 1
echo "  test message: $(wc -c <"$root/patch.eml") bytes"

# ---- 1. load ----------------------------------------------------------------------
phase_load() {
    echo "== load: 20 sessions, 400 messages"
    d=$root/p-load tag=t1load
    write_conf "$d"
    check "load: daemon starts" start_daemon "$d"
    t0=$(date +%s%N)
    send_bg "$tag" 400 20
    check "load: smtp-source finishes" wait_source 120
    settle
    t1=$(date +%s%N)
    account "$tag" 400 "$log"
    echo "  load: $(((t1 - t0) / 1000000)) ms for 400 messages"
    check_counts "$tag" 400
    check "load: every message accepted and delivered" [ "$delivered" -eq 400 ]
    check "load: every message scanned" [ "$scanned" -eq 400 ]
    check "load: one decision line per message" [ "$(wc -l <"$root/$tag.decisions")" -eq 400 ]
    check "load: daemon alive" alive "$daemon_pid"
    stop_daemon
}

# ---- 2. SIGKILL and restart under load -------------------------------------------
kill_run() {
    action=$1
    tag=t2kill$action
    echo "== kill ($action): 10 sessions, 200 messages, two SIGKILLs"
    h set "milter_default_action=$action" >/dev/null
    d=$root/p-$tag
    write_conf "$d"
    check "$tag: daemon starts" start_daemon "$d"
    send_bg "$tag" 200 10 -w 1
    kills=0
    for k in 1 2; do
        sleep 3
        kill9_daemon
        kills=$((kills + 1))
        sleep 2
        check "$tag: daemon restarts after SIGKILL #$k" start_daemon "$d"
    done
    check "$tag: smtp-source finishes" wait_source 120
    settle
    h flush >/dev/null 2>&1
    settle
    account "$tag" 200 "$log"
    check_counts "$tag" 200 "$kills"
    if [ "$action" = accept ]; then
        check "$tag: every message accepted" [ "$refused" -eq 0 ]
        check "$tag: mail passed unscanned while the daemon was down" [ "$unscanned" -ge 1 ]
    else
        check "$tag: mail refused with 4xx while the daemon was down" [ "$refused" -ge 1 ]
        check "$tag: every accepted message scanned" [ "$unscanned" -eq 0 ]
        # The clients retry what was refused: all of it must now arrive.
        retried=0 retry_fail=0
        for n in $(cat "$root/$tag.missing"); do
            h send "$root/patch.eml" dana@example.test "$n$tag@slop.test" >/dev/null 2>&1 ||
                retry_fail=$((retry_fail + 1))
            retried=$((retried + 1))
        done
        settle
        : >"$root/$tag.source.log" # nothing refused any more
        account "$tag" 200 "$log"
        echo "  $tag: retried=$retried retry-refused=$retry_fail"
        check "$tag: after the retry every message delivered exactly once" \
            both [ "$delivered" -eq 200 ] [ "$dups" -eq 0 ]
        check "$tag: no retry refused" [ "$retry_fail" -eq 0 ]
        check "$tag: after the retry every scanned message has one decision line" \
            both [ "$undecided" -eq 0 ] [ "$dupdecisions" -eq 0 ]
    fi
    starts=$(grep -c ' starting: ' "$log")
    echo "  $tag: kills=$kills daemon-starts=$starts state-warnings=$(state_warnings "$log")"
    # Each restart reopens the LMDB state a SIGKILL may have cut mid-write.
    check "$tag: state reopened after each SIGKILL ($starts starts)" [ "$starts" -eq 3 ]
    check "$tag: no state write failed after the restarts" [ "$(state_warnings "$log")" -eq 0 ]
    check "$tag: daemon alive" alive "$daemon_pid"
    stop_daemon
}

phase_kill() {
    kill_run accept
    kill_run tempfail
    h set "milter_default_action=accept" >/dev/null
}

# ---- 3. SIGUSR1 reloads under load -------------------------------------------------
phase_reload() {
    echo "== reload: SIGUSR1 every 0.2 s, 10 sessions, 200 messages"
    d=$root/p-reload tag=t3reload
    write_conf "$d" "TagThreshold 5"
    check "reload: daemon starts" start_daemon "$d"
    send_bg "$tag" 200 10 -w 1
    signals=0 n=0
    while kill -0 "$source_pid" 2>/dev/null && [ "$n" -lt 600 ]; do
        # Alternate a setting so every reload swaps in a different snapshot.
        write_conf "$d" "TagThreshold $((5 + n % 2))"
        kill -USR1 "$daemon_pid" 2>/dev/null && signals=$((signals + 1))
        sleep 0.2
        n=$((n + 1))
    done
    check "reload: smtp-source finishes" wait_source 60
    settle
    account "$tag" 200 "$log"
    reloads=$(grep -c ']: reloaded ' "$log")
    reload_failures=$(grep -c 'reload failed' "$log")
    echo "  reload: signals=$signals reloads-logged=$reloads reload-failures=$reload_failures"
    check_counts "$tag" 200
    check "reload: every message delivered" [ "$delivered" -eq 200 ]
    check "reload: every message scanned and decided once" \
        both [ "$scanned" -eq 200 ] [ "$decided" -eq 200 ]
    check "reload: at least 20 reloads done under load" [ "$reloads" -ge 20 ]
    check "reload: no reload failed" [ "$reload_failures" -eq 0 ]
    check "reload: daemon alive" alive "$daemon_pid"
    stop_daemon
}

# ---- 4. full state file system ------------------------------------------------------
phase_fullstate() {
    echo "== fullstate: StateDir on a full file system, 10 sessions, 200 messages"
    d=$root/p-full tag=t4full
    mkdir -p "$d/fs"
    how=""
    if [ -z "${SLOP_LOAD_NO_MOUNT:-}" ] && mount -t tmpfs -o size=256k,mode=0755 slop-load "$d/fs" 2>/dev/null; then
        mounted=$d/fs
        how=tmpfs
        state_dir=$d/fs/state
        write_conf "$d"
        check "fullstate: daemon starts with StateDir on a 256 KB tmpfs" start_daemon "$d"
        # Fill what is left; LMDB's next new page has nowhere to go.
        dd if=/dev/zero of="$d/fs/filler" bs=4k count=1000 2>/dev/null
        echo "  fullstate: tmpfs $(df -k "$d/fs" | awk 'NR == 2 { print $3 " KB used, " $4 " KB free" }')"
    else
        # No mount here: cap the size of any file the daemon writes at the
        # size LMDB's data file has after a first start, so it cannot grow.
        # SIGXFSZ is ignored (the disposition survives exec), making writes
        # past the cap fail with EFBIG; the log goes through a FIFO, which
        # the limit does not apply to.
        how=fsize-limit
        state_dir=$d/state
        write_conf "$d"
        check "fullstate: daemon starts once to create the state" start_daemon "$d"
        stop_daemon
        size=$(stat -c %s "$d/state/data.mdb")
        mkfifo "$d/log.fifo"
        cat "$d/log.fifo" >>"$d/daemon.log" &
        fifo_cat_pid=$!
        daemon_out=$d/log.fifo
        # shellcheck disable=SC2016 # $0 and $@ are the inner shell's
        check "fullstate: daemon starts with a file-size limit of $size bytes" \
            start_daemon "$d" sh -c 'trap "" XFSZ; exec prlimit --fsize='"$size"':unlimited -- "$0" "$@"'
        daemon_out=""
    fi
    echo "  fullstate: method=$how"
    send_bg "$tag" 200 10
    check "fullstate: smtp-source finishes" wait_source 120
    settle
    account "$tag" 200 "$log"
    warnings=$(state_warnings "$log")
    echo "  fullstate: state-write-failures=$warnings"
    check_counts "$tag" 200
    check "fullstate: every message delivered" [ "$delivered" -eq 200 ]
    check "fullstate: every message scanned and decided once" \
        both [ "$scanned" -eq 200 ] [ "$decided" -eq 200 ]
    check "fullstate: state writes failed and were logged" [ "$warnings" -ge 1 ]
    check "fullstate: verdicts unchanged (all accept)" \
        [ "$(grep -c 'result=accept' "$log")" -eq 200 ]
    check "fullstate: daemon alive" alive "$daemon_pid"

    # Room again: the same daemon records again, without a restart.
    if [ "$how" = tmpfs ]; then
        rm -f "$d/fs/filler"
    else
        prlimit --pid "$daemon_pid" --fsize=unlimited
    fi
    tag=t4after
    send_bg "$tag" 20 5
    check "fullstate: smtp-source finishes after space is freed" wait_source 60
    settle
    account "$tag" 20 "$log"
    after=$(state_warnings "$log")
    echo "  fullstate: state-write-failures after space was freed: $((after - warnings))"
    check_counts "$tag" 20
    check "fullstate: after space is freed every message delivered" [ "$delivered" -eq 20 ]
    check "fullstate: after space is freed the state is written again" [ "$after" -eq "$warnings" ]
    check "fullstate: daemon alive after space is freed" alive "$daemon_pid"
    stop_daemon
    if [ -n "$mounted" ]; then
        umount "$mounted" && mounted=""
    fi
    if [ -n "${fifo_cat_pid:-}" ]; then
        wait "$fifo_cat_pid" 2>/dev/null
        fifo_cat_pid=""
    fi
    state_dir=""
}

# ---- 5. a sendmail(8) that never returns --------------------------------------------
phase_sendmail() {
    echo "== sendmail: replies through a sendmail that hangs, 10 sessions, 100 messages"
    d=$root/p-sendmail tag=t5stuck
    fake=$root/fake-sendmail
    # exec: the daemon's SIGKILL must reach the sleeping process itself.
    cat >"$fake" <<EOF
#!/bin/sh
echo \$\$ >>$root/fake-sendmail.pids
exec sleep 3600
EOF
    chmod 755 "$fake"
    reply_conf="ReplyTransport sendmail
SendmailPath $fake
ReplyThreshold 12"
    write_conf "$d"
    reply_conf=""
    check "sendmail: daemon starts" start_daemon "$d"
    h send "$msgs/slop-report.eml" riley@example.test security@slop.test >/dev/null 2>&1
    check "sendmail: report that earns a reply accepted" [ $? -eq 0 ]
    n=0
    while [ ! -s "$root/fake-sendmail.pids" ] && [ "$n" -lt 100 ]; do
        sleep 0.1
        n=$((n + 1))
    done
    check "sendmail: the reply sender ran sendmail" [ -s "$root/fake-sendmail.pids" ]
    fake_pid=$(head -n 1 "$root/fake-sendmail.pids" 2>/dev/null)
    t0=$(date +%s)
    send_bg "$tag" 100 10
    check "sendmail: smtp-source finishes" wait_source 60
    settle
    t1=$(date +%s)
    account "$tag" 100 "$log"
    echo "  sendmail: 100 messages in $((t1 - t0)) s while sendmail (pid $fake_pid) hung"
    check_counts "$tag" 100
    check "sendmail: every message delivered" [ "$delivered" -eq 100 ]
    check "sendmail: every message scanned and decided once" \
        both [ "$scanned" -eq 100 ] [ "$decided" -eq 100 ]
    check "sendmail: mail flowed while sendmail was still hanging" alive "$fake_pid"
    # The per-send timeout is 30 s (reply.h); wait for its log line.
    n=0
    while ! grep -q 'reply to <riley@example.test> failed: sendmail timed out' "$log" && [ "$n" -lt 450 ]; do
        sleep 0.1
        n=$((n + 1))
    done
    t2=$(date +%s)
    echo "  sendmail: reply failure logged $((t2 - t0)) s after the load started"
    grep 'reply to <riley@example.test>' "$log" | sed 's/^/  log: /'
    check "sendmail: the stuck sendmail timed out and the failure was logged" \
        grep -q 'reply to <riley@example.test> failed: sendmail timed out after [0-9]*s, killed' "$log"
    check "sendmail: the stuck sendmail was killed by the daemon" not alive "$fake_pid"
    check "sendmail: no decision lines beyond the load's and the report's" \
        [ "$(wc -l <"$root/$tag.decisions")" -eq 101 ]
    check "sendmail: one decision with reply for the report" \
        [ "$(grep -c 'result=.*reply=' "$log")" -eq 1 ]
    check "sendmail: daemon alive" alive "$daemon_pid"
    stop_daemon
    stop_fake_sendmail
}

for p in $phases; do
    case "$p" in
    load | kill | reload | fullstate | sendmail) "phase_$p" ;;
    *)
        echo "load: unknown phase '$p'" >&2
        failed=$((failed + 1))
        ;;
    esac
done

echo "load: LMDB state after SIGKILL during writes: see tests/unit/test_state.c (test_killed_writer)"
echo "load: $(($(date +%s) - t_start)) s"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
