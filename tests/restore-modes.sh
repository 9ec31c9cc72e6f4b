# Tier "restore-modes": one snapshot restored every way on /dev/kvm (sourced by tests/run):
# each mode exits 0 with a first useful work and the guest's memory checksum as it was at
# the snapshot; uffd takes one fault per page touched; --compare ranks every mode; a mode
# the platform lacks is refused before anything runs. Small memory, counts only.
RM=$OUT/restore-modes
rm -rf "$RM"
mkdir -p "$RM"
SNAP=$RM/snap
# flat: its first pass before the snapshot (every page of it written), two after.
expect restore-modes-snapshot 0 '' '' -- \
	$MINIVMM -q --mem 64M --snapshot "$SNAP" -o "$RM/snap.json" $GUEST -- flat --max-mib 16 --iterations 3 --snapshot-after 1

# A restore that ran: exit 0, a first useful work after the guest resumed, the mode named;
# the guest compared its memory's checksum with the one it took before the snapshot (it
# exits non-zero on a mismatch) and printed both: they match.
restored_ok() {
	local name=$1 file=$2 mode=$3
	jq_true "$name-restored" "$file" \
		'.summary.first_useful_work_ms > 0 and .exit.status == 0 and .restore.mode == "'"$mode"'"
		 and ([.timeline[].phase] | index("guest_resumed") < index("first_useful_work"))'
	if grep -qE '^flat: memory checksum (0x[0-9a-f]+) before the snapshot, \1 after the restore: match$' "$OUT/$name.out"; then
		pass "$name-checksum"
	else
		fail "$name-checksum" "$(grep 'memory checksum' "$OUT/$name.out" || echo 'no checksum line')"
	fi
}

for m in copy private populate uffd background; do
	expect "restore-modes-$m" 0 '' '' -- $MINIVMM --restore "$SNAP" --restore-mode $m -o "$RM/$m.json"
	restored_ok "restore-modes-$m" "$RM/$m.json" $m
done
# populate says which path it took: KVM_PRE_FAULT_MEMORY where there is one, else populate only.
if grep -qE '^restore: populate: MADV_POPULATE_WRITE of 64 MiB .*(KVM_PRE_FAULT_MEMORY of 64 MiB|no KVM_PRE_FAULT_MEMORY on this KVM)' "$OUT/restore-modes-populate.out"; then
	pass restore-modes-populate-says
else
	fail restore-modes-populate-says "$(grep '^restore:' "$OUT/restore-modes-populate.out" || echo 'no restore: line')"
fi

# uffd: one handler fault per page touched, never twice: the first pass after the restore
# (flat's pass 2) writes its pages, each one fault (and a few of the guest's own pages).
jq_true restore-modes-uffd-one-fault-per-page "$RM/uffd.json" \
	'([.sweep[] | select(.iteration == 2 and .vcpu != "all") | .pages] | add) as $pages
	 | ([.paging.per_phase[] | select(.phase == "first_useful_work") | .faults] | add) as $f
	 | .paging.uffd_mode == "missing" and .paging.resolve_ioctl == "UFFDIO_COPY"
	 and .paging.faults == .paging.pages_touched and .paging.duplicates == 0
	 and $f >= $pages and $f <= $pages * 1.02 + 64
	 and ([.paging.histogram.buckets[].count] | add) == .paging.faults
	 and .paging.memory_file.data_bytes > 0 and .paging.memory_file.fill_pages == 0'
# background: the filler copied pages in beside the guest; no page was installed twice.
jq_true restore-modes-background-fills "$RM/background.json" \
	'.paging.memory_file.fill_pages > 0 and .paging.memory_file.fill_reads > 0
	 and .paging.faults == .paging.pages_touched
	 and .paging.memory_file.fill_pages + .paging.pages_touched <= 64 * 256'

# replay: the first records into the snapshot directory (a uffd restore), the second fetches
# that working set first: the recorded pages, and few faults after it.
rm -f "$SNAP/touch-order"
expect restore-modes-replay-records 0 '' '^restore: replay: no recording in ' -- \
	$MINIVMM --restore "$SNAP" --restore-mode replay -o "$RM/replay-1.json"
restored_ok restore-modes-replay-records "$RM/replay-1.json" replay
if [ -s "$SNAP/touch-order" ]; then pass restore-modes-replay-kept; else fail restore-modes-replay-kept "no $SNAP/touch-order"; fi
expect restore-modes-replay 0 '' '^restore: replay: [0-9]+ recorded pages .* fetched before resuming' -- \
	$MINIVMM --restore "$SNAP" --restore-mode replay -o "$RM/replay-2.json"
