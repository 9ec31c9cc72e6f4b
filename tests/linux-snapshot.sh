# Tier "linux-snapshot" (issue 39): a Linux guest (--kernel, Debian's kernel and
# the initramfs of guest/linux/) saved where its flat asks (--snapshot-after 1),
# then restored with copy, private and populate: the kernel resumes, the passes
# after the snapshot run and are measured, flat's memory checksum matches, its
# clock moved forward across the snapshot, /init powers off with flat's status;
# then by userfaultfd (uffd, background, replay recording then replaying, minor
# on tmpfs); --compare ranks copy, private, uffd and replay. tests/run runs this tier in an emulated host of one CPU: with two,
# QEMU's round-robin kick re-delivers an interrupt KVM injected, and the guest
# panics now and then (docs/guide.md). An SMP guest too; what does not fit the snapshot (another
# kernel, initrd or command line, fewer vCPUs, --kernel for a minivmm guest's)
# is refused with one message. Two clones restore it at once (--clones 2).
# Sourced by tests/run; needs make linux-guest.
LS=$OUT/linux-snapshot
rm -rf "$LS"
mkdir -p "$LS"
# The snapshots on tmpfs where there is one: sparse (9p, $OUT in the emulated host,
# has no SEEK_HOLE) and what --restore-mode minor needs.
if [ -d /dev/shm ] && LSD=$(mktemp -d /dev/shm/minivmm-lsnap-XXXXXX 2>/dev/null); then :; else LSD=$LS/snap; mkdir -p "$LSD"; fi
K="--kernel build/linux/vmlinuz --initrd build/linux/initrd.cpio.gz"
FLAT="flat --max-mib 8 --iterations 3"
T="--timeout 300" # a boot in the emulated host takes 15-35 s
CASE_TIMEOUT=330

# A restore that ran: exit 0, the mode named, pass 1 saved; a first useful work after
# the guest resumed; passes 2 and 3 measured after the restore (4 sizes each, touched);
# flat printed its checksum before and after: the same.
lx_restored_ok() {
	local name=$1 file=$2 mode=$3
	jq_true "$name-results" "$file" \
		'.exit.status == 0 and .exit.reason == "guest-exit" and .restore.mode == "'"$mode"'" and .restore.pass == 1
		 and .summary.first_useful_work_ms > 0
		 and ([.timeline[].phase] | index("guest_resumed") < index("first_useful_work"))
		 and ([.sweep[] | select(.iteration >= 2 and .touch_s > 0)] | length) == 8
		 and ([.sweep[] | .iteration] | unique) == [1,2,3]'
	if grep -qE '^flat: memory checksum (0x[0-9a-f]+) before the snapshot, \1 after the restore: match$' "$OUT/$name.out"; then
		pass "$name-checksum"
	else
		fail "$name-checksum" "$(grep -E 'memory checksum' "$OUT/$name.out" || echo 'no checksum line')"
	fi
	# The guest's clock across the snapshot (its TSC and kvmclock restored): forward, and by
	# less than the run took; a clock that restarted at 0 stands still (Linux clamps it) or goes back.
	local moved
	moved=$(sed -nE 's/^flat: restored after pass 1; CLOCK_MONOTONIC moved ([-+][0-9.]+) s across the snapshot$/\1/p' "$OUT/$name.out")
	if [ -n "$moved" ] && awk -v m="$moved" 'BEGIN { exit !(m > 0 && m < 300) }'; then
		pass "$name-clock"
	else
		fail "$name-clock" "$(grep 'restored after' "$OUT/$name.out" || echo 'no restored line')"
	fi
}

if [ ! -f build/linux/vmlinuz ] || [ ! -f build/linux/initrd.cpio.gz ]; then
	skip linux-snapshot "no build/linux/vmlinuz or initrd.cpio.gz (make linux-guest)"
