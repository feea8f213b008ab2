#!/bin/sh
# End to end: slopctl builds the state from a source tree, a git history
# and a MAINTAINERS file made here, then scans reports and patches that
# cite real, missing and already-fixed code, and checks the findings in
# the JSON output. Also duplicates, floods and series (a flagged cover
# letter carried to its patch, repeated logs) through --record, and
# db stats/prune/dump/load.
# Usage: sh e2e.sh SLOPCTL RULES_DIR
set -u

if [ $# -ne 2 ]; then
    echo "usage: sh e2e.sh SLOPCTL RULES_DIR" >&2
    exit 2
fi
SLOPCTL=$1
RULES=$2
unset SLOP_RULES_DIR STATE_DIRECTORY

T=$(mktemp -d "${TMPDIR:-/tmp}/slop-e2e.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
trap 'exit 1' HUP INT TERM

pass=0
fail=0
ok() {
    pass=$((pass + 1))
    printf 'ok - %s\n' "$1"
}
not_ok() {
    fail=$((fail + 1))
    printf 'not ok - %s\n' "$1"
    for f in "$T/out" "$T/err"; do
        [ -s "$f" ] && sed 's/^/#   /' "$f" | head -20
    done
}
run() {
    "$SLOPCTL" "$@" >"$T/out" 2>"$T/err"
    rc=$?
}
# jcheck EXPR: Python over L, the JSON objects printed, and H(i), the
# hits of the i-th object by rule name.
jcheck() {
    python3 -c '
import json, sys
L = [json.loads(l) for l in open(sys.argv[1], encoding="utf-8").read().split("\n") if l]
def H(i):
    return {h["rule"]: h for h in L[i]["hits"]}
sys.exit(0 if eval(sys.argv[2]) else 1)
' "$T/out" "$1" 2>>"$T/err"
}
check() {
    desc=$1
    shift
    if "$@"; then ok "$desc"; else not_ok "$desc"; fi
}
scan() {
    run scan --json --rules "$RULES" --state "$T/state" "$@"
}

# Only the state rules: the findings checked here are theirs, and other
# rule files must not change which hits appear.
mkdir "$T/rules"
cp "$RULES/80-state.rules" "$T/rules/" || exit 1
FIXTURES=$(dirname "$0")/../fixtures
# The series: the cover letter rules flag a cover, 85 carries it.
mkdir "$T/series-rules"
cp "$RULES/35-series.rules" "$RULES/85-series.rules" "$T/series-rules/" || exit 1
RULES=$T/rules

if ! command -v git >/dev/null 2>&1; then
    echo "git is needed (scripts/install-deps)" >&2
    exit 1
fi
G() {
    git -C "$T/src" -c user.name=Tester -c user.email=tester@example.org \
        -c commit.gpgsign=false "$@" >/dev/null 2>&1
}

# ---- a small source tree with a history holding a known fix ----
mkdir -p "$T/src/drivers/usb/core" "$T/src/include/linux" "$T/src/kernel"
cat >"$T/src/drivers/usb/core/hub.c" <<'EOF'
// SPDX-License-Identifier: GPL-2.0
#include <linux/usb.h>

#define HUB_RETRIES 4

static int hub_port_reset(struct usb_hub *hub, int port1)
{
	return usb_reset_port(hub, port1);
}

static int hub_port_init(struct usb_hub *hub, struct usb_device *udev,
			 int port1)
{
	struct usb_port *port_dev = hub->ports[port1 - 1];
	int retries, retval = 0;

	for (retries = 0; retries < HUB_RETRIES; retries++) {
		retval = hub_port_reset(hub, port1);
	}
	usb_put_port(port_dev);
	return retval;
}

void usb_hub_release(struct usb_hub *hub)
{
	kfree(hub);
}
EXPORT_SYMBOL_GPL(usb_hub_release);
EOF
cat >"$T/src/drivers/usb/core/Kconfig" <<'EOF'
config USB
	tristate "Support for Host-side USB"

menuconfig USB_HUB_EXTRA
	bool "Extra hub support"
EOF
cat >"$T/src/include/linux/usb.h" <<'EOF'
#ifndef __LINUX_USB_H
#define __LINUX_USB_H
struct usb_hub;
int usb_reset_port(struct usb_hub *hub, int port1);
void usb_put_port(struct usb_port *port);
static inline int usb_port_count(const struct usb_hub *hub) { return 4; }
#endif
EOF
cat >"$T/src/kernel/sys.c" <<'EOF'
SYSCALL_DEFINE3(hubctl, int, fd, unsigned int, cmd, unsigned long, arg)
{
	return 0;
}
EOF
cat >"$T/src/MAINTAINERS" <<'EOF'
List of maintainers
===================

USB SUBSYSTEM
M:	Greg Maintainer <greg@maint.example>
L:	linux-usb@vger.kernel.org
S:	Supported
F:	drivers/usb/
F:	include/linux/usb.h

THE REST
M:	Linus Torvalds <torvalds@linux-foundation.org>
L:	linux-kernel@vger.kernel.org
F:	*
F:	*/
EOF
G init -q
G add -A
G commit -q -m "Initial tree"
sed -i 's/\tusb_put_port(port_dev);/\tusb_put_port_after_reset(port_dev, retval);/' \
    "$T/src/drivers/usb/core/hub.c"
G commit -q -a -m "usb: hub: fix use-after-free in hub_port_init()

The port is put before the retry loop is done with it.

Fixes: 0123456789ab (\"usb: hub: add port retries\")"
FIX=$(git -C "$T/src" rev-parse --short=12 HEAD)

# ---- imports ----
run import tree --state "$T/state" --date 2026-11-30 "$T/src"
check "import tree succeeds" [ "$rc" -eq 0 ]
check "import tree reports the files and the label" \
    grep -q 'indexed 5 files, 6 directories.*indexed tree of 2026-11-30' "$T/out"
run import fixes --state "$T/state" --git "$T/src"
check "import fixes --git succeeds" [ "$rc" -eq 0 ]
check "import fixes counts the commits" grep -q '^imported 2 commits' "$T/out"
git -C "$T/src" log -p >"$T/log.txt"
run import fixes --state "$T/state" "$T/log.txt"
check "import fixes from git log -p text succeeds again (additive)" [ "$rc" -eq 0 ]
"$SLOPCTL" import fixes --state "$T/state" - <"$T/log.txt" >"$T/out" 2>"$T/err"
rc=$?
check "import fixes from standard input succeeds" [ "$rc" -eq 0 ]
run import fixes --state "$T/state" --git "$T/nonexistent"
check "import fixes --git on a missing repository fails" [ "$rc" -ne 0 ]
run import tree --state "$T/state2" "$T/nonexistent"
check "import tree of a missing directory fails with EX_NOINPUT" [ "$rc" -eq 66 ]
run import maintainers --state "$T/state" "$T/src/MAINTAINERS"
check "import maintainers keeps the USB section, not THE REST" \
    grep -q '^imported 1 sections' "$T/out"

# ---- messages ----
mk() { # mk FILE FROM TO CC MSGID SUBJECT BODY-FILE
    {
        printf 'From: %s\nTo: %s\n' "$2" "$3"
        [ -n "$4" ] && printf 'Cc: %s\n' "$4"
        printf 'Subject: %s\nMessage-ID: <%s>\n' "$6" "$5"
        printf 'Date: Mon, 30 Nov 2026 10:00:00 +0000\nContent-Type: text/plain\n\n'
        cat "$7"
    } >"$T/$1"
}
cat >"$T/b-real" <<'EOF'
On Linux 6.12 the hub driver keeps resetting a port. In hub_port_init()
the retry counter is never checked after usb_hub_release() runs, so a
device that never answers keeps the port busy. The code is in
drivers/usb/core/hub.c (CONFIG_USB=y); sys_hubctl() is not involved.
Plugging a crafted device into a test machine shows the loop.
EOF
cat >"$T/b-missing" <<'EOF'
On Linux 6.12 the hub driver trusts the descriptor chain. In
hub_port_verify_chain() the length is never checked before
usb_hub_quirk_apply() walks it, so a malicious device reads past the
buffer. The code is in drivers/usb/core/hub_quirks.c.
Plugging a crafted device into a test machine shows the problem.
EOF
cat >"$T/b-kasan" <<'EOF'
On Linux 6.12 unplugging a hub during enumeration gives:

BUG: KASAN: slab-use-after-free in hub_port_init+0x1a4/0x1f30
Read of size 8 at addr ffff888012345678 by task kworker/0:1/12
Call Trace:
 <TASK>
 hub_port_init+0x1a4/0x1f30
 hub_event+0x2a1/0x4c0
 </TASK>
EOF
cat >"$T/b-fixpatch" <<'EOF'
The port is put before the retry loop is done with it; move the put.

Signed-off-by: Pat Sender <pat@sender.example>
---
diff --git a/drivers/usb/core/hub.c b/drivers/usb/core/hub.c
--- a/drivers/usb/core/hub.c
+++ b/drivers/usb/core/hub.c
@@ -18,7 +18,7 @@ static int hub_port_init(struct usb_hub *hub, struct usb_device *udev,
 	for (retries = 0; retries < HUB_RETRIES; retries++) {
 		retval = hub_port_reset(hub, port1);
 	}
-	usb_put_port(port_dev);
+	usb_put_port_after_reset(port_dev, retval);
 	return retval;
 }
EOF
cat >"$T/b-newpatch" <<'EOF'
Return the error of the last reset instead of the count.

Signed-off-by: Pat Sender <pat@sender.example>
---
diff --git a/drivers/usb/core/hub.c b/drivers/usb/core/hub.c
--- a/drivers/usb/core/hub.c
+++ b/drivers/usb/core/hub.c
@@ -9,3 +9,3 @@ static int hub_port_reset(struct usb_hub *hub, int port1)
 {
-	return usb_reset_port(hub, port1);
+	return usb_reset_port(hub, port1) ?: -ENODEV;
 }
EOF
cat >"$T/b-missingpatch" <<'EOF'
Check the quirk length before the walk.

Signed-off-by: Pat Sender <pat@sender.example>
---
diff --git a/drivers/usb/core/hub_quirks.c b/drivers/usb/core/hub_quirks.c
--- a/drivers/usb/core/hub_quirks.c
+++ b/drivers/usb/core/hub_quirks.c
@@ -40,3 +40,5 @@ static int hub_quirk_walk(struct usb_hub *hub, u8 *buf, int len)
 	for (i = 0; i < len; i += buf[i]) {
+		if (buf[i] == 0 || i + buf[i] > len)
+			return -EINVAL;
 		hub_quirk_apply(hub, buf + i);
EOF
cat >"$T/b-callpatch" <<'EOF'
Validate the port before the reset.

Signed-off-by: Pat Sender <pat@sender.example>
---
diff --git a/drivers/usb/core/hub.c b/drivers/usb/core/hub.c
--- a/drivers/usb/core/hub.c
+++ b/drivers/usb/core/hub.c
@@ -17,3 +17,7 @@ static int hub_port_init(struct usb_hub *hub, struct usb_device *udev,
 	for (retries = 0; retries < HUB_RETRIES; retries++) {
+		if (!usb_hub_port_is_sane(hub, port1))
+			return -EINVAL;
+		if (hub_port_quirk_lookup(hub, port1))
+			continue;
 		retval = hub_port_reset(hub, port1);
EOF
R='Sam Reporter <sam@reporter.example>'
P='Pat Sender <pat@sender.example>'
GREG='Greg Maintainer <greg@maint.example>'
mk real.eml "$R" security@kernel.org "$GREG" real-1@r.example "[BUG] usb: hub: port reset loop" "$T/b-real"
mk missing.eml "$R" security@kernel.org "$GREG" missing-1@r.example "[BUG] usb: hub: descriptor bypass" "$T/b-missing"
mk kasan.eml "$R" security@kernel.org "$GREG" kasan-1@r.example "KASAN: slab-use-after-free in hub_port_init" "$T/b-kasan"
mk fixpatch.eml "$P" linux-usb@vger.kernel.org "$GREG" fix-1@p.example "[PATCH] usb: hub: put the port after the retries" "$T/b-fixpatch"
mk newpatch.eml "$P" linux-usb@vger.kernel.org "$GREG" new-1@p.example "[PATCH] usb: hub: return the reset error" "$T/b-newpatch"
mk uncc.eml "$P" linux-usb@vger.kernel.org "" uncc-1@p.example "[PATCH] usb: hub: return the reset error" "$T/b-newpatch"
mk callpatch.eml "$P" linux-usb@vger.kernel.org "$GREG" call-1@p.example "[PATCH] usb: hub: validate the port" "$T/b-callpatch"
mk missingpatch.eml "$P" linux-usb@vger.kernel.org "$GREG" mp-1@p.example "[PATCH] usb: hub: check the quirk length" "$T/b-missingpatch"

# ---- made-up code ----
scan "$T/real.eml"
check "real code: no made-up finding" jcheck '"MADE_UP_CODE" not in H(0) and "MADE_UP_PATH" not in H(0)'
scan "$T/missing.eml"
check "missing code: MADE_UP_CODE names both functions and the tree date" \
    jcheck '"hub_port_verify_chain(), usb_hub_quirk_apply() not found in the indexed tree of 2026-11-30" in H(0)["MADE_UP_CODE"]["evidence"]'
check "missing code: MADE_UP_PATH names the file" \
    jcheck '"drivers/usb/core/hub_quirks.c not found" in H(0)["MADE_UP_PATH"]["evidence"]'
run scan --json --rules "$RULES" "$T/missing.eml"
check "without --state no state finding" jcheck '"MADE_UP_CODE" not in H(0)'
scan "$T/missingpatch.eml"
check "diff against a missing file: DIFF_AGAINST_MISSING_PATH" \
    jcheck '"drivers/usb/core/hub_quirks.c" in H(0)["DIFF_AGAINST_MISSING_PATH"]["evidence"]'
scan "$T/newpatch.eml"
check "diff against a real file: quiet" jcheck '"DIFF_AGAINST_MISSING_PATH" not in H(0)'
scan "$T/callpatch.eml"
check "patch calling functions no tree has: MADE_UP_CODE" \
    jcheck '"usb_hub_port_is_sane() (called), hub_port_quirk_lookup() (called) not found" in H(0)["MADE_UP_CODE"]["evidence"]'
scan "$T/newpatch.eml"
check "patch calling real functions: no MADE_UP_CODE" jcheck '"MADE_UP_CODE" not in H(0)'

# ---- already fixed ----
scan "$T/fixpatch.eml"
check "merged change: ALREADY_FIXED with commit and subject" \
    jcheck "'already fixed in $FIX (\"usb: hub: fix use-after-free in hub_port_init()\")' == H(0)['ALREADY_FIXED']['evidence']"
scan "$T/newpatch.eml"
check "unmerged change: no ALREADY_FIXED" jcheck '"ALREADY_FIXED" not in H(0)'
scan "$T/kasan.eml"
check "report of a fixed bug: ALREADY_FIXED" \
    jcheck "'already fixed in $FIX' in H(0)['ALREADY_FIXED']['evidence']"
scan "$T/real.eml"
check "report of another bug in the same function: quiet" jcheck '"ALREADY_FIXED" not in H(0)'

# ---- routing ----
scan "$T/uncc.eml"
check "patch without the maintainer: MAINTAINERS_NOT_CC names greg" \
    jcheck 'H(0)["MAINTAINERS_NOT_CC"]["evidence"] == "maintainers not in Cc: greg@maint.example"'
scan "$T/newpatch.eml"
check "patch with the maintainer in Cc: quiet" jcheck '"MAINTAINERS_NOT_CC" not in H(0)'

# ---- duplicates and floods through --record ----
# An offline scan records (with --record) and judges each message as of
# its arrival (its Received:, else its Date:): only mail that arrived
# before it can be what it duplicates, and the same author's resend is no
# duplicate (issue 31, findings 2 and 3).
later() { # later FILE NEW-FILE MSGID [FROM]: a copy that arrived an hour later
    sed "s/^Message-ID: .*/Message-ID: <$3>/; s/^Date: .*/Date: Mon, 30 Nov 2026 11:00:00 +0000/" \
        "$T/$1" >"$T/$2"
    [ -z "${4:-}" ] || sed -i "s/^From: .*/From: $4/" "$T/$2"
}
scan --record "$T/real.eml"
check "first report recorded, no duplicate" jcheck '"DUPLICATE" not in H(0)'
later real.eml real2.eml real-2@r.example 'Other Finder <other@finder.example>'
later real.eml resend.eml resend-1@r.example
scan "$T/real2.eml"
check "same report later from another sender: DUPLICATE" \
    jcheck 'H(0)["DUPLICATE"]["evidence"].startswith("duplicate of <real-1@r.example> from ")'
scan "$T/resend.eml"
check "same report resent later by its author: no DUPLICATE" jcheck '"DUPLICATE" not in H(0)'
scan "$T/real.eml"
check "the recorded message itself is no duplicate" jcheck '"DUPLICATE" not in H(0)'
scan "$T/missing.eml"
check "a different report: no DUPLICATE" jcheck '"DUPLICATE" not in H(0)'
scan --record "$T/real2.eml"
scan "$T/real.eml" "$T/real2.eml"
check "after the later copy is recorded, the earlier one is still no duplicate of it" \
    jcheck '"DUPLICATE" not in H(0) and "DUPLICATE" in H(1)'
sum_before=$(cksum <"$T/state/data.mdb")
scan "$T/real.eml" "$T/real2.eml" "$T/missing.eml"
check "scan without --record leaves the state's data as it was" \
    [ "$sum_before" = "$(cksum <"$T/state/data.mdb")" ]
scan --record "$T/fixpatch.eml"
later fixpatch.eml fixpatch2.eml fix-2@p.example 'Other Sender <other@sender.example>'
later fixpatch.eml fixresend.eml fix-3@p.example
scan "$T/fixpatch2.eml"
check "same patch later from another sender: DUPLICATE" jcheck '"DUPLICATE" in H(0)'
scan "$T/fixresend.eml"
check "same patch resent by its author: no DUPLICATE" jcheck '"DUPLICATE" not in H(0)'

i=0
while [ $i -lt 9 ]; do
    sed "s/real-1@r.example/flood-$i@r.example/; s/port reset loop/loop $i/" "$T/real.eml" >"$T/f$i.eml"
    i=$((i + 1))
done
scan --record "$T"/f?.eml
check "ten reports today: no flood yet" jcheck 'all("SENDER_FLOOD" not in H(i) for i in range(len(L)))'
scan "$T/missing.eml"
check "the eleventh report today: SENDER_FLOOD" \
    jcheck '"11 patches and reports from sam@reporter.example today" == H(0)["SENDER_FLOOD"]["evidence"]'
run scan --json --rules "$RULES" --state "$T/state" "$T/newpatch.eml"
check "another sender: no flood" jcheck '"SENDER_FLOOD" not in H(0)'

# ---- series: the cover letter's findings and repeated logs ----
sscan() {
    run scan --json --rules "$T/series-rules" --state "$T/state" "$@"
}
COVER_ID=20261012071402.5521-0-tomas.reyes@example.net
spatch() { # spatch FILE MSGID SUBJECT IN-REPLY-TO BODY-FILE
    {
        printf 'From: Tomas Reyes <tomas.reyes@example.net>\nTo: linux-input@vger.kernel.org\n'
        printf 'Subject: %s\nMessage-ID: <%s>\n' "$3" "$2"
        [ -n "$4" ] && printf 'In-Reply-To: <%s>\nReferences: <%s>\n' "$4" "$4"
        printf 'Date: Mon, 12 Oct 2026 09:14:03 +0200\nContent-Type: text/plain\n\n'
        cat "$5"
        printf '%s\n' '---' ' drivers/hid/hid-quirkpad.c | 3 ++-' \
            ' 1 file changed, 2 insertions(+), 1 deletion(-)' '' \
            'diff --git a/drivers/hid/hid-quirkpad.c b/drivers/hid/hid-quirkpad.c' \
            '--- a/drivers/hid/hid-quirkpad.c' '+++ b/drivers/hid/hid-quirkpad.c' \
            '@@ -40,2 +40,4 @@ static int quirkpad_raw_event(struct hid_device *hdev,' \
            ' 	struct quirkpad *qp = hid_get_drvdata(hdev);' \
            '+	if (size < 8)' '+		return 0;' ' 	memcpy(qp->state, data, 8);'
    } >"$T/$1"
}
cat >"$T/b-series1" <<'EOF'
quirkpad_raw_event() copies eight bytes of report 3 before it looks at
the size the transport delivered, so a short report is read past its
end. Drop reports shorter than the layout.

Signed-off-by: Tomas Reyes <tomas.reyes@example.net>
EOF
spatch cover-p1.eml "20261012071402.5521-1-tomas.reyes@example.net" \
    "[PATCH 1/1] HID: quirkpad: bound the report length before copying" "$COVER_ID" "$T/b-series1"
sscan --record "$T/cover-p1.eml"
check "a patch whose cover letter was not seen: no SERIES_COVER_FLAGGED" \
    jcheck '"SERIES_COVER_FLAGGED" not in H(0)'
sscan --record "$FIXTURES/det-series-cover-verbose.eml"
check "the cover letter is flagged on its own findings" \
    jcheck '"COVER_VERBOSE_FOR_SERIES" in H(0) and L[0]["action"] == "tag"'
sscan "$T/cover-p1.eml"
check "its patch 1/1 carries the cover letter's findings" \
    jcheck 'H(0)["SERIES_COVER_FLAGGED"]["evidence"].startswith("the series\x27 cover letter <'"$COVER_ID"'> was flagged: COVER_VERBOSE_FOR_SERIES")'
sed 's/^In-Reply-To: .*/In-Reply-To: <other-cover@example.net>/; s/^References: .*/References: <other-cover@example.net>/' \
    "$T/cover-p1.eml" >"$T/cover-p1b.eml"
sscan "$T/cover-p1b.eml"
check "the same patch under another cover letter: no SERIES_COVER_FLAGGED" \
    jcheck '"SERIES_COVER_FLAGGED" not in H(0)'
sscan --record "$FIXTURES/det-genuine-series-short-cover.eml"
spatch quiet-p1.eml "20261021053245.11402-1-priya.raman@example.com" \
    "[PATCH 1/2] HID: quirkpad: bound the report length before copying" \
    "20261021053245.11402-0-priya.raman@example.com" "$T/b-series1"
sscan "$T/quiet-p1.eml"
check "a patch of a quiet cover letter: no SERIES_COVER_FLAGGED" \
    jcheck '"SERIES_COVER_FLAGGED" not in H(0)'

cat >"$T/b-boiler" <<'EOF'
This change is part of a larger effort to harden the input subsystem
against malicious or malfunctioning devices that send reports which do
not match their descriptors, as identified by a careful review of every
raw event handler in the HID drivers.

By validating the report length before accessing the data, we ensure
that the driver never reads beyond the end of the buffer, which improves
the robustness and security of the kernel for all users of the driver.
EOF
i=1
for drv in quirkpad joymax padlite; do
    {
        printf 'In %s_raw_event() report %s is copied before its size is checked.\n\n' "$drv" "$i"
        cat "$T/b-boiler"
        printf '\nSigned-off-by: Tomas Reyes <tomas.reyes@example.net>\n'
    } >"$T/b-bp$i"
    spatch "bp$i.eml" "bp-$i@example.net" "[PATCH $i/3] HID: $drv: check the report length" \
        "bp-0@example.net" "$T/b-bp$i"
    {
        printf 'In %s_raw_event() report %s is copied before its size is checked:\n' "$drv" "$i"
        printf 'the %s descriptor declares %s bytes and the handler trusts it.\n' "$drv" "$((i + 6))"
        printf '\nSigned-off-by: Tomas Reyes <tomas.reyes@example.net>\n'
    } >"$T/b-ds$i"
    spatch "ds$i.eml" "ds-$i@example.net" "[PATCH $i/3] HID: $drv: check the report length" \
        "ds-0@example.net" "$T/b-ds$i"
    i=$((i + 1))
done
sscan --record "$T/bp1.eml" "$T/bp2.eml" "$T/bp3.eml"
check "a series repeating its log: SERIES_BOILERPLATE_LOG at patch 3, not at 1 or 2" \
    jcheck '"SERIES_BOILERPLATE_LOG" not in H(0) and "SERIES_BOILERPLATE_LOG" not in H(1) and H(2)["SERIES_BOILERPLATE_LOG"]["evidence"].startswith("2 of 3 changelog paragraphs")'
sscan --record "$T/ds1.eml" "$T/ds2.eml" "$T/ds3.eml"
check "a series with distinct logs: no SERIES_BOILERPLATE_LOG" \
    jcheck 'all("SERIES_BOILERPLATE_LOG" not in H(i) for i in range(3))'
cat >"$T/b-motive" <<'EOF'
strlcpy() reads the whole source string even when it only copies a
part of it, and it is being removed from the kernel in favour of
strscpy(), which returns -E2BIG when the string was cut.
EOF
i=1
for drv in quirkpad joymax padlite; do
    {
        cat "$T/b-motive"
        printf '\nIn %s_probe() the name copied into the input device comes from the\n' "$drv"
        printf 'descriptor of report %s, which is never terminated by the %s firmware:\n' "$i" "$drv"
        printf 'the copy now stops at the %s-byte field, and a cut name is logged once\n' "$((i * 8))"
        printf 'instead of reading into the %s bytes that follow it in the buffer.\n' "$drv"
        printf '\nSigned-off-by: Tomas Reyes <tomas.reyes@example.net>\n'
    } >"$T/b-tw$i"
    spatch "tw$i.eml" "tw-$i@example.net" "[PATCH $i/3] HID: $drv: use strscpy() for the name" \
        "tw-0@example.net" "$T/b-tw$i"
    i=$((i + 1))
done
sscan --record "$T/tw1.eml" "$T/tw2.eml" "$T/tw3.eml"
check "a series sharing its motivation, each log with its own reason: no SERIES_BOILERPLATE_LOG" \
    jcheck 'all("SERIES_BOILERPLATE_LOG" not in H(i) for i in range(3))'
sscan "$T/bp3.eml"
check "a patch rescanned is not its own earlier copy" \
    jcheck '"repeat those of 2 other patches" in H(0)["SERIES_BOILERPLATE_LOG"]["evidence"]'
run db stats --state "$T/state"
check "db stats lists the series tables" \
    sh -c "grep -q 'series_cover' '$T/out' && grep -q 'series_log' '$T/out'"

# ---- trusted maintainers ----
mk greg.eml "$GREG" linux-usb@vger.kernel.org "" greg-1@m.example "[PATCH] usb: hub: check the quirk length" "$T/b-missingpatch"
run scan --json --rules "$RULES" --state "$T/state" --threshold tag=1 --threshold reply=2 "$T/greg.eml"
check "a maintainer's patch is tagged, never answered" \
    jcheck '"DIFF_AGAINST_MISSING_PATH" in H(0) and L[0]["action"] == "tag"'

# ---- db ----
run db stats --state "$T/state"
check "db stats lists the tables and the tree" \
    sh -c "grep -q 'tree: indexed tree of 2026-11-30' '$T/out' && grep -q 'tree_sym' '$T/out' && grep -q 'seen_fp' '$T/out'"
check "db stats: the symbols were indexed" \
    sh -c "grep -E '^ +tree_sym +[0-9]+ entries' '$T/out' | awk '{exit !(\$2 >= 6)}'"
if command -v mdb_dump >/dev/null 2>&1 && command -v mdb_load >/dev/null 2>&1; then
    run db dump --state "$T/state" "$T/backup.dump"
    check "db dump writes a backup" [ "$rc" -eq 0 -a -s "$T/backup.dump" ]
    run db load --state "$T/restored" "$T/backup.dump"
    check "db load restores it" [ "$rc" -eq 0 ]
    run scan --json --rules "$RULES" --state "$T/restored" "$T/fixpatch2.eml"
    check "the restored state finds the fix and the duplicate" \
        jcheck '"ALREADY_FIXED" in H(0) and "DUPLICATE" in H(0)'
else
    echo "# mdb_dump/mdb_load missing (lmdb-utils): dump/load not checked"
fi
run db prune --state "$T/state" --days 0
check "db prune removes the recorded fingerprints" grep -q 'pruned' "$T/out"
scan "$T/real2.eml"
# A shared backend (tests/state/redis.sh) keeps fingerprints until their TTL.
if [ -z "${SLOP_E2E_SHARED:-}" ]; then
    check "after prune: no DUPLICATE" jcheck '"DUPLICATE" not in H(0)'
fi
sscan "$T/cover-p1.eml" "$T/bp3.eml"
check "after prune: the series findings are gone" \
    jcheck '"SERIES_COVER_FLAGGED" not in H(0) and "SERIES_BOILERPLATE_LOG" not in H(1)'
run scan --json --rules "$RULES" --state "$T/nonexistent" "$T/real.eml"
check "scan with a missing state fails cleanly" [ "$rc" -eq 66 ]

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
