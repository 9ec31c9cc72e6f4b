# Hostile and broken guests, signals, sandbox, and leaks across --compare.
expect console-flood 0 'dropped [0-9]+ bytes of guest console output past the 16 MiB limit' '' -- \
	$MINIVMM --mem 64M -o "$OUT/flood.json" $GUEST -- flood 20
size=$(stat -c %s "$OUT/console-flood.out")
[ "$size" -le $((16 * 1024 * 1024 + 65536)) ] && [ "$size" -ge $((16 * 1024 * 1024)) ] &&
	pass console-flood-bounded || fail console-flood-bounded "stdout was $size bytes"
jq_true console-flood-json "$OUT/flood.json" '.devices.console_bytes == 16777216 and .devices.console_dropped > 0'
expect console-huge-length 4 'guest ABI violation.*console write of 1048576 bytes \(limit 4096\)' '' -- \
	$MINIVMM --mem 16M tests/bin/badlen.bin
expect unclaimed-io-counted 0 '2 unclaimed MMIO accesses \(first: write to 0x3f000000\)' '' -- \
	$MINIVMM --mem 16M -o "$OUT/unclaimed.json" tests/bin/devices.bin
jq_true unclaimed-io-json "$OUT/unclaimed.json" \
	'.devices.unclaimed_pio.count == 2 and .devices.unclaimed_mmio.count == 2 and .devices.unclaimed_mmio.first_address == 1056964608'
expect strict-io 4 'guest wrote to port 0x80 on vCPU 0, which no device claims \(--strict-io\)' '' -- \
	$MINIVMM --strict-io --mem 16M tests/bin/devices.bin
expect exit-while-others-run 0 'guest exited with status 0' '3 vCPUs spinning' -- \
	$MINIVMM --mem 64M --vcpus 4 --timeout 60 $GUEST -- exit-while-spinning

signal_test sigterm TERM 'interrupted by SIGTERM; stopped the guest'

expect no-sandbox-warns 0 'WARNING: --no-sandbox' '' -- $MINIVMM --no-sandbox --mem 64M $GUEST -- hello
expect sandboxed-smp-sweep 0 '' '^Iteration 1$' -- \
	$MINIVMM --mem 128M --vcpus 2 --eager=populate $GUEST -- sweep --max-mib 2 --iterations 1 --parallel

# Nothing leaks from one --compare run to the next: open fds and threads come back.
expect compare-resources 0 '' '^verdict' -- \
	$MINIVMM --compare --mem 64M -o "$OUT/compare-res.json" $GUEST -- flat --max-mib 4 --iterations 2
jq_true compare-no-leaks "$OUT/compare-res.json" \
	'.resources as $r | ($r.fds | length == 3) and $r.fds[0] > 0 and ($r.fds | unique | length == 1)
	 and ($r.threads | unique == [1])'

# stdout a character device (/dev/null, a terminal): stdio must not probe it under the filter.
run quiet-to-devnull sh -c "$MINIVMM -q --mem 64M $GUEST -- sweep --max-mib 2 --iterations 1 >/dev/null"
[ "$(cat "$OUT/quiet-to-devnull.rc")" = 0 ] && pass quiet-to-devnull ||
	fail quiet-to-devnull "status $(cat "$OUT/quiet-to-devnull.rc"): $(cat "$OUT/quiet-to-devnull.err")"
run results-to-stdout sh -c "$MINIVMM -q --mem 64M -o /dev/stdout $GUEST -- hello | jq -e '.exit.status == 0'"
[ "$(cat "$OUT/results-to-stdout.rc")" = 0 ] && pass results-to-stdout ||
	fail results-to-stdout "status $(cat "$OUT/results-to-stdout.rc"): $(cat "$OUT/results-to-stdout.err")"
