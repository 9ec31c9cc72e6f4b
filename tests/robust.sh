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
# -o naming a descriptor writes to what it is open on (issue 38: /proc's link text
# "pipe:[N]" was followed as a path, and a file behind it was replaced, not written).
rc_zero() { # NAME: pass when $OUT/NAME.rc says 0
	[ "$(cat "$OUT/$1.rc")" = 0 ] && pass "$1" ||
		fail "$1" "status $(cat "$OUT/$1.rc"): $(head -c 600 "$OUT/$1.err")"
}
run results-to-stdout sh -c "$MINIVMM -q --mem 64M -o /dev/stdout $GUEST -- hello | jq -en 'input | .exit.status == 0'"
rc_zero results-to-stdout
run results-to-fd1-pipe sh -c "$MINIVMM -q --mem 64M -o /dev/fd/1 --trace /proc/self/fd/2 $GUEST -- hello 2>/dev/null | jq -en 'input | .exit.status == 0'"
rc_zero results-to-fd1-pipe
echo '{"before": 1}' >"$OUT/stdout-file.jsonl"
run results-to-stdout-file sh -c "$MINIVMM -q --mem 64M -o /dev/stdout $GUEST -- hello >>'$OUT/stdout-file.jsonl'"
rc_zero results-to-stdout-file
if jq -es 'length == 2 and .[0].before == 1 and .[1].exit.status == 0' "$OUT/stdout-file.jsonl" >/dev/null 2>&1; then
	pass results-to-stdout-file-appended
else
	fail results-to-stdout-file-appended "not the line before, then the results: $(head -c 300 "$OUT/stdout-file.jsonl")"
fi
run results-to-stdout-pty sh -c "script -qec '$MINIVMM -q --mem 64M -o /dev/stdout $GUEST -- hello 2>$OUT/pty.err' /dev/null </dev/null | tr -d '\\r' | jq -en 'input | .exit.status == 0'"
rc_zero results-to-stdout-pty

# Interrupted runs say so (issue 26). SIGINT once WHEN succeeds (or after ~10 s), then status and text.
# interrupt_when NAME WHEN CMD...: leaves $OUT/NAME.{out,err,rc}.
interrupt_when() {
	local name=$1 when=$2 pid
	shift 2
	: >"$OUT/$name.out" # now: the job truncates them only once it runs (an old one matches)
	: >"$OUT/$name.err"
	"$@" >"$OUT/$name.out" 2>"$OUT/$name.err" &
	pid=$!
	for _ in $(seq 500); do
		eval "$when" && break
		kill -0 $pid 2>/dev/null || break
		sleep 0.02
	done
	kill -INT $pid 2>/dev/null
	timeout 60 tail --pid=$pid -f /dev/null || kill -9 $pid
	wait $pid
	echo $? >"$OUT/$name.rc"
}
# Eager stopped part way: not "made 1.00 GiB resident" read as finished. Once it has made
# 128 MiB resident (the process's RSS; its signals are blocked by then, so SIGINT waits for it).
interrupt_when int-eager '[ "$(awk "/^VmRSS/ { print \$2 }" /proc/$pid/status 2>/dev/null || echo 0)" -gt 131072 ]' \
	$MINIVMM --eager=populate --mem 3G -o "$OUT/int-eager.json" $GUEST -- hello
if [ "$(cat "$OUT/int-eager.rc")" = 0 ] && jq -e '.eager.complete' "$OUT/int-eager.json" >/dev/null; then
	skip int-eager "eager populated all 3 GiB before the signal"
elif [ "$(cat "$OUT/int-eager.rc")" = 130 ] &&
	grep -Eq '^eager: populate .*, 3.00 GiB of guest RAM: NOT FINISHED, stopped after [0-9.]+ m?s with [0-9.]+ [MG]iB of 3.00 GiB done \(the run ended: interrupted\)' "$OUT/int-eager.out" &&
	grep -q 'interrupted by SIGINT before the guest ran' "$OUT/int-eager.err"; then
	pass int-eager
else
	fail int-eager "status $(cat "$OUT/int-eager.rc"): $(grep eager "$OUT/int-eager.out") $(cat "$OUT/int-eager.err")"
fi
jq_true int-eager-json "$OUT/int-eager.json" \
	'.exit.reason == "interrupted" and (.eager.complete | not) and .eager.done_bytes < .eager.bytes and .summary.setup_ms == null'
# A sweep stopped in its first pass did not reach first useful work (it marks one at the pass's end).
interrupt_when int-sweep 'grep -q "^ *1 " "$OUT/int-sweep.out"' \
	$MINIVMM --mem 256M -o "$OUT/int-sweep.json" $GUEST -- sweep --max-mib 128 --iterations 1
if grep -q '| first useful work: [0-9]' "$OUT/int-sweep.out"; then
	skip int-sweep "the first pass ended before the signal (a fast machine)"
elif [ "$(cat "$OUT/int-sweep.rc")" = 130 ] &&
	grep -q '| first useful work: not reached (the run ended before the workload did: interrupted) |' "$OUT/int-sweep.out"; then
	pass int-sweep
else
	fail int-sweep "status $(cat "$OUT/int-sweep.rc"): $(grep 'first useful work' "$OUT/int-sweep.out")"
fi
# --compare stopped in its eager run: no verdict from a population cut short.
interrupt_when int-compare '[ "$(awk "/^VmRSS/ { print \$2 }" /proc/$pid/status 2>/dev/null || echo 0)" -gt 131072 ]' \
	$MINIVMM --compare --mem 3G -o "$OUT/int-compare.json" $GUEST -- flat --max-mib 4
if [ "$(cat "$OUT/int-compare.rc")" = 0 ]; then
	skip int-compare "eager populated all 3 GiB before the signal"
else
	jq_true int-compare "$OUT/int-compare.json" \
		'(.verdict == null) and .runs[-1].exit.reason == "interrupted" and (.runs[-1].eager.complete | not)'
fi
