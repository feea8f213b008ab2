#!/usr/bin/python3
"""Check scrapes of slop-milter's /metrics against the OpenMetrics 1.0 text
format with the parser of Debian's python3-prometheus-client (strict: a
missing "# EOF", a blank line, a bad label or a histogram without +Inf is
an error). promtool checks the Prometheus text format only, hence this.

Usage: openmetrics-check.py FILE...   exit 0: every file parses;
1: one does not (the file and the parser's reason on stderr).
"""
import sys

from prometheus_client.openmetrics.parser import text_string_to_metric_families


def main(paths):
    bad = 0
    for path in paths:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        try:
            families = list(text_string_to_metric_families(text))
        except ValueError as e:
            print(f"{path}: not OpenMetrics: {e}", file=sys.stderr)
            bad += 1
            continue
        if not any(fam.name == "slop_messages" for fam in families):
            print(f"{path}: no slop_messages family", file=sys.stderr)
            bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
