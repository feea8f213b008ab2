#!/bin/sh
# slopctl report in a real browser: fixture mails written here (patches, a
# report, an mbox, mail carrying <script>, event handlers, javascript: URLs
# and broken bytes) go through slopctl report; headless Chromium opens the
# HTML file, and the DOM it rendered is checked: the counts equal what
# slopctl scan --json says for the same files, the page's own sorting
# script ran (its CSP hash is right), nothing from mail became markup or
# ran. Skips (77) when chromium is missing, unless SLOP_REQUIRE_INTEGRATION
# is set: then that is a failure.
# Usage: sh report.sh SLOPCTL
set -u

if [ $# -ne 1 ]; then
    echo "usage: sh report.sh SLOPCTL" >&2
    exit 2
fi
SLOPCTL=$1
unset SLOP_RULES_DIR

CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$CHROMIUM" ]; then
    if [ -n "${SLOP_REQUIRE_INTEGRATION:-}" ]; then
        echo "not ok - chromium is not installed (scripts/install-deps --test)"
        exit 1
    fi
    echo "# skip: chromium is not installed (scripts/install-deps --test)"
    exit 77
fi

T=$(mktemp -d "${TMPDIR:-/tmp}/slopctl-report.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
trap 'exit 1' HUP INT TERM

pass=0
fail=0
check() {
    desc=$1
    shift
    if "$@" >"$T/check.out" 2>&1; then
        pass=$((pass + 1))
        printf 'ok - %s\n' "$desc"
    else
        fail=$((fail + 1))
        printf 'not ok - %s\n' "$desc"
        sed 's/^/#   /' "$T/check.out" | head -20
    fi
}

# dom FILE.html [FRAGMENT] > OUT: the DOM Chromium built, after scripts ran.
# A private profile, home and cache; killed after 120 s at the latest.
dom() {
    HOME=$T/home XDG_CONFIG_HOME=$T/home XDG_CACHE_HOME=$T/home \
        timeout -k 10 120 "$CHROMIUM" --headless --disable-gpu --no-sandbox \
        --no-first-run --disable-extensions --disable-background-networking \
        --user-data-dir="$T/profile" --dump-dom "file://$1${2:-}" 2>>"$T/chromium.log"
}

mkdir -p "$T/rules" "$T/mail" "$T/home"
cat >"$T/rules/10-test.rules" <<'EOF'
# Rules for this test only: scores chosen against the thresholds given
# below (tag 1, reply 5, quarantine 8, reject 20).
rule TEST_ZEBRA
    describe  the subject mentions a zebra
    score     2
    doc       @/process/zebra.html
    match     subject /zebra/i

rule TEST_OVERFLOW
    describe  the text claims an overflow
    score     6
    doc       https://elsewhere.example.org/"onmouseover="document.title='PWNED'
    match     body /overflows? its buffer/

rule TEST_SCRIPT
    describe  a script element in the body
    score     9
    doc       @/x"onmouseover="document.title='PWNED'
    match     body /<script>[^\n]*/

rule TEST_IMG
    describe  an image with an error handler
    score     4
    match     body /<img[^\n]*/

rule TEST_SVG
    describe  an svg with a load handler
    score     4
    match     body /<svg[^\n]*/

rule TEST_JSURL
    describe  a javascript URL
    score     4
    match     body /<a href=[^\n]*/

rule TEST_BROKEN
    describe  bytes that are not text
    score     0.5
    match     body /broken[^\n]*/
EOF

# msg FROM TO SUBJECT ID DATE BODY: a plain-text message (DATE "" for none).
msg() {
    printf 'From: %s\nTo: %s\nSubject: %s\nMessage-ID: <%s>\n' "$1" "$2" "$3" "$4"
    [ -n "$5" ] && printf 'Date: %s\n' "$5"
    printf 'MIME-Version: 1.0\nContent-Type: text/plain; charset=utf-8\n\n%s\n' "$6"
}

DIFF='---
 drivers/frob/frob.c | 2 ++
 1 file changed, 2 insertions(+)

diff --git a/drivers/frob/frob.c b/drivers/frob/frob.c
--- a/drivers/frob/frob.c
+++ b/drivers/frob/frob.c
@@ -10,6 +10,8 @@ static int frob_parse(const u8 *buf, size_t len)
 {
 	struct frob_hdr *h = (void *)buf;
 
+	if (len < sizeof(*h))
+		return -EINVAL;
 	return h->type;
 }
--
2.43.0'

msg "Ann Dev <ann@example.org>" dev@lists.example.org "[PATCH] zebra: fix the stripes" \
    p1@example.org "Mon, 1 Jan 2024 10:00:00 +0000" "Check the length first.

Signed-off-by: Ann Dev <ann@example.org>
$DIFF" >"$T/mail/patch1.eml"
msg "Bob Dev <bob@example.org>" dev@lists.example.org "[PATCH v2 1/2] frob: check the length" \
    p2@example.org "Tue, 2 Jan 2024 23:30:00 -0200" "Check the length first.

Signed-off-by: Bob Dev <bob@example.org>
$DIFF" >"$T/mail/patch2.eml"
msg "Carol <carol@example.org>" security@example.org "frob parser crash" r1@example.org \
    "Wed, 3 Jan 2024 09:00:00 +0100" "The frob parser overflows its buffer when the
header is short. KASAN reports a slab-out-of-bounds read." >"$T/mail/report.eml"
{
    printf 'From ann@example.org Mon Jan  1 10:00:00 2024\n'
    msg "Ann Dev <ANN@example.org>" dev@lists.example.org "Re: zebra stripes" m1@example.org \
        "Thu, 4 Jan 2024 10:00:00 +0000" "Thanks, applied."
    printf '\nFrom dan@example.org Mon Jan  1 10:00:00 2024\n'
    msg "Dan <dan@example.org>" dev@lists.example.org "meeting notes" m2@example.org "" \
        "No date on this one."
    printf '\n'
} >"$T/mail/box.mbox"
# The hostile mail: every vector that would run script or break the page
# if a byte of it reached the HTML unescaped, plus bytes that are not
# UTF-8, control characters and a right-to-left override (U+202E).
{
    msg "\"<img src=x onerror=document.title='PWNED'>\" <evil@example.org>" \
        security@example.org \
        "<script>document.title='PWNED'</script></style></title><svg onload=document.title='PWNED'>" \
        "\"><script>document.title='PWNED'</script>@example.org" \
        "Fri, 5 Jan 2024 12:00:00 +0000" \
        "<script>document.body.insertAdjacentHTML('beforeend','<b id=pwned>x</b>')</script>
<img src=x onerror=\"document.body.insertAdjacentHTML('beforeend','<b id=pwned>x</b>')\">
<svg onload=\"document.body.insertAdjacentHTML('beforeend','<b id=pwned>x</b>')\"></svg>
<a href=\"javascript:document.title='PWNED'\">click</a></td></tr></table><!--"
    printf 'broken \377\376 bytes, a bell \007, an escape \033[31m, an override \342\200\256 here\n'
} >"$T/mail/hostile.eml"
# A file name is text from the outside world too.
cp "$T/mail/patch2.eml" "$T/mail/\"><svg onload=document.title='PWNED'>.eml"

ARGS="--no-state --rules $T/rules -t tag=1 -t reply=5 -t quarantine=8 -t reject=20"
# shellcheck disable=SC2086
"$SLOPCTL" scan --json $ARGS "$T/mail" "$T/missing.eml" >"$T/scan.json" 2>"$T/scan.err"
# shellcheck disable=SC2086
"$SLOPCTL" report $ARGS -o "$T/report.html" "$T/mail" "$T/missing.eml" 2>"$T/report.err"
rc=$?
check "report: exit 1 (one path missing), as scan" sh -c "[ $rc -eq 1 ]"
check "report: the file is written" test -s "$T/report.html"
dom "$T/report.html" >"$T/dom.html"
check "chromium rendered the report" test -s "$T/dom.html"
dom "$T/report.html" "#sort=score-asc" >"$T/dom-asc.html"
# shellcheck disable=SC2086
"$SLOPCTL" report $ARGS --doc-base "javascript:document.title='PWNED'//" -o "$T/js.html" \
    "$T/mail" 2>/dev/null
dom "$T/js.html" >"$T/dom-js.html"

# The control: the same kind of payload, unescaped and without a policy,
# does run in this browser, so the checks below can fail.
printf '%s\n' "<!DOCTYPE html><title>control</title><body><script>document.body.insertAdjacentHTML('beforeend','<b id=pwned>x</b>')</script>" >"$T/control.html"
dom "$T/control.html" >"$T/dom-control.html"
check "control: an unescaped script runs and leaves its marker" grep -q 'id="pwned"' "$T/dom-control.html"

python3 - "$T" <<'PYEOF' >"$T/py.out" 2>&1
import json, sys
from html.parser import HTMLParser

T = sys.argv[1]
fails = []


def want(ok, what):
    print(("ok - " if ok else "not ok - ") + what)
    if not ok:
        fails.append(what)


class Dom(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags = []      # (tag, attrs dict)
        self.text = {}      # id -> text
        self.title = ""
        self.stack = []
        self.all_text = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.append((tag, a))
        self.stack.append((tag, a.get("id"), []))

    def handle_endtag(self, tag):
        while self.stack:
            t, i, buf = self.stack.pop()
            if i is not None:
                self.text[i] = "".join(buf).strip()
            if t == "title" and not self.title:
                self.title = "".join(buf)
            if t == tag:
                break

    def handle_data(self, data):
        self.all_text.append(data)
        for _, _, buf in self.stack:
            buf.append(data)


def parse(path):
    d = Dom()
    with open(path, encoding="utf-8") as f:
        d.feed(f.read())
    return d


raw = open(T + "/report.html", "rb").read()
try:
    raw.decode("utf-8")
    utf8 = True
except UnicodeDecodeError:
    utf8 = False
want(utf8, "the report is valid UTF-8")
want(not any(b < 0x20 and b not in (0x0A,) for b in raw), "no control bytes in the report")
want(b"\xe2\x80\xae" not in raw, "the right-to-left override is not passed through")
want("\ufffd".encode() in raw, "broken bytes and controls became U+FFFD")

scan = [json.loads(l) for l in open(T + "/scan.json", encoding="utf-8")]
results = [o for o in scan if "error" not in o]
errors = [o for o in scan if "error" in o]
d = parse(T + "/dom.html")
want(d.text.get("count-messages") == str(len(results)),
     "messages: DOM %s, scan --json %d" % (d.text.get("count-messages"), len(results)))
want(d.text.get("count-errors") == str(len(errors)),
     "not scanned: DOM %s, scan --json %d" % (d.text.get("count-errors"), len(errors)))
for a in ("none", "tag", "reply", "quarantine", "reject"):
    n = sum(1 for o in results if o["action"] == a)
    want(d.text.get("count-action-" + a) == str(n),
         "action %s: DOM %s, scan --json %d" % (a, d.text.get("count-action-" + a), n))
for k in ("other", "patch", "report", "reply"):
    n = sum(1 for o in results if o["kind"] == k)
    want(d.text.get("count-kind-" + k) == str(n),
         "kind %s: DOM %s, scan --json %d" % (k, d.text.get("count-kind-" + k), n))
want(len({o["action"] for o in results}) >= 4, "the fixtures reach at least four actions")
rows = [a for t, a in d.tags if t == "tr" and "data-score" in a]
want(len(rows) == len(results), "one table row per message (%d)" % len(rows))
scores = [float(a["data-score"]) for a in rows]
want(scores == sorted(scores, reverse=True), "rows sorted by score, highest first: %s" % scores)
want(sorted(scores) == sorted(o["score"] for o in results), "row scores equal scan's")
want(sorted(a["data-action"] for a in rows) == sorted(o["action"] for o in results),
     "row actions equal scan's")

# Without scripts the file is already in order: the rows as written.
rows_raw = [a for t, a in parse(T + "/report.html").tags if t == "tr" and "data-score" in a]
want([float(a["data-score"]) for a in rows_raw] == sorted(scores, reverse=True),
     "the file itself lists the rows by score (no script needed)")

# The page's own script ran (its hash is in the policy) and sorts.
html_attrs = [a for t, a in d.tags if t == "html"][0]
want(html_attrs.get("data-script") == "ran", "the report's own sort script ran under its CSP")
da = parse(T + "/dom-asc.html")
asc = [float(a["data-score"]) for t, a in da.tags if t == "tr" and "data-score" in a]
want(asc == sorted(scores), "#sort=score-asc sorts lowest first: %s" % asc)
want([a for t, a in da.tags if t == "table" and a.get("id") == "msgs"][0].get("data-sorted")
     == "score-asc", "the table says how it is sorted")

# Nothing from mail ran or became markup.
for name, dd in (("report", d), ("sorted", da), ("javascript: doc base", parse(T + "/dom-js.html"))):
    want(dd.title == "slop-milter report", "%s: title untouched (%r)" % (name, dd.title))
    want(not any(a.get("id") == "pwned" for _, a in dd.tags), "%s: no marker element" % name)
    want(sum(1 for t, _ in dd.tags if t == "script") == 1, "%s: one script element, the page's" % name)
    want(not any(t in ("img", "iframe", "object", "embed", "base", "form", "link") for t, _ in dd.tags),
         "%s: no img, iframe, object, base, form or link element" % name)
    want(not any(k.startswith("on") for _, a in dd.tags for k in a), "%s: no event handler attribute" % name)
    svgs = [a.get("id") for t, a in dd.tags if t == "svg"]
    want(svgs == ["chart-scores", "chart-rules", "chart-time", "chart-senders"],
         "%s: the four charts and no other svg: %s" % (name, svgs))
    hrefs = [a.get("href") for t, a in dd.tags if "href" in a]
    want(all(h.startswith("https://docs.kernel.org/") for h in hrefs),
         "%s: links only under the doc base: %s" % (name, hrefs))
    want(not any("src" in a for _, a in dd.tags), "%s: nothing loads a src" % name)
want(any(h.startswith("https://docs.kernel.org/process/zebra.html")
         for t, a in d.tags for h in [a.get("href", "")]), "a doc link under the base is a link")
want(any("onmouseover" in a.get("href", "") for _, a in d.tags),
     "a quote in a doc link stays inside the href")
text = "".join(d.all_text)
for s in ("<script>document.title='PWNED'</script>", "<img src=x onerror=",
          "<svg onload=", "href=\"javascript:document.title='PWNED'\"",
          "</style></title>", "\"><svg onload=document.title='PWNED'>.eml",
          "https://elsewhere.example.org/\"onmouseover="):
    want(s in text, "shown as text: %s" % s)
csp = [a.get("content", "") for t, a in d.tags if t == "meta" and a.get("http-equiv") == "Content-Security-Policy"]
want(len(csp) == 1 and "default-src 'none'" in csp[0] and "script-src 'sha256-" in csp[0]
     and "'unsafe-inline'" not in csp[0], "a strict Content-Security-Policy: %s" % csp)
sys.exit(1 if fails else 0)
PYEOF
pyrc=$?
sed -n '/^ok - /p' "$T/py.out" | while IFS= read -r l; do echo "$l"; done
if [ $pyrc -eq 0 ]; then
    pass=$((pass + $(grep -c '^ok - ' "$T/py.out")))
else
    pass=$((pass + $(grep -c '^ok - ' "$T/py.out")))
    fail=$((fail + $(grep -c '^not ok - ' "$T/py.out") + 1))
    grep -v '^ok - ' "$T/py.out"
fi

# Caps: a subject far longer than a field's cap is cut, with U+2026.
long=$(python3 -c 'print("z" * 5000)')
msg "a@example.org" b@example.org "$long" long@example.org "" "x" >"$T/long.eml"
"$SLOPCTL" report --no-state --rules "$T/rules" -o "$T/long.html" "$T/long.eml" 2>/dev/null
check "a long subject is cut to its cap" sh -c \
    "! grep -q 'zzzzzzzzzz\{40\}' '$T/long.html' || { grep -o 'z*' '$T/long.html' | awk '{ if (length > m) m = length } END { exit !(m <= 300) }'; }"
check "report --json is refused (exit 64)" sh -c \
    "'$SLOPCTL' report --json --rules '$T/rules' '$T/long.eml' >/dev/null 2>&1; [ \$? -eq 64 ]"
check "scan -o is refused (exit 64)" sh -c \
    "'$SLOPCTL' scan -o '$T/x.html' --rules '$T/rules' '$T/long.eml' >/dev/null 2>&1; [ \$? -eq 64 ]"
check "report to an unwritable path: exit 74, no file" sh -c \
    "'$SLOPCTL' report --no-state --rules '$T/rules' -o '$T/no/such/dir.html' '$T/long.eml' >/dev/null 2>&1; [ \$? -eq 74 ]"
# --mask-senders: no local part of a From: or Message-ID reaches the page
# (neither the table nor the top-senders chart), the domain does; the
# messages are all still there.
"$SLOPCTL" report --no-state --rules "$T/rules" --mask-senders -o "$T/masked.html" \
    "$T/mail/patch1.eml" "$T/mail/patch2.eml" "$T/mail/report.eml" 2>/dev/null
check "--mask-senders: no sender's local part in the page" sh -c \
    "! grep -Eqi 'ann@|bob@|carol@|p1@|p2@|r1@' '$T/masked.html'"
check "--mask-senders: the domain is shown" grep -q '@example.org' "$T/masked.html"
check "--mask-senders: the three messages are listed" sh -c \
    "grep -q 'zebra: fix the stripes' '$T/masked.html' && grep -q 'frob: check the length' '$T/masked.html' && grep -q 'frob parser crash' '$T/masked.html'"
check "scan --mask-senders is refused (exit 64)" sh -c \
    "'$SLOPCTL' scan --mask-senders --rules '$T/rules' '$T/long.eml' >/dev/null 2>&1; [ \$? -eq 64 ]"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
