# Tier "frontier": perm (every page once per pass, in a seeded random or a
# strided order) and the touch frontier flat and perm record (ABI 2), on
# /dev/kvm: what the guest reported, checked against what it must be.

# Per vCPU: points in order (bytes up, t_ms never down), from 0 to the whole
# pass (its order record's pages), their count what the stride gives, all
# within the first pass on the run's clock (5 ms of slack: the TSC anchor's).
progress_ok='
  . as $r
  | ($r.timeline[] | select(.phase == "workload_start") | .end_ms) as $t0
  | ($r.timeline[] | select(.phase == "first_useful_work") | .end_ms) as $t1
  | [$r.touch_order[] | . as $o
     | [$r.progress[] | select(.vcpu == $o.vcpu)] as $p
     | ($o.pages * 4096) as $total
     | ($p | length) > 1
       and $p[0].bytes == 0 and $p[-1].bytes == $total
       and ([$p[] | .bytes_total == $total and .iteration == 1] | all)
       and ([range(1; $p | length) | $p[.].bytes > $p[. - 1].bytes and $p[.].t_ms >= $p[. - 1].t_ms] | all)
       and ($p | length) == (($total / $o.progress_bytes | floor) + 1 + (if $total % $o.progress_bytes == 0 then 0 else 1 end))
       and ([$p[] | .t_ms >= $t0 - 5 and .t_ms <= $t1 + 5] | all)
       and ([$p[1:][] | .last_gpa >= $o.gpa and .last_gpa < $o.end_gpa and .last_gpa % 4096 == 0] | all)]
  | length > 0 and all'
# Every sweep record of a direct-mapped pass wrote exactly its vCPU's pages:
# their count, and the sum of their frame numbers as the guest counted them.
pfns_ok='
  . as $r
  | [$r.sweep[] | select(.vcpu != "all") | . as $s
     | ($r.touch_order[] | select(.vcpu == $s.vcpu)) as $o
     | ($o.gpa / 4096) as $first
     | $s.pages == $o.pages and $s.guest_faults == 0 and $o.end_gpa - $o.gpa == $o.pages * 4096
       and $s.pfn_sum == $o.pages * $first + $o.pages * ($o.pages - 1) / 2]
  | length > 0 and all'

# --- flat: sequential, its sizes one after the other -------------------------
expect frontier-flat 0 '' 'flat: direct-mapped' -- \
	$MINIVMM --mem 64M -o "$OUT/frontier-flat.json" $GUEST -- flat --max-mib 8 --iterations 2
jq_true frontier-flat-points "$OUT/frontier-flat.json" "$progress_ok"
# The default stride: 1 MiB over flat's 15 MiB (1 + 2 + 4 + 8): 15 points and the start.
jq_true frontier-flat-default-stride "$OUT/frontier-flat.json" \
	'(.touch_order | length) == 1 and .touch_order[0].order == "sequential" and .touch_order[0].progress_bytes == 1048576 and .touch_order[0].pages == 15 * 256 and (.progress | length) == 16'
# Front to back: the page written last is the frontier's.
jq_true frontier-flat-sequential "$OUT/frontier-flat.json" \
	'.touch_order[0] as $o | [.progress[1:][] | .last_gpa == $o.gpa + .bytes - 4096] | all'
# Sent after the last measurement: the sweep records and their counters are as before.
jq_true frontier-flat-records-unchanged "$OUT/frontier-flat.json" \
	'(.sweep | length) == 8 and ([.sweep[] | .kvm.exits >= 1] | all)'
expect frontier-flat-stride 0 '' '' -- \
	$MINIVMM -q --mem 64M -o "$OUT/frontier-flat-stride.json" $GUEST -- flat --max-mib 8 --iterations 1 --progress-mib 4
jq_true frontier-flat-stride-points "$OUT/frontier-flat-stride.json" \
	"($progress_ok) and .touch_order[0].progress_bytes == 4194304 and ([.progress[].bytes / 1048576] == [0, 4, 8, 12, 15])"
expect frontier-flat-none 0 '' '' -- \
	$MINIVMM -q --mem 64M -o "$OUT/frontier-flat-none.json" $GUEST -- flat --max-mib 8 --iterations 1 --progress-mib 0
