#!/bin/sh
# README's scan example is what slopctl prints (issue 31 item 8): every
# examples/ file it names exists, and the example's lines after the first
# appear in the scan of that file, scores left out (a refit moves them).
# usage: readme-examples.sh SLOPCTL SOURCE-DIR
set -u
slopctl=$1 src=$2
cd "$src" || exit 1
python3 - "$slopctl" <<'PY'
import re, subprocess, sys

readme = open("README.md", encoding="utf-8").read()
bad = [p for p in sorted(set(re.findall(r"examples/[\w.-]+\.eml", readme)))
       if not __import__("os").path.isfile(p)]
for p in bad:
    print(f"FAIL: README names {p}, which does not exist")
block = re.search(r"```\n(examples/[\w.-]+\.eml): (\w+) score=[\d.]+ kind=(\w+)[^\n]*\n(.*?)```",
                  readme, re.S)
if not block:
    print("FAIL: README has no scan example")
    sys.exit(1)
path, action, kind, rest = block.groups()
out = subprocess.run([sys.argv[1], "scan", "--no-state", path], capture_output=True,
                     text=True).stdout
strip = lambda l: re.sub(r"^\s+[\d.]+ (?=[A-Z_]+ )", "", l).strip()
got = {strip(l) for l in out.splitlines()}
first = out.splitlines()[0] if out else ""
if not first.startswith(f"{path}: ") or f" kind={kind} " not in first:
    bad.append(path)
    print(f"FAIL: the example's first line does not match: {first!r}")
for line in rest.splitlines():
    if line.strip() in ("", "...") or strip(line) in got:
        continue
    bad.append(line)
    print(f"FAIL: not in the scan of {path}: {line.strip()}")
print("ok: README's example" if not bad else "README's example is stale")
sys.exit(1 if bad else 0)
PY
