# Timeline, KVM counters, --trace, --compare, --repeat and the plot script.
expect timeline-flat 0 '' '^setup: [0-9.]+ ms \(no eager\) \| first useful work: [0-9.]+ ms \| total: [0-9.]+ ms$' -- \
	$MINIVMM --mem 256M -o "$OUT/tl.json" --trace "$OUT/trace.json" $GUEST -- flat --max-mib 32 --iterations 2
grep -Eq '^phase +start +end +duration ' "$OUT/timeline-flat.out" &&
	grep -Eq '^firmware_ready +[0-9.]+ +[0-9.]+ +[0-9.]+ ' "$OUT/timeline-flat.out" &&
	pass timeline-table-start-end-duration || fail timeline-table-start-end-duration "$(grep -A3 '^phase' "$OUT/timeline-flat.out")"
jq_true timeline-phases-in-order "$OUT/tl.json" \
	'[.timeline[].phase] == ["image_read","kvm_open","vm_created","ram_mapped","vcpus_created","guest_loaded","guest_entry","firmware_ready","workload_start","first_useful_work","workload_end","vm_exit"]'
# One convention: a phase starts where the one before it ended, and lasts end - start.
jq_true timeline-start-end-duration "$OUT/tl.json" \
	'.timeline as $t | $t[0].start_ms == 0 and ([range(0; $t | length) | ($t[.].end_ms - $t[.].start_ms - $t[.].dur_ms | fabs) < 1e-6 and $t[.].dur_ms >= 0] | all)
	 and ([range(1; $t | length) | ($t[.].start_ms - $t[. - 1].end_ms | fabs) < 1e-6] | all)'
jq_true timeline-summary-consistent "$OUT/tl.json" \
	'(.timeline | map({(.phase): .end_ms}) | add) as $p
	 | (.summary.setup_ms - $p.guest_entry | fabs) < 1e-6 and (.summary.first_useful_work_ms - $p.first_useful_work | fabs) < 1e-6
	   and (.summary.total_ms - $p.vm_exit | fabs) < 1e-6 and (.summary.first_pass_ms - ($p.first_useful_work - $p.workload_start) | fabs) < 1e-6
	   and .summary.eager_ms == null'
jq_true timeline-guest-marks-between-vmm-marks "$OUT/tl.json" \
	'.timeline as $t | ($t | map(select(.source == "vmm" and .phase == "guest_entry")) | .[0].end_ms) as $entry
	 | ($t | map(select(.phase == "vm_exit")) | .[0].end_ms) as $exit
	 | [$t[] | select(.source == "guest") | .end_ms > $entry and .end_ms < $exit] | all and ([$t[] | select(.source == "guest")] | length == 4)'
# Zero deltas are written as 0; phases before the counters exist say null.
jq_true timeline-zero-counters-written "$OUT/tl.json" \
	'(.timeline[] | select(.phase == "kvm_open") | .stats) == null and (.timeline[] | select(.phase == "guest_entry") | .stats.pf_taken) == 0'
