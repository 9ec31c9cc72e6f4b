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

# The guest's checksum of its memory after the restore is the one it took before the snapshot.
restored_ok() {
	jq_true "$1-restored" "$2" \
		'.summary.first_useful_work_ms > 0 and .exit.status == 0
		 and .restore.checksum.before != null and .restore.checksum.before == .restore.checksum.after'
}

for m in copy private populate uffd background; do
	expect "restore-modes-$m" 0 '' '' -- $MINIVMM -q --restore "$SNAP" --restore-mode $m -o "$RM/$m.json"
	restored_ok "restore-modes-$m" "$RM/$m.json"
done
# populate says which path it took: KVM_PRE_FAULT_MEMORY where there is one, else populate only.
expect restore-modes-populate-says 0 '' '^restore: populate: MADV_POPULATE_WRITE of 64 MiB .*(KVM_PRE_FAULT_MEMORY of 64 MiB|no KVM_PRE_FAULT_MEMORY on this KVM)' -- \
	$MINIVMM --restore "$SNAP" --restore-mode populate -o "$RM/populate-says.json"

# uffd: one handler fault per page touched, never twice; the flat passes after the restore
# touch its 4096 pages (and a few of the guest's own); holes and data alike.
jq_true restore-modes-uffd-one-fault-per-page "$RM/uffd.json" \
	'.paging.uffd_mode == "missing" and .paging.faults == .paging.pages_touched
	 and .paging.duplicates == 0 and .paging.faults >= 4096 and .paging.faults <= 4096 * 1.1 + 256
	 and ([.paging.histogram.buckets[].count] | add) == .paging.faults
	 and .paging.memory_file.data_bytes > 0'
# background: the filler and the handlers between them installed every page once.
jq_true restore-modes-background-fills "$RM/background.json" \
	'.paging.memory_file.fill_pages + .paging.pages_touched >= (64 * 256) * 0.99
	 and .paging.memory_file.fill_pages > 0'

# replay: the first records into the snapshot directory (a uffd restore), the second fetches
# that working set first: fewer faults than the recording's, every one of them.
rm -f "$SNAP/touch-order"
expect restore-modes-replay-records 0 '' '^restore: replay: no recording in ' -- \
	$MINIVMM --restore "$SNAP" --restore-mode replay -o "$RM/replay-1.json"
restored_ok restore-modes-replay-records "$RM/replay-1.json"
if [ -s "$SNAP/touch-order" ]; then pass restore-modes-replay-kept; else fail restore-modes-replay-kept "no $SNAP/touch-order"; fi
expect restore-modes-replay 0 '' '^restore: replay: [0-9]+ recorded pages .* fetched before resuming' -- \
	$MINIVMM --restore "$SNAP" --restore-mode replay -o "$RM/replay-2.json"
restored_ok restore-modes-replay "$RM/replay-2.json"
jq_true restore-modes-replay-fetched "$RM/replay-2.json" \
	'.paging.memory_file.fill_working_set_pages > 4096 and .paging.faults < .paging.memory_file.fill_working_set_pages / 10'

# minor: on tmpfs it restores; elsewhere it is refused (exit 3) before the guest runs.
if [ "$(stat -f -c %T "$SNAP")" != tmpfs ]; then
	expect restore-modes-minor-refused 3 'not on tmpfs or hugetlbfs|must be on tmpfs or hugetlbfs' '' -- \
		$MINIVMM -q --restore "$SNAP" --restore-mode minor -o "$RM/minor-refused.json"
fi
SHM=/dev/shm/minivmm-test-$$
if [ -d /dev/shm ] && cp -r "$SNAP" "$SHM" 2>/dev/null; then
	expect restore-modes-minor 0 '' '' -- $MINIVMM -q --restore "$SHM" --restore-mode minor -o "$RM/minor.json"
	restored_ok restore-modes-minor "$RM/minor.json"
	jq_true restore-modes-minor-continue "$RM/minor.json" \
		'.paging.uffd_mode == "minor" and .paging.resolve_ioctl == "UFFDIO_CONTINUE" and .paging.faults > 0'
	rm -rf "$SHM"
else
	skip restore-modes-minor "no /dev/shm to copy the snapshot to"
fi

# --compare ranks every mode it ran (cold page cache, said so), the recording not among them.
expect restore-modes-compare 0 '' 'POSIX_FADV_DONTNEED' -- \
	$MINIVMM --restore "$SNAP" --compare=copy,private,uffd,replay --repeat 1 -o "$RM/compare.json"
jq_true restore-modes-compare-ranks "$RM/compare.json" \
	'[.verdict.ranking[].mode] | sort == ["copy", "private", "replay", "uffd"]'
