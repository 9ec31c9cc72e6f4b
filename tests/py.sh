# Tier "py": the Python tools' unit tests (scripts/mvmtools/tests, unittest): one
# line per test under python3, then the whole suite under Debian's /usr/bin/python3
# when that is another interpreter (the tools must work with either).
PYTHONPATH=scripts python3 -m mvmtools.tests >"$OUT/py.log" 2>&1
rc=$?
grep -E '^(PASS|FAIL|SKIP)' "$OUT/py.log"
# A runner that dies before its verdicts (an import error) fails the tier.
if [ $rc != 0 ] && ! grep -q '^FAIL' "$OUT/py.log"; then
	fail py "the test runner exited with $rc: $(tail -5 "$OUT/py.log")"
fi
if [ -x /usr/bin/python3 ] && [ "$(realpath /usr/bin/python3)" != "$(realpath "$(command -v python3)")" ]; then
	PYTHONPATH=scripts /usr/bin/python3 -m mvmtools.tests --summary --prefix py-usr-bin-python3 >"$OUT/py-debian.log" 2>&1
	grep -E '^(PASS|FAIL)' "$OUT/py-debian.log" ||
		fail py-usr-bin-python3 "no result: $(tail -5 "$OUT/py-debian.log")"
fi
