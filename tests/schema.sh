# Tier "schema" (run last): every results file the suite wrote validates
# against docs/results.schema.json (python3-jsonschema). Sourced by tests/run.
files=$(find "$OUT" -name '*.json' -not -path "$OUT/static/*" | sort)
n=$(echo "$files" | grep -c . || true)
if [ ! -x /usr/bin/python3 ] || ! /usr/bin/python3 -c 'import jsonschema' 2>/dev/null; then
	skip results-schema "python3-jsonschema is missing (scripts/install-deps --tests installs it)"
elif [ "$n" -lt 5 ]; then
	skip results-schema "only $n results files in $OUT: run the other tiers first"
elif ./tests/validate-results $files >"$OUT/schema.log" 2>&1; then
	pass "results-schema ($(grep -c '^ok' "$OUT/schema.log") files valid)"
else
	fail results-schema "$(grep -v '^ok\|^skip' "$OUT/schema.log" | head -5)"
fi
# The validator can fail: a file missing its environment record is refused.
# (the first results file that has one: traces and other files are skipped by the validator)
first=$(for f in $files; do jq -e 'has("environment")' "$f" >/dev/null 2>&1 && { echo "$f"; break; }; done)
[ -n "$first" ] && jq 'del(.environment)' "$first" >"$OUT/schema-broken.json.txt" 2>/dev/null &&
	if ./tests/validate-results "$OUT/schema-broken.json.txt" >/dev/null 2>&1; then
		fail results-schema-rejects "a results file without its environment record validated"
	else
		pass results-schema-rejects
	fi
