# --compare=LIST: modes, their Williams order, the ranking, refusals before the first run, the frontier plot.
W=(flat --max-mib 4 --iterations 2)

# The default list is today's lazy,eager: same order, same table, same verdict lines, and the ranking.
expect compare-list-default 0 '' '^verdict \(one run each' -- \
	$MINIVMM --compare=lazy,eager --mem 32M -o "$OUT/cmp-le.json" $GUEST -- "${W[@]}"
grep -Eq '^phase +lazy end +duration +pf_taken \| +eager end +duration +pf_taken$' "$OUT/compare-list-default.out" &&
	grep -Eq '^  eager cost: ' "$OUT/compare-list-default.out" &&
	grep -Eq '^  (break-even: eager pays off|break-even: never)' "$OUT/compare-list-default.out" &&
	grep -Eq '^    1\. (lazy|eager) +[0-9.]+: setup [0-9.]+ ms, first pass [0-9.]+ ms, pf_taken [0-9]+$' "$OUT/compare-list-default.out" &&
	grep -Eq '^       ahead of (lazy|eager) by [0-9.]+ ms \(one run each' "$OUT/compare-list-default.out" &&
	pass compare-list-default-table-and-verdict || fail compare-list-default-table-and-verdict "$(tail -22 "$OUT/compare-list-default.out")"
jq_true compare-list-default-results "$OUT/cmp-le.json" \
	'.experiment.kind == "compare" and .experiment.order == ["lazy","eager"] and .experiment.modes == ["lazy","eager"]
	 and .verdict.pairs == 1 and (.verdict.ranking | length == 2) and ([.verdict.ranking[].mode] | sort == ["eager","lazy"])
	 and (.verdict.ranking[0].first_useful_work_ms.median <= .verdict.ranking[1].first_useful_work_ms.median)
	 and .verdict.ranking[0].conclusive_vs_next == false
	 and (.verdict.first_useful_work_lazy_ms.median == ([.verdict.ranking[] | select(.mode == "lazy")][0].first_useful_work_ms.median))'

# Two modes, lazy and uffd: ranked, with the handlers' faults in the first pass beside KVM's.
expect compare-lazy-uffd 0 '' '^    2\. ' -- \
	$MINIVMM --compare=lazy,uffd --mem 32M -o "$OUT/cmp-lu.json" $GUEST -- "${W[@]}"
grep -Eq '^phase +lazy end +duration +pf_taken \| +uffd end +duration +pf_taken$' "$OUT/compare-lazy-uffd.out" &&
	grep -Eq '^    [12]\. uffd +[0-9.]+: .*pf_taken [0-9]+, uffd faults [0-9]+ \(p50 [0-9.]+ us\)$' "$OUT/compare-lazy-uffd.out" &&
	! grep -q 'eager cost' "$OUT/compare-lazy-uffd.out" &&
	pass compare-lazy-uffd-ranked || fail compare-lazy-uffd-ranked "$(tail -12 "$OUT/compare-lazy-uffd.out")"
# Every first touch of the pass is a uffd fault; each is also a KVM fault (shadow or EPT/NPT): counts agree within 10%.
jq_true compare-lazy-uffd-results "$OUT/cmp-lu.json" \
	'.experiment.order == ["lazy","uffd"] and (.verdict | has("pairs") | not)
	 and ([.verdict.ranking[] | select(.mode == "uffd")][0]) as $u | ([.verdict.ranking[] | select(.mode == "lazy")][0]) as $l
	 | ([.runs[1].sweep[] | select(.iteration == 1) | .pages] | add) as $pages
	 | $u.first_pass_uffd_faults.median >= $pages and $u.first_pass_uffd_faults.median <= $pages * 1.1 + 16
	 and ($u.first_pass_pf_taken.median / $u.first_pass_uffd_faults.median) > 0.9 and ($l | has("first_pass_uffd_faults") | not)
	 and .runs[1].paging.mode == "uffd" and .runs[0].paging.mode == "kernel"'

# Three modes, --repeat 2: a warm-up, then two rows of the Williams design; the compact table.
expect compare-three 0 '' '^verdict \(medians' -- \
	$MINIVMM -q --compare=lazy,eager,uffd --repeat 2 --mem 32M -o "$OUT/cmp3.json" $GUEST -- "${W[@]}"
