#!/usr/bin/env python3
"""Prints lit's JSON results (lit -o FILE) as one plain summary line:
`lit: N passed, N failed, N skipped` (UNSUPPORTED counts as skipped, never
as passed; XFAIL counts as passed, XPASS and UNRESOLVED as failed).
Usage: lit-summary.py FILE [LABEL]; LABEL replaces `lit` (test-sanitize.sh)."""
import json
import sys

try:
    with open(sys.argv[1]) as f:
        tests = json.load(f)["tests"]
except (OSError, KeyError, ValueError) as err:
    print(f"lit-summary: cannot read {sys.argv[1]}: {err}", file=sys.stderr)
    sys.exit(1)

passed = failed = skipped = 0
for t in tests:
    code = t["code"]
    if code in ("PASS", "XFAIL", "FLAKYPASS"):
        passed += 1
    elif code in ("UNSUPPORTED", "SKIPPED", "EXCLUDED"):
        skipped += 1
    else:
        failed += 1
label = sys.argv[2] if len(sys.argv) > 2 else "lit"
print(f"{label}: {passed} passed, {failed} failed, {skipped} skipped")
sys.exit(1 if failed or not tests else 0)
