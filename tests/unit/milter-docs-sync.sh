#!/bin/sh
# The man page's KEYS section and the sample configuration are generated
# from config/config_keys.c's key table; fail when either is out of date.
# usage: milter-docs-sync.sh SLOP-MILTER SOURCE-DIR
set -eu
bin=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$bin" --dump-config-sample > "$tmp/sample"
if ! cmp -s "$tmp/sample" "$src/milter/slop-milter.conf.sample"; then
    echo "milter/slop-milter.conf.sample is stale: regenerate with" >&2
    echo "  slop-milter --dump-config-sample > milter/slop-milter.conf.sample" >&2
    diff -u "$src/milter/slop-milter.conf.sample" "$tmp/sample" >&2 || true
    exit 1
fi

"$bin" --dump-config-man > "$tmp/keys"
sed -n '/^\.\\" BEGIN KEYS/,/^\.\\" END KEYS/p' "$src/docs/slop-milter.conf.5" |
    sed '1d;$d' > "$tmp/page-keys"
if ! cmp -s "$tmp/keys" "$tmp/page-keys"; then
    echo "docs/slop-milter.conf.5 KEYS section is stale: replace it with" >&2
    echo "  slop-milter --dump-config-man" >&2
    diff -u "$tmp/page-keys" "$tmp/keys" >&2 || true
    exit 1
fi
echo "docs in sync"