jq_true compare-three-williams-order "$OUT/cmp3.json" \
	'.experiment.order == ["lazy", "lazy","eager","uffd", "eager","uffd","lazy"] and .experiment.warmup == 1
	 and ([.runs[] | .warmup] == [true,false,false,false,false,false,false])
	 and .aggregate.lazy.runs == 2 and .aggregate.eager.runs == 2 and .aggregate.uffd.runs == 2
	 and (.verdict.ranking | length == 3) and ([.verdict.ranking[].rank] == [1,2,3])
	 and ([.verdict.ranking[].first_useful_work_ms.median] | . == sort)
	 and ([.verdict.ranking[:2][] | .conclusive_vs_next | type] == ["boolean","boolean"]) and (.verdict.ranking[2] | has("next") | not)'
grep -Eq '^ +\| +lazy \| +eager \| +uffd$' "$OUT/compare-three.out" &&
	grep -Eq '^phase +\| +end +pf_taken \| +end +pf_taken \| +end +pf_taken$' "$OUT/compare-three.out" &&
	grep -Eq '^eager_done +\| +- +- \| +[0-9.]+ +0 \| +- +-$' "$OUT/compare-three.out" &&
	grep -Eq '^first_useful_work +\| +[0-9.]+ +[0-9]+ \| +[0-9.]+ +[0-9]+ \| +[0-9.]+ +[0-9]+$' "$OUT/compare-three.out" &&
	grep -Eq '^       (ahead of [a-z]+ by [0-9.]+ ms|inconclusive against [a-z]+: the spreads overlap)' "$OUT/compare-three.out" &&
	pass compare-three-table || fail compare-three-table "$(tail -25 "$OUT/compare-three.out")"
# The medians the ranking shows are the aggregates' (one computation, two places).
jq_true compare-three-ranking-is-aggregates "$OUT/cmp3.json" \
	'. as $d | [.verdict.ranking[] | (.first_useful_work_ms.median - $d.aggregate[.mode].summary.first_useful_work_ms.median | fabs) < 1e-6] | all'

# Bad lists: exit 2, the message names the modes; a list without '=' gets the command line corrected.
expect compare-bad-mode 2 'no mode .bogus.; modes are lazy, eager, background, uffd, replay' '' -- \
	$MINIVMM --compare=lazy,bogus $GUEST -- hello
expect compare-one-mode 2 'needs two modes or more' '' -- $MINIVMM --compare=lazy $GUEST -- hello
expect compare-mode-twice 2 'mode eager twice' '' -- $MINIVMM --compare=eager,lazy,eager $GUEST -- hello
expect compare-list-without-equals 2 "'lazy,uffd' after --compare is taken as the guest image.*--compare=lazy,uffd" '' -- \
	$MINIVMM --compare lazy,uffd --mem 32M $GUEST -- hello
grep -Fq -- "--compare=lazy,uffd --mem 32M $GUEST -- hello" "$OUT/compare-list-without-equals.err" &&
	pass compare-list-without-equals-corrected || fail compare-list-without-equals-corrected "$(cat "$OUT/compare-list-without-equals.err")"
expect compare-no-paging-option 2 'does not take --paging uffd.*--compare=lazy,uffd' '' -- \
	$MINIVMM --compare=lazy,eager --paging uffd $GUEST -- hello
expect compare-uffd-options-need-a-uffd-mode 2 'need --paging uffd' '' -- \
	$MINIVMM --compare=lazy,eager --uffd-delay-us 5 $GUEST -- hello

# A mode this machine cannot run is refused before the first run: exit 3, no run; the results file says why.
if [ -d /sys/module/kvm_pvm ] || [ "$(cat /sys/module/kvm/parameters/tdp_mmu 2>/dev/null)" = N ]; then
	rm -f "$OUT/cmp-prefault.json"
	expect compare-impossible-mode 3 'mode eager \(--eager=prefault\) cannot run here, so no run was started: .*KVM_CAP_PRE_FAULT_MEMORY' '' -- \
		$MINIVMM --compare=lazy,eager --eager=prefault --mem 32M -o "$OUT/cmp-prefault.json" $GUEST -- "${W[@]}"
	! grep -q '^== run' "$OUT/compare-impossible-mode.out" &&
		jq -e '.runs[0].exit.reason == "host-error" and .experiment.runs_done == 1' "$OUT/cmp-prefault.json" >/dev/null 2>&1 &&
		pass compare-impossible-mode-nothing-ran || fail compare-impossible-mode-nothing-ran "$(head -5 "$OUT/compare-impossible-mode.out")"