jq_true frontier-flat-none-empty "$OUT/frontier-flat-none.json" \
	'(.progress | length) == 0 and .touch_order[0].progress_bytes == 0 and (.sweep | length) == 4'
# --parallel: each vCPU its own share and its own frontier.
expect frontier-flat-2vcpus 0 '' '' -- \
	$MINIVMM -q --mem 128M --vcpus 2 -o "$OUT/frontier-flat-2vcpus.json" $GUEST -- flat --max-mib 8 --iterations 1 --parallel
jq_true frontier-flat-2vcpus-points "$OUT/frontier-flat-2vcpus.json" \
	"($progress_ok) and ([.touch_order[].vcpu] == [0, 1]) and .touch_order[0].end_gpa == .touch_order[1].gpa and ([.progress[] | select(.vcpu == 1)] | length) == 16"
expect frontier-too-many-points 2 'status 2' 'more than 65536 points per vCPU' -- \
	$MINIVMM --mem 64M $GUEST -- flat --max-mib 65536 --progress-mib 1

# --- perm: all of free RAM, every page once per pass, a seeded order ----------
expect perm-seed-1 0 '' '^perm: [0-9]+ MiB, 2 iterations, random order \(seed 1\)' -- \
	$MINIVMM --mem 64M -o "$OUT/perm-seed-1.json" $GUEST -- perm
grep -q '^Iteration 1 (perm: direct-mapped, no guest faults)$' "$OUT/perm-seed-1.out" &&
	[ "$(grep -c '^Iteration [12] (perm' "$OUT/perm-seed-1.out")" = 2 ] && pass perm-tables ||
	fail perm-tables "$(head -c 600 "$OUT/perm-seed-1.out")"
jq_true perm-every-page-once "$OUT/perm-seed-1.json" "$pfns_ok"
jq_true perm-points "$OUT/perm-seed-1.json" "$progress_ok"
# The whole of free RAM: from past the firmware to within 1 MiB (whole MiB) of the end.
jq_true perm-all-free-ram "$OUT/perm-seed-1.json" \
	'.touch_order[0] as $o | $o.order == "random" and $o.seed == 1 and $o.workload == "perm" and $o.end_gpa <= .config.mem_bytes and $o.end_gpa > .config.mem_bytes - 1048576 and $o.gpa < 16 * 1048576'
# Pass 1 meets every page for the first time and marks first useful work; pass 2 is warm.
jq_true perm-pass-2-warm "$OUT/perm-seed-1.json" \
	'([.sweep[] | select(.workload == "perm")] | length) == 2 and .sweep[0].touch_s > 2 * .sweep[1].touch_s and .sweep[0].pfn_sum == .sweep[1].pfn_sum and .summary.first_useful_work_ms != null'
# Another seed: the same pages, in another order.
expect perm-seed-2 0 '' 'random order \(seed 2\)' -- \
	$MINIVMM --mem 64M -o "$OUT/perm-seed-2.json" $GUEST -- perm --seed 2
jq_true perm-seed-2-every-page-once "$OUT/perm-seed-2.json" "$pfns_ok"
jq -s -e '.[0] as $a | .[1] as $b
	| ($a.touch_order[0] | del(.seed)) == ($b.touch_order[0] | del(.seed))
	and ([$a.sweep[].pfn_sum] == [$b.sweep[].pfn_sum]) and ([$a.sweep[].pages] == [$b.sweep[].pages])
	and ([$a.progress[].bytes] == [$b.progress[].bytes]) and ([$a.progress[].last_gpa] != [$b.progress[].last_gpa])
	and ([$a.progress[1:][].last_gpa] | unique | length) > ([$a.progress[1:][]] | length) / 2' \
	"$OUT/perm-seed-1.json" "$OUT/perm-seed-2.json" >/dev/null 2>&1 &&
	pass perm-seeds-same-pages-other-order ||
	fail perm-seeds-same-pages-other-order "$(jq -c '[.touch_order[0], [.sweep[].pfn_sum], [.progress[0:4][].last_gpa]]' "$OUT/perm-seed-1.json" "$OUT/perm-seed-2.json")"