else
	expect lsnap-save 0 '' '^snapshot: .*S1 written in ' -- \
		$MINIVMM $T --mem 128M --snapshot "$LSD/S1" -o "$LS/save.json" $K -- $FLAT --snapshot-after 1
	jq_true lsnap-save-results "$LS/save.json" \
		'.exit.reason == "snapshot" and .snapshot.taken and .snapshot.pass == 1 and .snapshot.data_bytes > 0
		 and ([.sweep[] | .iteration] | unique) == [1]'
	# populate last: its read faults on the tmpfs file's holes allocate them (zeros), and a
	# restore after it would read 128 MiB of "data" instead of the guest's.
	# The userfaultfd modes before it too (minor maps the file: only on tmpfs).
	modes="copy private uffd background"
	case $LSD in /dev/shm/*) modes+=" minor" ;; *) skip lsnap-restore-minor "the snapshot is not on tmpfs" ;; esac
	for m in $modes; do
		expect lsnap-restore-$m 0 '' '' -- $MINIVMM $T --restore "$LSD/S1" --restore-mode $m -o "$LS/$m.json"
		lx_restored_ok lsnap-restore-$m "$LS/$m.json" $m
	done
	# Each userfaultfd mode resolved the kernel's first touches itself; uffd one fault per page.
	for m in ${modes#copy private }; do
		jq_true lsnap-$m-faults "$LS/$m.json" '.paging.faults > 100'
	done
	jq_true lsnap-uffd-fault-per-page "$LS/uffd.json" '.paging.faults == .paging.pages_touched'
	# replay: the first records the kernel's working set, the second fetches it before resuming.
	expect lsnap-replay-records 0 '' '^restore: replay: no recording in ' -- \
		$MINIVMM $T --restore "$LSD/S1" --restore-mode replay -o "$LS/replay-1.json"
	lx_restored_ok lsnap-replay-records "$LS/replay-1.json" replay
	expect lsnap-replay 0 '' '^restore: replay: [0-9]+ recorded pages .* fetched before resuming' -- \
		$MINIVMM $T --restore "$LSD/S1" --restore-mode replay -o "$LS/replay-2.json"
	lx_restored_ok lsnap-replay "$LS/replay-2.json" replay
	rm -f "$LSD/S1/touch-order"
	# --compare ranks the modes for the Linux guest too (its first run records replay's set).
	expect lsnap-compare 0 '' '' -- \
		$MINIVMM $T --restore "$LSD/S1" --compare=copy,private,uffd,replay --repeat 1 -o "$LS/compare.json"
	jq_true lsnap-compare-ranks "$LS/compare.json" \
		'([.verdict.ranking[].mode] | sort) == ["copy", "private", "replay", "uffd"]
		 and all(.verdict.ranking[]; .restore_latency_ms.median > 0 and .first_useful_work_ms.median > .restore_latency_ms.median)
		 and all(.runs[]; .exit.status == 0)'
	rm -f "$LSD/S1/touch-order"
	expect lsnap-restore-populate 0 '' '' -- $MINIVMM $T --restore "$LSD/S1" --restore-mode populate -o "$LS/populate.json"
	lx_restored_ok lsnap-restore-populate "$LS/populate.json" populate
	# KVM's counters: where KVM has KVM_PRE_FAULT_MEMORY, populate's first pass after the
	# restore takes no second-level fault; copy's takes one per page it touches first.
	if jq -e '.platform.pre_fault_memory' "$LS/populate.json" >/dev/null 2>&1; then
		jq_true lsnap-populate-no-npt-faults "$LS/populate.json" \
			'[.timeline[] | select(.phase == "first_useful_work") | .stats.pf_taken] == [0]'
		jq_true lsnap-copy-npt-faults "$LS/copy.json" \
			'[.timeline[] | select(.phase == "first_useful_work") | .stats.pf_taken][0] > 1000'
	else
		skip lsnap-populate-no-npt-faults "no KVM_PRE_FAULT_MEMORY on this KVM"
	fi
	# Two clones of the Linux snapshot at once (--clones, tier clones for the rest): each
	# resumes the kernel, runs the passes after the snapshot, and its checksum matches.
	expect lsnap-clones-private 0 '' '^first useful work .*, of 2 clones: p50 ' -- \
		$MINIVMM $T --restore "$LSD/S1" --restore-mode private --clones 2 -o "$LS/clones.json"
	n=0
	for k in 0 1; do
		grep -qE '^flat: memory checksum (0x[0-9a-f]+) before the snapshot, \1 after the restore: match$' \
			"$LS/clones.clones/clone-$k.log" && n=$((n + 1))
	done
	[ $n = 2 ] && pass lsnap-clones-checksums || fail lsnap-clones-checksums "$n of 2 clones' logs say match"
	jq_true lsnap-clones-results "$LS/clones.json" '.clones.finished == 2 and .exit.status == 0'
	# The restored run says so, not that /init never started.
	grep -q '^linux guest .*: restored from ' "$OUT/lsnap-restore-copy.out" && pass lsnap-restored-line ||
		fail lsnap-restored-line "$(grep '^linux guest' "$OUT/lsnap-restore-copy.out")"

	# Bad input: what the snapshot's RAM was not built by, one message each (exit 2), before KVM.
	cp build/linux/vmlinuz "$LSD/other-vmlinuz"
	printf '\x5a' | dd of="$LSD/other-vmlinuz" bs=1 seek=$((4 << 20)) conv=notrunc status=none
	expect lsnap-other-kernel 2 'the snapshot.s Linux guest booted kernel build/linux/vmlinuz \([0-9]+ bytes\).*this kernel is not the one it booted' '' -- \
		$MINIVMM --restore "$LSD/S1" --kernel "$LSD/other-vmlinuz"
	{ cat build/linux/initrd.cpio.gz; printf 'x'; } >"$LSD/other-initrd"
	expect lsnap-other-initrd 2 'this initrd is not the one it booted' '' -- \
		$MINIVMM --restore "$LSD/S1" --kernel build/linux/vmlinuz --initrd "$LSD/other-initrd"
	expect lsnap-other-cmdline 2 'this command line is not the one it booted' '' -- \
		$MINIVMM --restore "$LSD/S1" --kernel build/linux/vmlinuz --cmdline "console=ttyS0"
	expect lsnap-restore-args 2 '--restore .* takes no guest arguments' '' -- \
		$MINIVMM --restore "$LSD/S1" --kernel build/linux/vmlinuz -- hello
	expect lsnap-kernel-for-minivmm-guest-setup 0 '' '' -- \
		$MINIVMM -q --mem 32M --snapshot "$LSD/G" "$GUEST" -- flat --max-mib 2 --iterations 2 --snapshot-after 1
	expect lsnap-kernel-for-minivmm-guest 2 'the snapshot is of the minivmm guest .*, not of a Linux guest: leave out --kernel' '' -- \
		$MINIVMM --restore "$LSD/G" --kernel build/linux/vmlinuz

	# SMP: two vCPUs saved (the second idle in Linux), restored on two; one is refused.
	expect lsnap-smp-save 0 '' '' -- \
		$MINIVMM -q $T --vcpus 2 --mem 128M --snapshot "$LSD/S2" -o "$LS/smp-save.json" $K -- $FLAT --snapshot-after 1
	expect lsnap-smp-fewer-vcpus 2 'the snapshot is of 128 MiB of RAM, 2 vCPUs.*--vcpus says otherwise' '' -- \
		$MINIVMM --restore "$LSD/S2" --vcpus 1
	for m in copy private; do
		expect lsnap-smp-restore-$m 0 '' '' -- $MINIVMM $T --restore "$LSD/S2" --restore-mode $m -o "$LS/smp-$m.json"
		lx_restored_ok lsnap-smp-restore-$m "$LS/smp-$m.json" $m
	done
	jq_true lsnap-smp-vcpus "$LS/smp-copy.json" '.config.vcpus == 2'
fi
rm -rf "$LSD"
