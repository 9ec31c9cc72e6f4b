# Tier "background": --eager=background on /dev/kvm: the guest runs at once
# while eager threads populate beside it, in each order and backing; both
# frontiers in the results; the run's end stops the threads; bad orders.

# A run in the background that finished: every thread's frontier in order,
# within EAGER_POINTS_MAX points, from 0 to what it did; no eager_done phase
# (population is not a phase: it runs beside them); the guest's frontier too.
bg_ok='
  .eager as $e
  | $e.background == true and ($e.strategy == "populate" or $e.strategy == "prefault")
    and $e.on_vcpu_threads == false and ($e.per_thread | length) == $e.threads
    and $e.start_ms > 0 and $e.end_ms >= $e.start_ms
    and ([.timeline[].phase] | index("eager_done")) == null
    and ([range(0; $e.threads) as $t
          | [$e.progress[] | select(.thread == $t)] as $p
          | ($p | length) >= 2 and ($p | length) <= 256 and $p[0].bytes == 0
            and $p[-1].bytes == $e.per_thread[$t].done_bytes
            and ([range(1; $p | length) | $p[.].bytes >= $p[. - 1].bytes and $p[.].t_ms >= $p[. - 1].t_ms] | all)]
         | all)
    and (.progress | length) > 1'
bg_finished='
  .eager.complete == true and .eager.done_bytes == .config.mem_bytes and .eager.end_phase != null
  and ([.eager.per_thread[] | .stopped == false and .done_bytes == .bytes] | all)
  and ([.eager.per_thread[].done_bytes] | add) == .config.mem_bytes'
# Long enough (~200 warm passes) for 64 MiB to be populated while it runs.
LONG="flat --max-mib 8 --iterations 200"

# --- 1 vCPU, anon: the report line, both series, population finished ---------
expect bg-anon 0 '' '^eager: background (populate|prefault) \(MADV_POPULATE_WRITE.*\) \[auto.*\], order front, 1 thread of its own' -- \
	$MINIVMM --mem 64M --eager=background -o "$OUT/bg-anon.json" $GUEST -- $LONG
jq_true bg-anon-json "$OUT/bg-anon.json" "($bg_ok) and ($bg_finished) and .config.eager_background == true"
grep -Eq '^  finished at [0-9.]+ ms since exec, in phase [a-z_]+, [0-9.]+ ms (before|after) first useful work' "$OUT/bg-anon.out" &&
	pass bg-anon-says-when || fail bg-anon-says-when "$(grep -A2 '^eager' "$OUT/bg-anon.out")"
grep -q 'eager beside the guest, not in setup' "$OUT/bg-anon.out" && pass bg-anon-summary-line ||
	fail bg-anon-summary-line "$(grep '^setup' "$OUT/bg-anon.out")"
# On PVM auto is populate, and says why.
if jq -e '.platform.pre_fault_memory == false' "$OUT/bg-anon.json" >/dev/null; then
	jq_true bg-auto-is-populate "$OUT/bg-anon.json" \
		'.eager.requested == "auto" and .eager.strategy == "populate" and (.eager.fallbacks | index("auto: no KVM_PRE_FAULT_MEMORY, used populate")) != null and .eager.spare_vcpus == []'
	expect bg-prefault-missing 3 'eager=background:prefault: this KVM lacks KVM_CAP_PRE_FAULT_MEMORY.*use --eager=background:populate' '' -- \
		$MINIVMM --mem 64M --eager=background:prefault $GUEST -- hello
fi

# --- the default threads: one per CPU the vCPUs leave idle, at least one ----------
# (bench/background-threads measures why); taskset gives the process the CPUs it may use.
cpus=$(nproc)
for v in 1 2; do
	for c in 1 $cpus; do
		want=$((c > v ? c - v : 1))
		expect "bg-default-threads-${v}vcpus-${c}cpus" 0 '' "order front, $want threads? of its own \(one per CPU the vCPUs leave idle, at least one\)" -- \
			taskset -c "0-$((c - 1))" $MINIVMM --mem 64M --vcpus $v --eager=background:populate $GUEST -- hello
	done