restored_ok restore-modes-replay "$RM/replay-2.json" replay
rec=$(jq '.paging.record_touch.pages // 0' "$RM/replay-1.json")
jq_true restore-modes-replay-fetched "$RM/replay-2.json" \
	".paging.memory_file.fill_working_set_pages == $rec and $rec > 4096 and .paging.faults < $rec / 10"
# The recording is one of the snapshot's files: read as it is, never through a
# link (a valid recording elsewhere, linked in, is refused before the guest runs).
mv "$SNAP/touch-order" "$RM/touch-order.elsewhere"
ln -s "$(realpath "$RM/touch-order.elsewhere")" "$SNAP/touch-order"
expect restore-modes-replay-link-refused 2 "replay's recording .*touch-order: a symbolic link" '' -- \
	$MINIVMM -q --restore "$SNAP" --restore-mode replay -o "$RM/replay-link.json"
rm -f "$SNAP/touch-order"
mv "$RM/touch-order.elsewhere" "$SNAP/touch-order"

# minor: on tmpfs it restores (the snapshot's file untouched by the guest's writes);
# elsewhere it is refused (exit 3) before the guest runs.
if [ "$(stat -f -c %T "$SNAP")" != tmpfs ]; then
	expect restore-modes-minor-refused 3 'needs the memory file on tmpfs or hugetlbfs' '' -- \
		$MINIVMM -q --restore "$SNAP" --restore-mode minor -o "$RM/minor-refused.json"
	if grep -q 'first_useful_work' "$RM/minor-refused.json" 2>/dev/null; then
		fail restore-modes-minor-refused-early "the guest ran before the refusal"
	else
		pass restore-modes-minor-refused-early
	fi
fi
SHM=/dev/shm/minivmm-test-$$
if [ -d /dev/shm ] && cp -r "$SNAP" "$SHM" 2>/dev/null; then
	expect restore-modes-minor 0 '' '' -- $MINIVMM --restore "$SHM" --restore-mode minor -o "$RM/minor.json"
	restored_ok restore-modes-minor "$RM/minor.json" minor
	jq_true restore-modes-minor-continue "$RM/minor.json" \
		'.paging.uffd_mode == "minor" and .paging.resolve_ioctl == "UFFDIO_CONTINUE" and .paging.faults > 0
		 and .paging.faults == .paging.pages_touched'
	if cmp -s "$SNAP/memory" "$SHM/memory"; then
		pass restore-modes-minor-file-untouched
	else
		fail restore-modes-minor-file-untouched "the guest's writes reached the memory file"
	fi
	rm -rf "$SHM"
else
	skip restore-modes-minor "no /dev/shm to copy the snapshot to"
fi

# --compare ranks every mode it ran (cold page cache, said so), the recording not among them.
rm -f "$SNAP/touch-order"
expect restore-modes-compare 0 '' 'page cache of .*: dropped \(POSIX_FADV_DONTNEED\)' -- \
	$MINIVMM --restore "$SNAP" --compare=copy,private,uffd,replay --repeat 1 -o "$RM/compare.json"
jq_true restore-modes-compare-ranks "$RM/compare.json" \
	'([.verdict.ranking[].mode] | sort) == ["copy", "private", "replay", "uffd"]
	 and all(.verdict.ranking[]; .restore_latency_ms.median > 0 and .first_useful_work_ms.median > .restore_latency_ms.median)
	 and .runs[0].label == "record" and .runs[0].warmup and (.runs | length) == 5'
if grep -qE '^    1\. .*restore latency .* ms \(exec to guest resumed\)' "$OUT/restore-modes-compare.out"; then
	pass restore-modes-compare-verdict-printed
else
	fail restore-modes-compare-verdict-printed "no ranking with restore latency in the output"
fi
# A mode the list does not know, and --restore-mode beside --compare: usage errors.
expect restore-modes-compare-bad-mode 2 "no restore mode 'cpy' \(did you mean copy\?\)" '' -- \
	$MINIVMM --restore "$SNAP" --compare=cpy,uffd
expect restore-modes-compare-and-mode 2 'leave out --restore-mode' '' -- \
	$MINIVMM --restore "$SNAP" --compare=copy,uffd --restore-mode uffd
# Cold means cold: before every run (after a uffd or replay run too, whose source mapping
# is gone by then) the memory file's page cache is all but empty.
cached=$(sed -n 's/^  page cache of .*: dropped (POSIX_FADV_DONTNEED); \([0-9.]*\) MiB of it cached now (mincore)$/\1/p' "$OUT/restore-modes-compare.out")
if [ "$(echo "$cached" | wc -l)" = 5 ] && echo "$cached" | awk '$1 > 2 { bad = 1 } END { exit bad }'; then
	pass restore-modes-compare-cold
else
	fail restore-modes-compare-cold "MiB cached before each run: $(echo $cached)"
fi