# Shadow paging here faults once per 4 KiB page (TDP with 2 MiB backing would be 1/512): assert the floor.
jq_true timeline-first-pass-faults "$OUT/tl.json" \
	'([.sweep[] | select(.iteration == 1) | .pages] | add) as $pages
	 | (.timeline[] | select(.phase == "first_useful_work") | .stats.pf_taken // 0) >= $pages / 512'
jq_true timeline-warm-pass-no-faults "$OUT/tl.json" \
	'(.timeline[] | select(.phase == "first_useful_work") | .stats.pf_taken // 0) as $first
	 | (.timeline[] | select(.phase == "workload_end") | .stats.pf_taken // 0) <= $first / 100'
echo "    (first pass: $(jq '[.sweep[] | select(.iteration == 1) | .pages] | add' "$OUT/tl.json") pages, pf_taken $(jq '.timeline[] | select(.phase == "first_useful_work") | .stats.pf_taken' "$OUT/tl.json"); warm pass pf_taken $(jq '.timeline[] | select(.phase == "workload_end") | .stats.pf_taken // 0' "$OUT/tl.json"))"
jq_true trace-event-format "$OUT/trace.json" \
	'(.traceEvents | length > 10) and ([.traceEvents[] | has("name") and has("ph") and has("pid") and has("tid")] | all)
	 and ([.traceEvents[] | select(.ph == "X") | .ts >= 0 and .dur >= 0] | all)
	 and ([.traceEvents[] | select(.ph == "M") | .args.name] | index("vCPU 0 thread") != null)'

expect compare 0 '' '^verdict \(one run each' -- \
	$MINIVMM --compare --mem 256M -o "$OUT/compare.json" --trace "$OUT/compare-trace.json" \
	$GUEST -- flat --max-mib 16 --iterations 2
grep -q '^== run 1 of 2: lazy$' "$OUT/compare.out" && grep -q '^== run 2 of 2: eager' "$OUT/compare.out" &&
	grep -Eq '^phase +lazy end +duration +pf_taken \| +eager end +duration +pf_taken$' "$OUT/compare.out" &&
	grep -Eq '^eager_done +- +- +- \| +[0-9.]+' "$OUT/compare.out" &&
	grep -Eq '^first_useful_work +[0-9.]+ +[0-9.]+ +[0-9]+ \| +[0-9.]+ +[0-9.]+ +[0-9]+$' "$OUT/compare.out" &&
	grep -Eq 'of its 256 MiB|break-even: never' "$OUT/compare.out" &&
	grep -Eq '^  (break-even: eager pays off once the guest touches [0-9.]+%|break-even: never)' "$OUT/compare.out" &&
	pass compare-both-timelines-and-verdict || fail compare-both-timelines-and-verdict "$(tail -20 "$OUT/compare.out")"
jq_true compare-verdict-from-timelines "$OUT/compare.json" \
	'.verdict as $v | .runs[0] as $l | .runs[1] as $e
	 | .experiment.kind == "compare" and .experiment.order == ["lazy","eager"] and $l.label == "lazy" and $e.label == "eager"
	 and ($v.first_touch_saved_ms - ($v.first_pass_lazy_ms.median - $v.first_pass_eager_ms.median) | fabs) < 1e-6
	 and ($v.first_pass_lazy_ms.median - $l.summary.first_pass_ms | fabs) < 1e-6
	 and ($v.eager_cost_ms.median - $e.summary.eager_ms | fabs) < 1e-6
	 and $v.sooner == (if $v.first_useful_work_lazy_ms.median <= $v.first_useful_work_eager_ms.median then "lazy" else "eager" end)
	 and $l.eager == null and $e.eager.strategy != null'
jq_true compare-trace-two-runs "$OUT/compare-trace.json" '[.traceEvents[].pid] | unique == [1, 2]'

# --compare --repeat: ABBA order after a warm-up, every sample kept, medians and spreads, a verdict that can say "inconclusive".
expect compare-repeat 0 '' '^verdict \(medians' -- \
	$MINIVMM --compare --repeat 3 --mem 128M -o "$OUT/compare3.json" $GUEST -- flat --max-mib 8 --iterations 2
jq_true compare-repeat-abba "$OUT/compare3.json" \
	'.experiment.order == ["lazy","lazy","eager","eager","lazy","lazy","eager"] and .experiment.warmup == 1
	 and ([.runs[] | .warmup] == [true,false,false,false,false,false,false]) and (.runs | length == 7)'
jq_true compare-repeat-aggregates "$OUT/compare3.json" \
	'.aggregate.lazy.runs == 3 and .aggregate.eager.runs == 3
	 and ([.runs[] | select(.label == "lazy" and (.warmup | not)) | .summary.first_pass_ms] | sort) as $s
	 | (.aggregate.lazy.summary.first_pass_ms | .min == $s[0] and .median == $s[1] and .max == $s[2])
	 and (.verdict.pairs == 3) and (.verdict.sooner_conclusive | type == "boolean")'
grep -Eq '^  first useful work: .*(got there sooner|inconclusive)' "$OUT/compare-repeat.out" &&
	pass compare-repeat-verdict-line || fail compare-repeat-verdict-line "$(tail -8 "$OUT/compare-repeat.out")"

if command -v gnuplot >/dev/null; then
	# The prefix is the file's name: PREFIX.png, PREFIX.svg.
	expect plot-sweep 0 '' '/tl\.png$' -- scripts/plot "$OUT/tl.json" "$OUT/tl"
	[ -s "$OUT/tl.png" ] && [ "$(head -c 4 "$OUT/tl.png" | od -An -c | tr -d ' ')" = '211PNG' ] &&
		pass plot-sweep-png || fail plot-sweep-png "no PNG"
	expect plot-compare 0 '' '/compare\.svg$' -- scripts/plot "$OUT/compare.json" "$OUT/compare" svg
	[ -s "$OUT/compare.svg" ] && pass plot-compare-svg || fail plot-compare-svg "empty"
	expect plot-missing-file 1 '^plot: no such file: ' '' -- scripts/plot "$OUT/no-such-results.json"
	expect plot-bogus-counter 2 'no KVM counter bogus; valid: .*pf_taken' '' -- scripts/plot --y bogus "$OUT/tl.json"
	expect plot-help 0 '' 'OUT-PREFIX.png' -- scripts/plot --help
else
	skip plot "gnuplot not installed (scripts/install-deps installs it)"
fi

# scripts/run-experiment's estimate comes from a calibration run here, and says from what.
expect experiment-estimate 0 '' '^scripts/run-experiment --quick: estimated [0-9]+( min [0-9]+)? s on this machine \(calibrated here just now: lazy first touch [0-9.]+ us/page, eager populate [0-9.]+ GiB/s, a guest demand fault [0-9]+ us' -- \
	scripts/run-experiment --estimate --quick --out "$OUT/experiment-estimate"
[ ! -e "$OUT/experiment-estimate" ] && pass experiment-estimate-leaves-nothing ||
	fail experiment-estimate-leaves-nothing "$(ls "$OUT/experiment-estimate")"
# A user who may not open /dev/kvm, or may not build in this clone, is told so
# (root, the device's group, or a clone of their own) before install-deps or make.
NOBODY="setpriv --reuid=65534 --regid=65534 --clear-groups"
if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null || ! command -v unshare >/dev/null; then
	skip experiment-not-root "needs root, setpriv and unshare"
else
	expect experiment-no-kvm-access 1 'run-experiment: nobody may not open /dev/kvm: run it as root \(sudo .*scripts/run-experiment --quick\), or join the group disk \(sudo usermod -aG disk nobody' '' -- \
		unshare -m sh -c "mount -t tmpfs none /dev && mknod -m 0660 /dev/kvm c 10 232 && chgrp disk /dev/kvm && exec $NOBODY scripts/run-experiment --quick"
	expect experiment-clone-not-yours 1 "run-experiment: this clone \($PWD\) belongs to root: build and run it as that user \(sudo .*\), or clone it for yourself \(git clone $PWD ~/minivmm\)" '' -- \
		unshare -m sh -c "mount -t tmpfs none /dev && mknod -m 0666 /dev/kvm c 10 232 && exec $NOBODY scripts/run-experiment --quick"
fi
expect experiment-no-estimate 0 '' "no estimate: no estimate for the workload 'perm'" -- \
	scripts/run-experiment --estimate --quick --out "$OUT/experiment-estimate" -- perm --mib 8
