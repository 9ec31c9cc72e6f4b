# Results a reviewer can trust: ordered phases, what eager did, repeats, and
# output files that fail loudly (sourced by tests/run).

# Phases are strictly ordered in every run: 200 fresh VMs, eager on the vCPU threads.
expect ordered-200-runs 0 '' '' -- \
	$MINIVMM -q --eager=populate --repeat 200 --warmup 0 --mem 16M -o "$OUT/ordered.json" $GUEST -- hello
jq_true ordered-phases-every-run "$OUT/ordered.json" \
	'(.runs | length == 200) and ([.runs[] | .timeline as $t
	   | ([$t[].phase] == ["image_read","kvm_open","vm_created","ram_mapped","vcpus_created","eager_done","guest_loaded","guest_entry","firmware_ready","workload_start","workload_end","vm_exit"])
	     and ([range(0; $t | length) | $t[.].dur_ms >= 0] | all)
	     and ([range(1; $t | length) | $t[.].start_ms == $t[. - 1].end_ms] | all)] | all)'

# Eager counts what it made resident itself: the image is placed after it.
expect eager-populated 0 '' '^eager: populate .* 64 MiB of guest RAM in [0-9.]+ m?s: made 64 MiB resident' -- \
	$MINIVMM --eager=populate --mem 64M -o "$OUT/populated.json" $GUEST -- hello
# One populate reads as one number: the eager line's time is the summary's "eager X ms".
e_line=$(sed -n 's/^eager: .* of guest RAM in \([0-9.]* m\{0,1\}s\):.*/\1/p' "$OUT/eager-populated.out")
e_sum=$(sed -n 's/^setup: .*(eager \([0-9.]* ms\)).*/\1/p' "$OUT/eager-populated.out")
case $e_line in
*ms) [ "$e_line" = "$e_sum" ] ;;
*s) awk -v a="${e_line% s}" -v b="${e_sum% ms}" 'BEGIN { exit !(a * 1000 - b < 1 && b - a * 1000 < 1) }' ;;
*) false ;;
esac && pass eager-one-number || fail eager-one-number "eager line '$e_line', summary '$e_sum'"
jq_true eager-counts-what-it-made-resident "$OUT/populated.json" \
	'.eager.resident_bytes_before < .config.mem_bytes / 20
	 and .eager.populated_bytes >= .config.mem_bytes * 0.9
	 and .eager.populated_bytes == .eager.resident_bytes_after - .eager.resident_bytes_before'

# --repeat: every sample kept, medians and spreads computed from them.
expect repeat-flat 0 '' '^run: timeline over 3 runs' -- \
	$MINIVMM --repeat 3 --mem 64M -o "$OUT/repeat.json" $GUEST -- flat --max-mib 4 --iterations 2
jq_true repeat-aggregate-from-samples "$OUT/repeat.json" \
	'.experiment.kind == "repeat" and (.runs | length == 4) and .runs[0].warmup and .aggregate.run.runs == 3
	 and ([.runs[1:][] | .summary.total_ms] | sort) as $t
	 | (.aggregate.run.summary.total_ms | .median == $t[1] and .min == $t[0] and .max == $t[2])
	 and ([.aggregate.run.sweep[] | .touch_s.n == 3] | all)'
grep -Eq '^ +4 +[0-9.]+ +\| [0-9.]+ \[[0-9.]+-[0-9.]+\]$' "$OUT/repeat-flat.out" &&
	pass repeat-sweep-table-medians || fail repeat-sweep-table-medians "$(grep -A8 'Iteration 1' "$OUT/repeat-flat.out")"

# An output file that cannot be written: refused before the run (a probe write), or, when
# it fills up during the run, a non-zero status with the real errno; never a silent 0.
expect results-to-full-device 2 'results /dev/full: cannot write: No space left on device' '' -- \
	$MINIVMM --mem 64M -o /dev/full $GUEST -- hello
grep -q platform "$OUT/results-to-full-device.out" &&
	fail results-refused-before-run "the guest ran: $(head -3 "$OUT/results-to-full-device.out")" ||
	pass results-refused-before-run
if [ "$(id -u)" = 0 ] && command -v unshare >/dev/null && unshare -m true 2>/dev/null; then
	# A file system with room for the probe but not for the results.
	run results-disk-full unshare -m sh -c "mkdir -p $OUT/tiny && mount -t tmpfs -o size=8k tmpfs $OUT/tiny &&
		exec $MINIVMM --mem 64M -o $OUT/tiny/r.json $GUEST -- sweep --max-mib 2 --iterations 1"
	if [ "$(cat "$OUT/results-disk-full.rc")" = 3 ] &&
		grep -q 'writing results to .*: No space left on device' "$OUT/results-disk-full.err"; then
		pass results-disk-full
	else
		fail results-disk-full "status $(cat "$OUT/results-disk-full.rc"): $(cat "$OUT/results-disk-full.err")"
	fi
else
	skip results-disk-full "needs root and unshare -m"
fi