# Not front to back: the random order's frontier is nowhere near the pages in order.
jq_true perm-not-sequential "$OUT/perm-seed-1.json" \
	'.touch_order[0] as $o | [.progress[1:-1][] | .last_gpa == $o.gpa + .bytes - 4096] | any | not'

# --stride 5 over 8 MiB (2048 pages): pages 0, 5, 10, ... first, so the 256th
# page written (the 1 MiB point) is page 255 * 5.
expect perm-stride 0 '' 'strided order \(--stride 5: pages 0, 5, 10' -- \
	$MINIVMM --mem 64M -o "$OUT/perm-stride.json" $GUEST -- perm --mib 8 --stride 5 --iterations 1
jq_true perm-stride-order "$OUT/perm-stride.json" \
	"($pfns_ok) and ($progress_ok) and .touch_order[0].order == \"stride\" and .touch_order[0].stride_pages == 5 and .touch_order[0].pages == 2048 and .progress[1].bytes == 1048576 and .progress[1].last_gpa == .touch_order[0].gpa + 255 * 5 * 4096"

# --blocks 512 over 16 MiB: eight 2 MiB blocks in the seed's order, each first
# page to last; the points every MiB end a block's first half or the block.
expect perm-blocks 0 '' 'blocks of 512 pages in a random order \(seed 1\), each first page to last' -- \
	$MINIVMM --mem 64M -o "$OUT/perm-blocks.json" $GUEST -- perm --mib 16 --blocks 512 --iterations 1 --progress-mib 1
jq_true perm-blocks-order "$OUT/perm-blocks.json" \
	"($pfns_ok) and ($progress_ok) and .touch_order[0] as \$o | \$o.order == \"blocks\" and \$o.stride_pages == 512 and \$o.seed == 1 and \$o.pages == 4096
	 and ([.progress[1:][] | (.last_gpa - \$o.gpa) % 2097152] | unique) == [1044480, 2093056]
	 and ([.progress[1:][] | select(.bytes % 2097152 == 0) | (.last_gpa - \$o.gpa) / 2097152 | floor]) as \$b
	 | (\$b | sort) == [0, 1, 2, 3, 4, 5, 6, 7] and \$b != (\$b | sort)"

# --parallel: each vCPU its slice, its records, its frontier.
expect perm-2vcpus 0 '' 'perm: --parallel: 2 vCPUs at once' -- \
	$MINIVMM --mem 64M --vcpus 2 -o "$OUT/perm-2vcpus.json" $GUEST -- perm --mib 8 --parallel
jq_true perm-2vcpus-slices "$OUT/perm-2vcpus.json" \
	"($pfns_ok) and ($progress_ok) and ([.touch_order[].vcpu] == [0, 1]) and .touch_order[0].end_gpa == .touch_order[1].gpa and ([.sweep[] | select(.vcpu == \"all\") | .pages == 4096] | all) and ([.sweep[] | select(.vcpu == \"all\")] | length) == 2 and ([.progress[] | select(.vcpu == 1)] | length) == 9"

# Bad input: one clear message, status 2 from the guest (minivmm exits 1).
expect perm-too-big 2 'status 2' 'perm --mib 100 needs 100 MiB of free guest memory.*--mem [0-9]+M or more' -- \
	$MINIVMM --mem 64M $GUEST -- perm --mib 100
expect perm-bad-stride 2 'status 2' "--stride needs a number from 1 to" -- $MINIVMM --mem 64M $GUEST -- perm --stride 0
expect perm-stride-and-blocks 2 'status 2' "--stride and --blocks are two orders: give one" -- \
	$MINIVMM --mem 64M $GUEST -- perm --stride 2 --blocks 512
expect perm-seed-overflow 2 'status 2' "--seed needs a number from 0 to 18446744073709551615, not '18446744073709551616'" -- \
	$MINIVMM --mem 64M $GUEST -- perm --seed 18446744073709551616
expect perm-too-many-points 2 'status 2' 'more than 65536 points per vCPU' -- \
	$MINIVMM --mem 64M $GUEST -- perm --mib 65536 --progress-mib 1
expect help-lists-perm 0 '' '^  perm \[--mib N\] \[--iterations N\] \[--seed S\] \[--stride PAGES \| --blocks PAGES\]' -- \
	$MINIVMM --mem 16M $GUEST -- help
