# Tier "uffd": --paging uffd on /dev/kvm: guest RAM's first touches resolved and timed by
# minivmm's userfaultfd handlers (sourced by tests/run). Small memory, counts and bounds only.
F="flat --max-mib 16 --iterations 2"

# The pages the flat workload's first pass wrote (its iteration-1 records), from a results file.
flat_pages() { jq '[.sweep[] | select(.iteration == 1 and .vcpu != "all") | .pages] | add' "$1"; }
# Faults the handlers resolved in timeline phase $2.
phase_faults() { jq --arg p "$2" '[.paging.per_phase[] | select(.phase == $p) | .faults] | add // 0' "$1"; }
# The counts agree: histogram, phases and threads each sum to the faults; every fault a first touch.
sums_agree() {
	jq_true "$1-sums" "$2" '.paging as $p | $p.faults > 0
	 and ([$p.histogram.buckets[].count] | add) == $p.faults
	 and ([$p.per_phase[].faults] | add) == $p.faults
	 and ([$p.per_thread[].faults] | add) == $p.faults
	 and $p.pages_touched == $p.faults and $p.bytes == $p.faults * $p.page_bytes
	 and $p.latency_ns.p50 <= $p.latency_ns.p90 and $p.latency_ns.p90 <= $p.latency_ns.p99
	 and $p.latency_ns.p99 <= $p.latency_ns.max'
}
# first_useful_work's faults are the first pass's pages and a few of the workload's own
# (records, stack): within 2% + 32. The warm pass (workload_end) takes none.
first_pass_faults() {
	local name=$1 file=$2 pages faults warm
	pages=$(flat_pages "$file")
	faults=$(phase_faults "$file" first_useful_work)
	warm=$(phase_faults "$file" workload_end)
	if [ "$faults" -ge "$pages" ] && [ "$faults" -le $((pages + pages / 50 + 32)) ] && [ "$warm" = 0 ]; then
		pass "$name-faults-are-pages"
	else
		fail "$name-faults-are-pages" "first pass: $faults faults for $pages pages; warm pass: $warm faults"
	fi
}

# uffd demand paging (MISSING, UFFDIO_COPY), one vCPU, under the default sandbox.
expect uffd-demand 0 '' '^paging: uffd missing, UFFDIO_COPY .*1 handler thread: [0-9]+ faults .*p50 .* faults/s' -- \
	$MINIVMM --mem 64M --paging uffd -o "$OUT/uffd-demand.json" $GUEST -- $F
jq_true uffd-demand-json "$OUT/uffd-demand.json" \
	'.config.paging == "uffd" and .paging.mode == "uffd" and .paging.uffd_mode == "missing"
	 and .paging.resolve_ioctl == "UFFDIO_COPY" and .paging.threads == 1 and .paging.started
	 and .paging.resident_at_start_bytes > 0 and .paging.delay_us == 0'
