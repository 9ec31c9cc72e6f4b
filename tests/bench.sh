# Tier "bench": the benchmarks' own machinery (statistics, ABBA order, paired
# ratios, knob restore, the seed data, OSv's table format), without KVM.
if ./bench/selftest >"$OUT/bench-selftest.log" 2>&1; then
	pass "bench-selftest ($(tail -1 "$OUT/bench-selftest.log"))"
else
	fail bench-selftest "$(grep -A2 '^FAIL' "$OUT/bench-selftest.log" | head -12)"
fi
