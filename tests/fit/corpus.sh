#!/bin/sh
# bench/corpus-labels and bench/corpus-eval on a corpus written here, laid
# out as the development corpus is (tests never read ../shared/corpus):
# a curl report is wrapped from the reporter's own text only (not the
# metadata table or the URL/Title/Program/Label head), a valid report's
# Subject loses its CVE id, only a flagged case's item* files are
# labelled, each message names its source, and corpus-eval gives a row
# per group and source with its Wilson interval and the grouped
# cross-validation.
# Usage: sh corpus.sh REPO_DIR BUILD_DIR
set -u

if [ $# -ne 2 ]; then
    echo "usage: sh corpus.sh REPO_DIR BUILD_DIR" >&2
    exit 2
fi
REPO=$1
BUILD=$2
unset SLOP_RULES_DIR SLOP_PROJECT

test_name=corpus-labels
. "$(dirname "$0")/lib.sh"

C=$T/corpus
mkdir -p "$C/A_genuine_kernel_patches/list-one" "$C/A_genuine_kernel_patches/list-two" \
    "$C/B_ai_slop/kernel_flagged/01_case-one" "$C/B_ai_slop/kernel_flagged/02_case-two" \
    "$C/B_ai_slop/curl_hackerone_slop" "$C/B_contrast_genuine_reports/curl_hackerone_resolved" \
    "$C/B_ai_slop/kernel_llm_generated_review_and_autosel_text/sashiko_bot"

# mail FILE SUBJECT BODY
mail() {
    printf 'From: Dev <dev@example.org>\nTo: list@example.org\nSubject: %s\nMessage-ID: <%s@corpus.invalid>\nDate: Mon, 1 Jan 2024 00:00:00 +0000\n\n%s\n' \
        "$2" "$(basename "$1")" "$3" >"$C/$1"
}
mail A_genuine_kernel_patches/list-one/p1.eml '[PATCH] foo: fix a leak' 'Free the buffer on the error path.'
mail A_genuine_kernel_patches/list-one/p2.eml '[PATCH] foo: fix a typo' 'Fix a typo in a comment.'
mail A_genuine_kernel_patches/list-two/p3.eml '[PATCH] bar: drop a check' 'The caller checks already.'
mail B_ai_slop/kernel_flagged/01_case-one/item1_x.eml '[PATCH] baz: harden' 'This critical fix hardens baz.'
mail B_ai_slop/kernel_flagged/01_case-one/item2_x.eml '[PATCH v2] baz: harden' 'This critical fix hardens baz again.'
mail B_ai_slop/kernel_flagged/01_case-one/evidence1_x.eml 'Re: [PATCH] baz: harden' 'Was this written by a tool?'
mail B_ai_slop/kernel_flagged/01_case-one/thread_root1_x.eml '[PATCH] baz' 'The thread root.'
mail B_ai_slop/kernel_flagged/02_case-two/item1_y.eml 'qux crash' 'A crash in qux.'
mail B_ai_slop/kernel_llm_generated_review_and_autosel_text/sashiko_bot/r1.eml 'Re: [PATCH] foo' 'A review.'
cat >"$C/B_ai_slop/curl_hackerone_slop/900.md" <<'MD'
URL: https://hackerone.com/reports/900
Title: Buffer overflow in the frobnicator
Program: curl (HackerOne)
Label: AI slop (listed in the maintainers' collection, entry #9)
Text source: a test file
----- REPORT TEXT -----
## Summary:
The frobnicator overflows its buffer.
MD
cat >"$C/B_contrast_genuine_reports/curl_hackerone_resolved/901.md" <<'MD'
# CVE-2099-12345: cookie jar read past its end

| | |
|---|---|
| **Report ID** | [901](https://hackerone.com/reports/901) |
| **Weakness** | Out-of-bounds Read |
| **CVE** | CVE-2099-12345 |
| **Reporter** | [someone](https://hackerone.com/someone) |

## Vulnerability details

## Summary:
Reading a cookie jar with a long line reads past the buffer in curl 8.1.0.
MD
{
    echo 'path,set,kind,label,confidence,url'
    echo 'A_genuine_kernel_patches/list-one/p1.eml,A,kernel_patch_email,genuine,high,u'
    echo 'A_genuine_kernel_patches/list-one/p2.eml,A,kernel_patch_email,genuine,high,u'
    echo 'A_genuine_kernel_patches/list-two/p3.eml,A,kernel_patch_email,genuine,high,u'
    echo 'B_ai_slop/kernel_flagged/01_case-one/item1_x.eml,B_kernel_flagged,item_to_score,slop,strong,u'
    echo 'B_ai_slop/kernel_flagged/01_case-one/item2_x.eml,B_kernel_flagged,item_to_score,slop,strong,u'
    echo 'B_ai_slop/kernel_flagged/01_case-one/evidence1_x.eml,B_kernel_flagged,evidence_maintainer_or_submitter_reply,context,,u'
    echo 'B_ai_slop/kernel_flagged/01_case-one/thread_root1_x.eml,B_kernel_flagged,thread_context,context,,u'
    echo 'B_ai_slop/kernel_flagged/02_case-two/item1_y.eml,B_kernel_flagged,item_to_score,slop,strong,u'
    echo 'B_ai_slop/curl_hackerone_slop/900.md,B_curl_slop,security_report,slop,high,u'
    echo 'B_contrast_genuine_reports/curl_hackerone_resolved/901.md,B_contrast,security_report,valid,high,u'
    echo 'B_ai_slop/kernel_llm_generated_review_and_autosel_text/sashiko_bot/r1.eml,B_llm_text,review_or_autosel_email,llm,high,u'
} >"$C/labels.csv"

O=$T/out
"$REPO/bench/corpus-labels" "$O" "$C" >"$T/labels.log" 2>&1
check "corpus-labels runs" test $? -eq 0
check "labels: 8 messages, 4 slop, from 5 sources" \
    grep -q '^corpus-labels: 8 messages (4 slop) from 5 sources' "$T/labels.log"
check "labels: group and source of each message" python3 - "$O/labels.tsv" "$O/unlabelled.tsv" <<'PY'
import sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if not l.startswith("#")]
got = sorted((r[0].rsplit("/", 1)[-1], r[1], r[2], r[3]) for r in rows)
want = sorted([
    ("p1.eml", "genuine", "genuine_patch", "list-one"),
    ("p2.eml", "genuine", "genuine_patch", "list-one"),
    ("p3.eml", "genuine", "genuine_patch", "list-two"),
    ("item1_x.eml", "slop", "flagged", "case-01_case-one"),
    ("item2_x.eml", "slop", "flagged", "case-01_case-one"),
    ("item1_y.eml", "slop", "flagged", "case-02_case-two"),
    ("000.eml", "slop", "curl_slop", "curl"),
    ("001.eml", "genuine", "curl_valid", "curl"),
])
assert got == want, got
extra = [l.rstrip("\n").split("\t") for l in open(sys.argv[2]) if not l.startswith("#")]
assert [(r[1], r[2], r[3]) for r in extra] == [("-", "llm_review_bot", "sashiko_bot")], extra
PY
check "slop report: the reporter's text only, its Title as Subject" python3 - "$O/wrapped/000.eml" <<'PY'
import email, sys
m = email.message_from_file(open(sys.argv[1]))
assert m["Subject"] == "Buffer overflow in the frobnicator", m["Subject"]
body = m.get_payload()
assert body.startswith("## Summary:"), body
for head in ("URL:", "Title:", "Program:", "Label:", "slop", "REPORT TEXT", "Text source"):
    assert head not in body, head
PY
check "valid report: no metadata table, no CVE id in the Subject" python3 - "$O/wrapped/001.eml" <<'PY'
import email, sys
m = email.message_from_file(open(sys.argv[1]))
assert m["Subject"] == "cookie jar read past its end", m["Subject"]
body = m.get_payload()
assert body.startswith("## Summary:"), body
for head in ("Report ID", "Weakness", "CVE-2099", "Reporter", "Vulnerability details"):
    assert head not in body, head
assert "curl 8.1.0" in body, body
PY
# A report whose head has no end marker would leak its label: refused.
printf 'URL: x\nLabel: AI slop\n\nsome text\n' >"$C/B_ai_slop/curl_hackerone_slop/902.md"
echo 'B_ai_slop/curl_hackerone_slop/902.md,B_curl_slop,security_report,slop,high,u' >>"$C/labels.csv"
"$REPO/bench/corpus-labels" "$T/out2" "$C" >"$T/labels2.log" 2>&1
check "a report without its marker is an error naming it" \
    sh -c "test $? -ne 0 && grep -q '902.md' '$T/labels2.log'"
sed -i '$d' "$C/labels.csv"
rm "$C/B_ai_slop/curl_hackerone_slop/902.md"

"$REPO/bench/corpus-eval" "$BUILD" "$C" >"$T/eval.md" 2>"$T/eval.err"
check "corpus-eval runs" test $? -eq 0
check "corpus-eval: a row per group and per source, each with its Wilson interval" \
    python3 - "$T/eval.md" "$(dirname "$0")" <<'PY'
import re, sys
sys.path.insert(0, sys.argv[2])
from wilson import wilson
text = open(sys.argv[1]).read()
tables = re.split(r"^## ", text, flags=re.M)
want = {"`flagged`": 3, "case-01_case-one": 2, "case-02_case-two": 1, "`curl_slop`": 1,
        "flagged items and curl slop together": 4, "`genuine_patch`": 3, "list-one": 2,
        "list-two": 1, "`curl_valid`": 1}
seen = 0
for t in tables:
    if not t.startswith(("Plain scan", "Grouped cross-validation")):
        continue
    seen += 1
    rows = {}
    for line in t.splitlines():
        m = re.match(r"^\| (.*?) \| (\d+) \| (\d+) \| ([\d.]+)% \| ([\d.]+)-([\d.]+)% \| (\d+) \|$", line)
        if m:
            rows[m.group(1)] = m
            lo, hi = wilson(int(m.group(3)), int(m.group(2)))
            assert abs(lo - float(m.group(5))) < 0.051 and abs(hi - float(m.group(6))) < 0.051, line
    for name, n in want.items():
        hit = [m for k, m in rows.items() if name in k]
        assert len(hit) == 1 and int(hit[0].group(2)) == n, (t.splitlines()[0], name, list(rows))
    llm = [k for k in rows if "llm_review_bot" in k]
    assert len(llm) == (0 if t.startswith("Grouped") else 1), (t.splitlines()[0], llm)
assert seen == 4, seen
PY

finish