done
# --- 2 vCPUs, 2 threads: each thread its slice -------------------------------------
expect bg-2vcpus 0 '' 'order front, 2 threads of its own' -- \
	$MINIVMM --mem 128M --vcpus 2 --eager=background:populate --eager-threads 2 -o "$OUT/bg-2vcpus.json" $GUEST -- flat --max-mib 8 --iterations 150 --parallel
jq_true bg-2vcpus-json "$OUT/bg-2vcpus.json" \
	"($bg_ok) and ($bg_finished) and .eager.threads == 2 and .eager.per_thread[1].gpa == .eager.per_thread[0].bytes and ([.progress[].vcpu] | unique) == [0, 1]"
expect bg-threads 0 '' '3 threads of its own' -- \
	$MINIVMM --mem 64M --eager=background --eager-threads 3 -o "$OUT/bg-threads.json" $GUEST -- $LONG
jq_true bg-threads-json "$OUT/bg-threads.json" "($bg_ok) and ($bg_finished) and .eager.threads == 3"

# --- backings --------------------------------------------------------------------
for b in thp memfd; do
	expect "bg-$b" 0 '' 'eager: background' -- \
		$MINIVMM --mem 64M --backing $b --eager=background -o "$OUT/bg-$b.json" $GUEST -- $LONG
	jq_true "bg-$b-json" "$OUT/bg-$b.json" "($bg_ok) and ($bg_finished) and .config.backing == \"$b\""
done
# hugetlb2m: 32 pages for the run, the pool as it was afterwards.
H2=/sys/kernel/mm/hugepages/hugepages-2048kB
if [ "$(id -u)" = 0 ] && [ -w $H2/nr_hugepages ]; then
	old=$(cat $H2/nr_hugepages)
	echo $((old + 32)) >$H2/nr_hugepages 2>/dev/null
	if [ "$(cat $H2/nr_hugepages)" -ge $((old + 32)) ]; then
		expect bg-hugetlb2m 0 '' 'eager: background' -- \
			$MINIVMM --mem 64M --backing hugetlb2m --eager=background -o "$OUT/bg-hugetlb2m.json" $GUEST -- $LONG
		jq_true bg-hugetlb2m-json "$OUT/bg-hugetlb2m.json" \
			"($bg_ok) and ($bg_finished) and .config.backing_page_bytes == 2097152 and .eager.chunk_bytes == 2097152"
	else
		skip bg-hugetlb2m "the kernel gave $(($(cat $H2/nr_hugepages) - old)) of 32 huge pages"
	fi
	echo "$old" >$H2/nr_hugepages
	[ "$(cat $H2/nr_hugepages)" = "$old" ] && pass bg-hugetlb2m-pool-restored ||
		fail bg-hugetlb2m-pool-restored "nr_hugepages $(cat $H2/nr_hugepages), was $old"
else
	skip bg-hugetlb2m "needs root and $H2"
fi

# --- orders ----------------------------------------------------------------------
for o in back frontier; do
	expect "bg-order-$o" 0 '' "order $o, 1 thread" -- \
		$MINIVMM --mem 64M --eager=background --eager-order $o -o "$OUT/bg-order-$o.json" $GUEST -- $LONG
	jq_true "bg-order-$o-json" "$OUT/bg-order-$o.json" \
		"($bg_ok) and ($bg_finished) and .eager.order == \"$o\" and .config.eager_order == \"$o\" and .eager.covered_first.of_bytes == .touch_order[0].pages * 4096"
done
# back: the thread starts at the far end, so its first chunk is RAM's last.
jq_true bg-order-back-from-the-end "$OUT/bg-order-back.json" \
	'.eager.progress[1].gpa == .config.mem_bytes - .eager.progress[1].bytes'