else
	skip compare-impossible-mode "this KVM has two-dimensional paging: --eager=prefault may run here"
fi
# No userfaultfd KVM can use for this process (vm.unprivileged_userfaultfd = 0, /dev/userfaultfd
# root's): the uffd mode is refused before any run, with the ways to allow it.
if [ "$(cat /proc/sys/vm/unprivileged_userfaultfd 2>/dev/null)" != 0 ]; then
	skip compare-uffd-unavailable "vm.unprivileged_userfaultfd is not 0 here"
elif ! setpriv --reuid=65534 --regid=65534 --clear-groups test -r "$GUEST" -a -x "$MINIVMM" 2>/dev/null; then
	skip compare-uffd-unavailable "user 65534 cannot run $MINIVMM here"
elif setpriv --reuid=65534 --regid=65534 --clear-groups test -w /dev/userfaultfd 2>/dev/null; then
	skip compare-uffd-unavailable "/dev/userfaultfd is writable by user 65534"
else
	expect compare-uffd-unavailable 3 'mode uffd \(--paging uffd\) cannot run here, so no run was started: .*userfaultfd\(2\) refused \(EPERM' '' -- \
		setpriv --reuid=65534 --regid=65534 --clear-groups $MINIVMM --compare=uffd,lazy --mem 16M $GUEST -- hello
fi
# uffd with THP cannot work (userfaultfd installs 4 KiB pages): refused before lazy runs.
expect compare-uffd-thp-refused 3 'mode uffd \(--paging uffd\) cannot run here, so no run was started: .*backing thp' '' -- \
	$MINIVMM --compare=lazy,uffd --backing thp --mem 32M $GUEST -- "${W[@]}"

# The background modes (the background eager mechanism): only where this minivmm has it,
# that is where --help lists background among --eager's HOWs.
if $MINIVMM --help | sed -n '/--eager\[=HOW\]/,/--eager-threads/p' | grep -q background; then
	expect compare-background 0 '' '^verdict' -- \
		$MINIVMM -q --compare=lazy,eager,background --mem 32M -o "$OUT/cmp-bg.json" $GUEST -- "${W[@]}"
	jq_true compare-background-results "$OUT/cmp-bg.json" \
		'.experiment.modes == ["lazy","eager","background"] and (.verdict.ranking | length == 3)
		 and ([.runs[] | select(.label == "background")][0].eager != null)'
	# replay without --eager-order: one recording run first (uffd, not counted), then the replays.
	rm -f "$OUT/cmp-replay.touch"
	expect compare-replay-records 0 '' '^verdict' -- \
		$MINIVMM --compare=lazy,replay --mem 32M -o "$OUT/cmp-replay.json" $GUEST -- perm --mib 4 --iterations 2
	jq_true compare-replay-recording "$OUT/cmp-replay.json" \
		'.experiment.order == ["record","lazy","replay"] and .runs[0].label == "record" and .runs[0].warmup
		 and .runs[0].paging.mode == "uffd" and .experiment.recording.index == 1
		 and .experiment.recording.pages >= 1024 and (.experiment.recording.path | endswith("cmp-replay.touch"))
		 and (.aggregate | keys | sort == ["lazy","replay"]) and (.verdict.ranking | length == 2)'
	grep -q '^== run 1 of 3: record (the guest.s first-touch order, for replay; not counted' "$OUT/compare-replay-records.out" &&
		$MINIVMM --check-touch "$OUT/cmp-replay.touch" --mem 32M >/dev/null &&
		pass compare-replay-recording-kept || fail compare-replay-recording-kept "$(grep -m3 '^== run\|recorded' "$OUT/compare-replay-records.out")"
else
	skip compare-background "this minivmm has no --eager=background (the background eager branch)"
fi

# scripts/plot: the phase bars and the frontiers, one line per mode.
if command -v gnuplot >/dev/null; then
	expect compare-plot-progress 0 '' '/cmp3-progress\.png$' -- scripts/plot "$OUT/cmp3.json" "$OUT/cmp3" png
	[ "$(head -c 4 "$OUT/cmp3-progress.png" | od -An -c | tr -d ' ')" = '211PNG' ] && grep -q '/cmp3\.png$' "$OUT/compare-plot-progress.out" &&
		pass compare-plot-progress-png || fail compare-plot-progress-png "$(cat "$OUT/compare-plot-progress.out")"
else
	skip compare-plot "gnuplot not installed (scripts/install-deps installs it)"
fi
