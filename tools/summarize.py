"""Counts the results of meson test logs (JSON lines) and pytest's JUnit XML,
and prints the closing line 'N passed, N failed'. argv: steps passed, steps
failed (builds and checks outside the suites), then the result files."""
import json
import sys
import xml.etree.ElementTree as ElementTree


def count_meson(path):
    passed = failed = skipped = 0
    with open(path) as f:
        for line in f:
            if not line.strip():
                continue
            result = json.loads(line).get("result")
            if result in ("OK", "EXPECTEDFAIL"):
                passed += 1
            elif result == "SKIP":
                skipped += 1
            else:
                failed += 1
    return passed, failed, skipped


def count_junit(path):
    passed = failed = skipped = 0
    for case in ElementTree.parse(path).iter("testcase"):
        kinds = {child.tag for child in case}
        if kinds & {"failure", "error"}:
            failed += 1
        elif "skipped" in kinds:
            skipped += 1
        else:
            passed += 1
    return passed, failed, skipped


passed, failed, skipped = int(sys.argv[1]), int(sys.argv[2]), 0
for path in sys.argv[3:]:
    try:
        counts = count_junit(path) if path.endswith(".xml") else count_meson(path)
    except (OSError, ValueError, ElementTree.ParseError) as e:
        print("missing or unreadable test results %s: %s" % (path, e))
        failed += 1
        continue
    passed, failed, skipped = passed + counts[0], failed + counts[1], skipped + counts[2]
line = "%d passed, %d failed" % (passed, failed)
if skipped:
    line += ", %d skipped" % skipped
print(line)
sys.exit(1 if failed else 0)
