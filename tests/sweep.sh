# The sweep and flat workloads on /dev/kvm: table shape, records, guest-side counters.
expect sweep-small 0 '' '^Iteration 2$' -- \
	$MINIVMM --mem 256M -o "$OUT/sweep.json" $GUEST -- sweep --max-mib 16 --iterations 2
[ "$(grep -c '^Iteration [0-9]*$' "$OUT/sweep-small.out")" = 2 ] &&
	[ "$(grep -c '^ MiB demand populate | mmap: demand  populate | munmap: demand populate$' "$OUT/sweep-small.out")" = 2 ] &&
	[ "$(grep -Ec '^ +(1|2|4|8|16) [0-9]+\.[0-9]{3,} +[0-9]+\.[0-9]{3,} +\| [0-9.]+ +[0-9.]+ +\| [0-9.]+ +[0-9.]+$' "$OUT/sweep-small.out")" = 10 ] &&
	! grep -E '^ +[0-9]+ [0-9]' "$OUT/sweep-small.out" | grep -q '0\.000 ' &&
	pass sweep-two-tables-of-five-rows || fail sweep-two-tables-of-five-rows "$(cat "$OUT/sweep-small.out")"
jq_true sweep-record-count "$OUT/sweep.json" '[.sweep[] | select(.workload == "sweep")] | length == 20'
jq_true sweep-record-shape "$OUT/sweep.json" \
	'.sweep_table_shows == "touch_s" and ([.sweep[] | .map_s > 0 and .touch_s > 0 and .unmap_s > 0 and .pages == .size_mib * 256] | all)'
# The guest faults counted are those inside the timed touch loop: every page on
# demand, none after the guest's MAP_POPULATE; and KVM's counters come per record.
jq_true sweep-demand-faults-every-page "$OUT/sweep.json" \
	'[.sweep[] | select(.guest_mapping == "demand") | .guest_faults == .pages] | all'
jq_true sweep-populate-no-faults "$OUT/sweep.json" \
	'[.sweep[] | select(.guest_mapping == "map_populate") | .guest_faults == 0] | all'
jq_true sweep-kvm-counters-per-record "$OUT/sweep.json" \
	'[.sweep[] | .kvm.pf_taken != null and .kvm.exits >= 1] | all'
# The table times what OSv times (the touch loop): where the guest's populate
# faulted everything in, the populate column is far below the demand column.
jq_true sweep-populate-touch-far-below-demand "$OUT/sweep.json" \
	'[.sweep[] | select(.iteration == 1 and .size_mib == 16)] as $r
	 | ($r[] | select(.guest_mapping == "demand") | .touch_s) > 5 * ($r[] | select(.guest_mapping == "map_populate") | .touch_s)'
# LIFO reuse: iteration 2 maps exactly the guest-physical pages iteration 1 did.
jq_true sweep-same-pages-in-iteration-2 "$OUT/sweep.json" \
	'[.sweep[] | select(.iteration == 1)] as $a | [.sweep[] | select(.iteration == 2)] as $b
	 | [range(0; $a | length) | $a[.].pfn_sum == $b[.].pfn_sum and $a[.].pfn_sum > 0] | all'
jq_true sweep-json-header "$OUT/sweep.json" \
	'.minivmm.abi == 5 and (.platform.kvm | test("pvm|vmx|svm|unknown")) and .platform.tsc_khz > 0 and .config.guest_args == ["sweep","--max-mib","16","--iterations","2"] and .exit == {"status":0,"reason":"guest-exit","guest_status":0,"message":"guest exited with status 0 (vCPU 0)"}'

expect flat-small 0 '' 'flat: direct-mapped' -- \
	$MINIVMM --mem 256M -o "$OUT/flat.json" $GUEST -- flat --max-mib 16 --iterations 2
jq_true flat-no-guest-faults "$OUT/flat.json" \
	'([.sweep[] | select(.workload == "flat") | .guest_faults == 0 and .map_s == 0] | all) and (.sweep | length == 10)'
# Iteration 1 pays the hypervisor's first touch, iteration 2 nothing of the kind.
jq_true flat-iteration-1-slower "$OUT/flat.json" \
	'([.sweep[] | select(.iteration == 1) | .touch_s] | add) > 2 * ([.sweep[] | select(.iteration == 2) | .touch_s] | add)'

expect default-is-sweep 0 '' '^ MiB demand populate( |$)' -- $MINIVMM --mem 16M $GUEST
grep -q 'sweep: 1\.\.[0-9]* MiB, 5 iterations' "$OUT/default-is-sweep.out" &&
	[ "$(grep -c '^Iteration [0-9]*$' "$OUT/default-is-sweep.out")" = 5 ] && pass default-five-iterations ||
	fail default-five-iterations "$(head -5 "$OUT/default-is-sweep.out")"
expect sweep-bad-option 2 'status 2' "unknown option '--bogus'" -- $MINIVMM --mem 64M $GUEST -- sweep --bogus
expect sweep-crash-keeps-results 4 'fault address' '' -- \
	$MINIVMM --mem 64M -o "$OUT/partial.json" $GUEST -- munmap-touch
jq_true partial-results-written "$OUT/partial.json" '.exit.reason == "guest-abort" and (.sweep | length == 0)'
