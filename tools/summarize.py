"""Counts the results of meson test logs (JSON lines) and prints the closing
line 'N passed, N failed'. argv: steps passed, steps failed (builds and checks
outside meson), then testlog.json files."""
import json
import sys

passed, failed, skipped = int(sys.argv[1]), int(sys.argv[2]), 0
for path in sys.argv[3:]:
    try:
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
    except OSError:
        print("missing test log %s" % path)
        failed += 1
line = "%d passed, %d failed" % (passed, failed)
if skipped:
    line += ", %d skipped" % skipped
print(line)
sys.exit(1 if failed else 0)