sums_agree uffd-demand "$OUT/uffd-demand.json"
# The printed histogram: one row per octave, its counts those of the file's, all faults.
hist_rows=$(awk '/^paging: latency of each fault/ { on = 1; getline; next }
	on && /^  \[/ { n++; split($0, a, ")"); split(a[2], c, " "); sum += c[1] }
	on && !/^  \[/ { on = 0 }
	END { print n + 0, sum + 0 }' "$OUT/uffd-demand.out")
want=$(jq -r '"\(.paging.histogram.buckets | length) \(.paging.faults)"' "$OUT/uffd-demand.json")
if [ "${hist_rows%% *}" -ge "${want%% *}" ] && [ "${hist_rows#* }" = "${want#* }" ]; then
	pass uffd-demand-histogram-printed
else
	fail uffd-demand-histogram-printed "rows and sum printed: $hist_rows; octaves and faults in the file: $want"
fi
first_pass_faults uffd-demand "$OUT/uffd-demand.json"
# KVM's own count of the first pass's faults agrees (every page one fault, both ways).
jq_true uffd-demand-beside-kvm "$OUT/uffd-demand.json" \
	'[.paging.per_phase[] | select(.phase == "first_useful_work")][0] as $f
	 | $f.kvm_pf_taken >= $f.faults * 0.9 and $f.kvm_pf_taken <= $f.faults * 1.1'
# The default stays the kernel's, with no handler in sight.
expect uffd-kernel-default 0 '' '' -- $MINIVMM -q --mem 64M -o "$OUT/uffd-kernel.json" $GUEST -- flat --max-mib 2 --iterations 1
jq_true uffd-kernel-default-json "$OUT/uffd-kernel.json" '.paging == {"mode": "kernel"} and .config.paging == "kernel"'
if grep -q '^paging:' "$OUT/uffd-kernel-default.out"; then
	fail uffd-kernel-no-summary "a kernel-paged run printed a paging line"
else
	pass uffd-kernel-no-summary
fi

# Two vCPUs touching at once (--parallel): two handlers, one slice each.
expect uffd-vcpus2 0 '' '2 handler threads' -- \
	$MINIVMM --mem 128M --vcpus 2 --paging uffd -o "$OUT/uffd-vcpus2.json" $GUEST -- $F --parallel
jq_true uffd-vcpus2-threads "$OUT/uffd-vcpus2.json" \
	'.paging.threads == 2 and (.paging.per_thread | length == 2) and .paging.per_thread[1].gpa == .config.mem_bytes / 2'
sums_agree uffd-vcpus2 "$OUT/uffd-vcpus2.json"
first_pass_faults uffd-vcpus2 "$OUT/uffd-vcpus2.json"

# Injected latency: every resolution waits at least N us after its event.
expect uffd-delay 0 '' 'each fault delayed 100 us' -- \
	$MINIVMM --mem 64M --paging uffd --uffd-delay-us 100 -o "$OUT/uffd-delay.json" $GUEST -- flat --max-mib 4 --iterations 1
jq_true uffd-delay-lower-bound "$OUT/uffd-delay.json" \
	'.paging.delay_us == 100 and .paging.latency_ns.min >= 100000 and .paging.latency_ns.p50 >= 100000'
# Against the undelayed run: the delay dominates its median (a ratio, not a time).
d50=$(jq .paging.latency_ns.p50 "$OUT/uffd-delay.json")
u50=$(jq .paging.latency_ns.p50 "$OUT/uffd-demand.json")
if [ "$d50" -gt "$u50" ]; then pass uffd-delay-above-undelayed; else fail uffd-delay-above-undelayed "p50 $d50 ns delayed, $u50 ns not"; fi

# The first-touch record: one line per first touch, unique, in RAM, as many as the faults.
rec=$OUT/uffd-touch.txt
expect uffd-record 0 '' "paging: .*uffd-touch.txt: wrote [0-9]+ pages in first-touch order" -- \
	$MINIVMM --mem 64M --paging uffd --record-touch "$rec" -o "$OUT/uffd-record.json" $GUEST -- $F
pages=$(jq .paging.pages_touched "$OUT/uffd-record.json")
head -1 "$rec" | grep -q "^minivmm-touch-order 1 ram_bytes=67108864 page_bytes=4096 pages=$pages clock=ns_since_exec" &&
	pass uffd-record-header || fail uffd-record-header "$(head -1 "$rec") (faults: $pages)"
body=$(sed '1d;$d' "$rec")
n=$(echo "$body" | grep -c .)
uniq=$(echo "$body" | awk '{ print $1 }' | sort -u | grep -c .)
bad=$(echo "$body" | perl -ne 'print unless /^0x([0-9a-f]+) [0-9]+$/ && hex($1) % 4096 == 0 && hex($1) < 67108864' | head -3)
if [ "$n" = "$pages" ] && [ "$uniq" = "$n" ] && [ -z "$bad" ] && [ "$(tail -1 "$rec")" = "end $pages" ]; then
	pass uffd-record-pages
else
	fail uffd-record-pages "$n lines, $uniq distinct, $pages faults, bad: $bad, last: $(tail -1 "$rec")"
fi
jq_true uffd-record-json "$OUT/uffd-record.json" '.paging.record_touch.pages == .paging.pages_touched'
# Its times never go backwards.
echo "$body" | awk '$2 < last { bad = 1 } { last = $2 } END { exit bad }' &&
	pass uffd-record-in-time-order || fail uffd-record-in-time-order "a time goes backwards"
# Read back as a replay would: the file checks out; damage or another --mem is exit 2.
expect uffd-check-touch 0 '' "pages of 4 KiB in [0-9]+ ranges .* 64 MiB of guest RAM: ok" -- \
	$MINIVMM --check-touch "$rec" --mem 64M
head -n 100 "$rec" >"$OUT/uffd-touch-truncated.txt"
expect uffd-check-touch-truncated 2 'truncated: 99 of the' '' -- \
	$MINIVMM --check-touch "$OUT/uffd-touch-truncated.txt" --mem 64M
expect uffd-check-touch-mismatched 2 "recorded with 64 MiB of guest RAM, more than this run's 32 MiB" '' -- \
	$MINIVMM --check-touch "$rec" --mem 32M
expect uffd-check-touch-smaller 0 '' "for 64 MiB of guest RAM, in this run's 128 MiB: ok" -- \
	$MINIVMM --check-touch "$rec" --mem 128M
{ sed -n 1p "$rec"; sed -n 2p "$rec"; sed -n 2p "$rec"; sed -n '4,$p' "$rec"; } >"$OUT/uffd-touch-dup.txt"
expect uffd-check-touch-duplicate 2 'appears twice' '' -- $MINIVMM --check-touch "$OUT/uffd-touch-dup.txt" --mem 64M
expect uffd-check-touch-missing 2 'No such file' '' -- $MINIVMM --check-touch "$OUT/nonexistent.txt" --mem 64M

# memfd: MINOR mode, page cache filled up front, UFFDIO_CONTINUE.
expect uffd-memfd 0 '' '^paging: uffd minor, UFFDIO_CONTINUE' -- \
	$MINIVMM --mem 64M --backing memfd --paging uffd -o "$OUT/uffd-memfd.json" $GUEST -- $F
jq_true uffd-memfd-json "$OUT/uffd-memfd.json" \
	'.paging.uffd_mode == "minor" and .paging.resolve_ioctl == "UFFDIO_CONTINUE" and .paging.page_cache_fill_s > 0'
sums_agree uffd-memfd "$OUT/uffd-memfd.json"
first_pass_faults uffd-memfd "$OUT/uffd-memfd.json"

# --eager=touch under uffd: the guest writes every page (but page 0), each one a fault or loaded.
expect uffd-eager-touch 0 '' '' -- \
	$MINIVMM -q --mem 32M --vcpus 2 --eager=touch --paging uffd -o "$OUT/uffd-eager-touch.json" $GUEST -- hello
jq_true uffd-eager-touch-every-page "$OUT/uffd-eager-touch.json" \
	'.paging.faults + .paging.resident_at_start_bytes / 4096 >= .eager.pages and .paging.faults <= .config.mem_bytes / 4096'

# hugetlb2m: MISSING with UFFDIO_COPY of whole 2 MiB pages (the pool grown for it, then restored).
H=/sys/kernel/mm/hugepages/hugepages-2048kB
if [ "$(id -u)" != 0 ] || [ ! -w "$H/nr_hugepages" ]; then
	skip uffd-hugetlb2m "needs root and $H"
else
	old=$(cat "$H/nr_hugepages")
	echo $((old + 32)) >"$H/nr_hugepages" 2>/dev/null
	if [ "$(cat "$H/nr_hugepages")" -lt $((old + 32)) ]; then
		skip uffd-hugetlb2m "the kernel gave fewer than 32 huge pages"
	else
		expect uffd-hugetlb2m 0 '' '^paging: uffd missing, UFFDIO_COPY' -- \
			$MINIVMM --mem 64M --backing hugetlb2m --paging uffd -o "$OUT/uffd-hugetlb2m.json" $GUEST -- $F
		# 31 MiB of flat touches lie in 16-17 huge pages; the firmware's in a few more.
		jq_true uffd-hugetlb2m-pages "$OUT/uffd-hugetlb2m.json" \
			'.paging.page_bytes == 2097152 and .paging.faults >= 16 and .paging.faults <= 32'
	fi
	echo "$old" >"$H/nr_hugepages"
fi

# What cannot work is refused before the guest runs, naming the problem.
expect uffd-thp-refused 3 '--backing thp: userfaultfd installs .* use --backing anon' '' -- \
	$MINIVMM --mem 64M --backing thp --paging uffd $GUEST -- hello
expect uffd-threads-needs-uffd 2 '--uffd-threads and --uffd-delay-us need --paging uffd' '' -- \
	$MINIVMM --uffd-threads 2 $GUEST -- hello
expect uffd-delay-needs-uffd 2 '--uffd-threads and --uffd-delay-us need --paging uffd' '' -- \
	$MINIVMM --uffd-delay-us 0 $GUEST -- hello
expect uffd-record-needs-uffd 2 '--record-touch needs --paging uffd' '' -- \
	$MINIVMM --record-touch "$OUT/never.txt" $GUEST -- hello
expect uffd-eager-populate-refused 2 '--eager=populate backs guest RAM before the guest runs' '' -- \
	$MINIVMM --paging uffd --eager=populate $GUEST -- hello
expect uffd-compare-refused 2 '--compare .* does not take --paging uffd' '' -- \
	$MINIVMM --paging uffd --compare $GUEST -- hello
expect uffd-too-many-threads 2 '--uffd-threads 9: guest RAM has only 4 slices of 2 MiB' '' -- \
	$MINIVMM --mem 8M --paging uffd --uffd-threads 9 $GUEST -- hello
expect uffd-bad-mode 2 '--paging sideways: kinds are kernel, uffd' '' -- $MINIVMM --paging sideways $GUEST
expect uffd-record-unwritable 2 '--record-touch /nonexistent/x.txt: no directory /nonexistent \(make it first: mkdir -p /nonexistent\)' '' -- \
	$MINIVMM --mem 16M --paging uffd --record-touch /nonexistent/x.txt $GUEST -- hello

# A process that may not have a userfaultfd KVM can use (vm.unprivileged_userfaultfd = 0,
# /dev/userfaultfd root's): exit 3 with both ways to allow it, before KVM is opened.
if [ "$(cat /proc/sys/vm/unprivileged_userfaultfd 2>/dev/null)" != 0 ]; then
	skip uffd-unprivileged "vm.unprivileged_userfaultfd is not 0 here"
elif ! setpriv --reuid=65534 --regid=65534 --clear-groups test -r "$GUEST" -a -x "$MINIVMM" 2>/dev/null; then
	skip uffd-unprivileged "user 65534 cannot run $MINIVMM here"
elif setpriv --reuid=65534 --regid=65534 --clear-groups test -w /dev/userfaultfd 2>/dev/null; then
	skip uffd-unprivileged "/dev/userfaultfd is writable by user 65534"
else
	expect uffd-unprivileged 3 'userfaultfd\(2\) refused \(EPERM: vm.unprivileged_userfaultfd = 0.*sysctl vm.unprivileged_userfaultfd=1' '' -- \
		setpriv --reuid=65534 --regid=65534 --clear-groups $MINIVMM --mem 16M --paging uffd $GUEST -- hello
fi

# A guest stalled in slow faults still ends on --timeout (the kick reaches a vCPU waiting in one).
expect uffd-timeout 5 'still running after --timeout 1 s' '' -- \
	$MINIVMM -q --mem 64M --paging uffd --uffd-delay-us 2000 --timeout 1 $GUEST -- $F

# Runs one after another: each run's handlers, uffds and eventfd are gone before the next
# (the last run's main thread is sandboxed and closes nothing of the earlier ones').
expect uffd-repeat 0 '' '' -- \
	$MINIVMM -q --repeat 2 --paging uffd --mem 64M -o "$OUT/uffd-repeat.json" $GUEST -- flat --max-mib 4 --iterations 1
jq_true uffd-repeat-no-leaks "$OUT/uffd-repeat.json" \
	'(.resources.fds | unique | length == 1) and (.resources.threads | unique | length == 1)
	 and ([.runs[].paging.faults > 0] | all) and (.runs | length == 3)'