# Output files through symlinks (issue 31): every writer (-o, --trace,
# --record-touch) writes the file a link names, dangling or not, relative to
# the link's own directory, through a chain; the link stays a link.
L=$OUT/links
rm -rf "$L" && mkdir -p "$L/sub" "$L/other"
echo old >"$L/sub/r.json"
ln -s sub/r.json "$L/r.json"          # an existing target
ln -s t.json "$L/sub/t-link.json"     # dangling, relative to sub/
ln -s sub/t-link.json "$L/t.json"     # a chain of two
ln -s ../other/rec.touch "$L/sub/rec.touch" # dangling, up and over
expect links-write-through 0 '' '' -- $MINIVMM -q --mem 64M --paging uffd -o "$L/r.json" --trace "$L/t.json" \
	--record-touch "$L/sub/rec.touch" $GUEST -- flat --max-mib 2 --iterations 1
for f in r.json t.json sub/t-link.json sub/rec.touch; do
	[ -L "$L/$f" ] || fail "links-stay-links" "$L/$f is no longer a symlink"
done
[ -L "$L/r.json" ] && [ -L "$L/t.json" ] && [ -L "$L/sub/t-link.json" ] && [ -L "$L/sub/rec.touch" ] &&
	pass links-stay-links
./tests/check-json "$L/sub/r.json" "$L/sub/t.json" >"$OUT/links-json.log" &&
	jq -e '.schema == "minivmm-results"' "$L/sub/r.json" >/dev/null && pass links-results-at-target ||
	fail links-results-at-target "$(grep INVALID "$OUT/links-json.log"; head -c 100 "$L/sub/r.json")"
[ -s "$L/sub/t.json" ] && jq -e '.traceEvents | length > 0' "$L/sub/t.json" >/dev/null && pass links-trace-at-target ||
	fail links-trace-at-target "$(ls -la "$L/sub")"
head -1 "$L/other/rec.touch" 2>/dev/null | grep -q '^minivmm-touch-order 1 ' && pass links-record-at-target ||
	fail links-record-at-target "$(ls -la "$L/other")"
left=$(cd "$L" && find . -name '*.tmp')
[ -z "$left" ] && pass links-no-temporary || fail links-no-temporary "$left"
# A link into a directory that is not there: the message names it and says what to type.
ln -s gone/r.json "$L/gone-link" # not *.json: the schema tier validates those
expect links-missing-directory 2 "--results $L/gone-link \(a link to $L/gone/r.json\): no directory $L/gone \(make it first: mkdir -p $L/gone\)" '' -- \
	$MINIVMM -q --mem 64M -o "$L/gone-link" $GUEST -- hello
expect results-missing-directory 2 "--results $L/nodir/r.json: no directory $L/nodir \(make it first: mkdir -p $L/nodir\)" '' -- \
	$MINIVMM -q --mem 64M -o "$L/nodir/r.json" $GUEST -- hello
expect results-is-directory 2 "--results $L/sub: a directory; name a file in it" '' -- \
	$MINIVMM -q --mem 64M -o "$L/sub" $GUEST -- hello
ln -s loop-b "$L/loop-a" && ln -s loop-a "$L/loop-b"
expect results-link-loop 2 "--results $L/loop-a: Too many levels of symbolic links" '' -- \
	$MINIVMM -q --mem 64M -o "$L/loop-a" $GUEST -- hello
expect record-touch-missing-directory 2 "--record-touch $L/nodir/t.touch: no directory $L/nodir" '' -- \
	$MINIVMM -q --mem 64M --paging uffd --record-touch "$L/nodir/t.touch" $GUEST -- hello

# Campaigns: a matrix expands to one command per combination; merge reads results back.
printf 'mem = 64M 128M\nbacking = anon thp\neager = compare populate none\nrepeat = 3\nworkload = flat --max-mib 4\n' >"$OUT/matrix.txt"
if ./scripts/campaign "$OUT/matrix.txt" "$OUT/camp" >"$OUT/campaign.txt" 2>"$OUT/campaign.err" &&
	[ "$(wc -l <"$OUT/campaign.txt")" = 12 ] &&
	grep -q -- '--mem 128M --backing thp --compare --vcpus 1 --repeat 3 -o '"$OUT"'/camp/$(hostname)/mem128M-thp-compare-vcpus1-repeat3.json guest/guest.bin -- flat --max-mib 4$' "$OUT/campaign.txt"; then
	pass campaign-expands-matrix
else
	fail campaign-expands-matrix "$(head -3 "$OUT/campaign.txt") $(cat "$OUT/campaign.err")"
fi
# Each line runs through the cell runner, which skips a cell already done
# (make test-campaign runs the engines and proves the resume).
grep -q '^./scripts/campaign-cell '"$OUT"'/camp/$(hostname)/mem64M-anon-none-vcpus1-repeat3.json ./minivmm -q --mem 64M --backing anon --vcpus 1 ' \
	"$OUT/campaign.txt" && pass campaign-lines-use-cell-runner ||
	fail campaign-lines-use-cell-runner "$(head -1 "$OUT/campaign.txt")"