# A recorded first-touch order of perm (uffd), replayed: its pages first, every one of them.
rec=$OUT/bg-perm.touch
expect bg-record-perm 0 '' '' -- \
	$MINIVMM -q --mem 64M --paging uffd --record-touch "$rec" $GUEST -- perm --mib 8 --iterations 1
pages=$(sed -n '1s/.* pages=\([0-9]*\) .*/\1/p' "$rec")
expect bg-order-file 0 '' "^  order file $rec: $pages pages" -- \
	$MINIVMM --mem 64M --eager=background --eager-order "$rec" -o "$OUT/bg-order-file.json" $GUEST -- perm --mib 8 --iterations 100
jq_true bg-order-file-json "$OUT/bg-order-file.json" \
	"($bg_ok) and .eager.order == \"file\" and .eager.order_file.pages == $pages and .eager.order_file.bytes == $pages * 4096
	 and .eager.order_file.populated_first_bytes <= .eager.order_file.bytes
	 and ((.eager.complete | not) or (.eager.order_file.populated_first_bytes == .eager.order_file.bytes and .eager.done_bytes == .config.mem_bytes))
	 and .eager.covered_first.bound == \"pass\""
# The same file before the guest runs (plain --eager): harmless, in that order.
expect eager-order-file-plain 0 '' "^  order file $rec: $pages pages" -- \
	$MINIVMM --mem 64M --eager=populate --eager-order "$rec" -o "$OUT/eager-order-file.json" $GUEST -- hello
jq_true eager-order-file-plain-json "$OUT/eager-order-file.json" \
	'.eager.background == false and .eager.complete == true and .eager.order_file.populated_first_bytes == .eager.order_file.bytes and .eager.done_bytes == .config.mem_bytes and ([.timeline[].phase] | index("eager_done")) != null'

# --- setup close to lazy's, not eager's (ratios, wide margins) ----------------------
# A timing, so SAN=1 times the plain build it also makes: under ASan the
# background runs' setup swung from 4 to 50 ms between runs (the guest_entry
# phase, where the eager threads start) while the plain build's stayed near
# 2 ms; it timed the sanitizer runtime, not minivmm.
S="flat --max-mib 4 --iterations 1" P=$MINIVMM
[ "${SAN:-0}" = 1 ] && P=build/plain/minivmm
for m in lazy bg bg2 lazy2 eager; do
	case $m in
	lazy*) a="" ;; bg*) a="--eager=background" ;; eager) a="--eager=populate" ;;
	esac
	run "bg-setup-$m" $P -q --mem 256M $a -o "$OUT/bg-setup-$m.json" $GUEST -- $S
done
setup() { jq '.summary.setup_ms' "$OUT/bg-setup-$1.json"; }
lazy=$(awk -v a="$(setup lazy)" -v b="$(setup lazy2)" 'BEGIN { print a < b ? a : b }')
bg=$(awk -v a="$(setup bg)" -v b="$(setup bg2)" 'BEGIN { print a < b ? a : b }')
eager=$(setup eager)
if awk -v l="$lazy" -v b="$bg" -v e="$eager" 'BEGIN { exit !(b < 3 * l + 5 && b < e) }'; then
	pass bg-setup-near-lazy
else
	fail bg-setup-near-lazy "setup: background $bg ms, lazy $lazy ms, eager $eager ms (want background < 3 x lazy + 5 and < eager)"
fi
echo "    (setup, min of two: lazy $lazy ms, background $bg ms; eager=populate $eager ms)"

# --- a guest that exits early ends the run on time ----------------------------------
expect bg-early-exit 0 '' 'stopped as the run ended' -- \
	$MINIVMM --mem 1G --eager=background -o "$OUT/bg-early.json" $GUEST -- hello