expect campaign-help 0 '' '^MATRIX is a text file' -- ./scripts/campaign --help
printf 'mem = 64M 256\n' >"$OUT/matrix-unit.txt"
expect campaign-mem-needs-unit 2 "matrix-unit.txt:1: mem '256' has no unit: minivmm would read it as 256 bytes; write 256M" '' -- \
	./scripts/campaign "$OUT/matrix-unit.txt"
printf 'mem = 64M\nrepeat = 1\n' >"$OUT/matrix-one.txt"
expect campaign-one-command 0 '^campaign: 1 command \(' '' -- ./scripts/campaign "$OUT/matrix-one.txt"
printf 'mem = 64M\nbogus = 1\n' >"$OUT/matrix-bad.txt"
expect campaign-bad-key 2 "matrix-bad.txt:2: unknown key 'bogus' \(keys:" '' -- ./scripts/campaign "$OUT/matrix-bad.txt"
printf 'mem = 64M\nbackings = anon\n' >"$OUT/matrix-typo.txt"
expect campaign-key-typo 2 "matrix-typo.txt:2: unknown key 'backings'; did you mean backing\?" '' -- \
	./scripts/campaign "$OUT/matrix-typo.txt"
# Every value is checked by minivmm itself (--dry-run) before a line is printed:
# a kind it does not have, a combination it refuses, a campaign eager value.
printf 'mem = 64M\nbacking = anon nonsense\n' >"$OUT/matrix-kind.txt"
expect campaign-refused-kind 2 "matrix-kind.txt:2: the cell mem=64M backing=nonsense .*: minivmm refuses it: --backing nonsense: kinds are anon, thp" '' -- \
	./scripts/campaign "$OUT/matrix-kind.txt"
[ -s "$OUT/campaign-refused-kind.out" ] && fail campaign-refused-prints-nothing "$(head -2 "$OUT/campaign-refused-kind.out")" ||
	pass campaign-refused-prints-nothing
printf 'mem = 1G 1536M\nbacking = hugetlb1g\n' >"$OUT/matrix-combo.txt"
expect campaign-refused-combination 2 "the cell mem=1536M backing=hugetlb1g .*multiple of its 1 GiB pages; write --mem 1G or --mem 2G" '' -- \
	./scripts/campaign "$OUT/matrix-combo.txt"
printf 'mem = 64M\neager = populate sideways\n' >"$OUT/matrix-eager.txt"
expect campaign-refused-eager 2 "matrix-eager.txt:2: .*eager=sideways.*--eager=sideways: strategies are .* \(or the campaign's own: none, compare\)" '' -- \
	./scripts/campaign "$OUT/matrix-eager.txt"
printf 'mem = 64M\neager = background none compare\n' >"$OUT/matrix-bg.txt"
expect campaign-takes-what-minivmm-takes 0 '^campaign: 3 commands' '' -- ./scripts/campaign "$OUT/matrix-bg.txt"
# Merge's inputs: a --compare --repeat file, a --repeat file (repeat.json, above)
# and a single run, all written here so the tier runs alone; small and quick.
expect merge-input-compare 0 '' '' -- \
	$MINIVMM -q --compare --repeat 3 --mem 16M -o "$OUT/merge-compare.json" $GUEST -- flat --max-mib 2 --iterations 1
expect merge-input-sweep 0 '' '' -- \
	$MINIVMM -q --mem 16M -o "$OUT/merge-sweep.json" $GUEST -- sweep --max-mib 2 --iterations 1
expect merge-results 0 '' 'csv: ' -- ./scripts/merge "$OUT/merge-compare.json" "$OUT/repeat.json" "$OUT/merge-sweep.json" --out "$OUT/merged"
[ "$(wc -l <"$OUT/merged.csv")" = 5 ] && grep -q '^host,kernel,cpu,kvm,paging' "$OUT/merged.csv" &&
	grep -Eq ',(populate|prefault),eager,3,' "$OUT/merged.csv" && pass merge-one-row-per-mode ||
	fail merge-one-row-per-mode "$(cat "$OUT/merged.csv")"
# A real CSV: every row as many fields as the header, read back by csv.DictReader.
python3 -c 'import csv, sys
rows = list(csv.reader(open(sys.argv[1], newline="")))
assert all(len(r) == len(rows[0]) for r in rows), [len(r) for r in rows]
d = list(csv.DictReader(open(sys.argv[1], newline="")))
assert {r["status"] for r in d} == {"ok"} and all(r["workload"] for r in d), d' "$OUT/merged.csv" 2>"$OUT/merge-csv.err" &&
	pass merge-csv-reads-back || fail merge-csv-reads-back "$(tail -3 "$OUT/merge-csv.err")"

# guest_entry is marked by whichever vCPU enters first, even when another ends the run at once.
expect every-vcpu-exits 0 '' '' -- \
	$MINIVMM -q --eager=populate --vcpus 2 --repeat 20 --warmup 0 --mem 16M -o "$OUT/exitall.json" tests/bin/exitall.bin
jq_true guest-entry-in-every-run "$OUT/exitall.json" \
	'[.runs[] | [.timeline[].phase] | index("guest_entry") != null] | all and length == 20'