run bg-early-lazy $MINIVMM -q --mem 1G -o "$OUT/bg-early-lazy.json" $GUEST -- hello
run bg-early-eager $MINIVMM -q --mem 1G --eager=populate -o "$OUT/bg-early-eager.json" $GUEST -- hello
bg=$(jq '.summary.total_ms' "$OUT/bg-early.json")
lazy=$(jq '.summary.total_ms' "$OUT/bg-early-lazy.json")
full=$(jq '.eager.seconds * 1000' "$OUT/bg-early-eager.json")
if jq -e '.eager.complete == false and .eager.done_bytes < .config.mem_bytes and ([.eager.per_thread[].stopped] | all)' "$OUT/bg-early.json" >/dev/null &&
	awk -v b="$bg" -v l="$lazy" -v f="$full" 'BEGIN { exit !(b < f / 2 && b < 3 * l + 100) }'; then
	pass bg-early-exit-on-time
else
	fail bg-early-exit-on-time "total: background $bg ms, lazy $lazy ms; a full populate of 1 GiB $full ms (want background < full / 2 and < 3 x lazy + 100)"
fi
echo "    (hello, 1 GiB: total background $bg ms, lazy $lazy ms; eager=populate of all of it $full ms)"

# --- the trace: the eager thread beside the vCPU, both frontiers as counters -----------
expect bg-trace 0 '' '' -- $MINIVMM -q --mem 64M --eager=background --trace "$OUT/bg-trace.json" $GUEST -- flat --max-mib 8
jq_true bg-trace-threads "$OUT/bg-trace.json" \
	'[.traceEvents[] | select(.ph == "M" and .name == "thread_name") | .args.name] as $n
	 | ($n | index("eager thread 0 (background)")) != null and ($n | index("vCPU 0 thread")) != null
	 and ([.traceEvents[] | select(.ph == "X" and .cat == "eager" and .tid == 1000)] | length) == 1
	 and ([.traceEvents[] | select(.ph == "C") | .name] | unique) == ["eager populated (MiB)", "guest touched (MiB)"]'

# --- what the options and order files get wrong: exit 2, one clear message -----------
printf 'minivmm-touch-order 1 ram_bytes=67108864 page_bytes=4096 pages=2 clock=ns_since_exec\n0x1000 5\n' >"$OUT/bg-truncated.touch"
expect bg-order-truncated 2 'eager-order .*bg-truncated.touch: truncated: 1 of the 2 pages' '' -- \
	$MINIVMM --mem 64M --eager=background --eager-order "$OUT/bg-truncated.touch" $GUEST -- hello
expect bg-order-mismatched 2 "eager-order .*recorded with 64 MiB of guest RAM, more than this run's 32 MiB \(--mem\): run with --mem 64M, or record again with --mem 32M" '' -- \
	$MINIVMM --mem 32M --eager=background --eager-order "$rec" $GUEST -- hello
# Recorded with less RAM: all its pages fit, so it is replayed, and the report says so.
expect bg-order-smaller-recording 0 '' 'recorded with 64 MiB of guest RAM: all its pages lie in this run.s' -- \
	$MINIVMM --mem 128M --eager=background --eager-order "$rec" $GUEST -- hello
expect bg-order-missing 2 'eager-order .*nonexistent.touch: No such file' '' -- \
	$MINIVMM --mem 64M --eager=background --eager-order "$OUT/nonexistent.touch" $GUEST -- hello
expect bg-order-not-a-file 2 "eager-order $GUEST: (empty, or no header line|not a touch-order file)" '' -- \
	$MINIVMM --mem 64M --eager=background --eager-order "$GUEST" $GUEST -- hello
expect bg-order-needs-eager 2 '--eager-order orders eager population: add --eager' '' -- \
	$MINIVMM --mem 64M --eager-order back $GUEST -- hello
expect bg-frontier-needs-background 2 'frontier follows the running guest: it needs --eager=background' '' -- \
	$MINIVMM --mem 64M --eager=populate --eager-order frontier $GUEST -- hello
expect bg-touch-refused 2 'eager=background:touch: .*touch runs in the guest' '' -- \
	$MINIVMM --mem 64M --eager=background:touch $GUEST -- hello
expect bg-uffd-refused 2 'eager=background populates guest RAM beside the guest: with --paging uffd' '' -- \
	$MINIVMM --mem 64M --eager=background --paging uffd $GUEST -- hello
