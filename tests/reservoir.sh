# Tier "reservoir": guest RAM in files (--mem-path) on tmpfs and hugetlbfs,
# the pre-zeroed reservoir (scripts/reservoir, --reservoir) and the roofline
# (build/bench/roofline, --roofline), on /dev/kvm with real guests. Sourced
# by tests/run. Every mount, hugetlb page and process it makes is undone at
# its end, and by an EXIT trap if it stops half-way.
case $OUT in /*) RV=$OUT/reservoir ;; *) RV=$PWD/$OUT/reservoir ;; esac
RES=scripts/reservoir
POOL2M=/sys/kernel/mm/hugepages/hugepages-2048kB
RAW="$MINIVMM --raw --mem 32M"
rv_added=0     # 2 MiB pages this tier added to the pool
rv_bg=""       # background minivmm pids
rv_mounts=""   # mount points, last first

rv_cleanup() {
	local p m
	for p in $rv_bg; do kill -9 "$p" 2>/dev/null; done
	for p in $rv_bg; do timeout 10 tail --pid="$p" -f /dev/null; done
	rv_bg=""
	for d in "$RV/res2m" "$RV/res4k"; do
		grep -q " $d " /proc/mounts 2>/dev/null && $RES destroy --dir "$d" --wait 30 >/dev/null 2>&1
	done
	for m in $rv_mounts; do umount "$m" 2>/dev/null; done
	[ -z "${devdir:-}" ] || rmdir "$devdir" 2>/dev/null
	rv_mounts=""
	if [ "$rv_added" -gt 0 ]; then
		echo $(($(cat $POOL2M/nr_hugepages) - rv_added)) >$POOL2M/nr_hugepages
		rv_added=0
	fi
}
trap rv_cleanup EXIT
trap 'rv_cleanup; exit 130' INT TERM

# rv_mount DIR TYPE OPTIONS: a mount of the tier's own, undone by rv_cleanup.
rv_mount() {
	mkdir -p "$1" && mount -t "$2" -o "$3" minivmm-test "$1" && rv_mounts="$1 $rv_mounts"
}

# rv_grow N: N more free 2 MiB pages in the pool (0 when the kernel grants them all).
rv_grow() {
	local nr got
	nr=$(cat $POOL2M/nr_hugepages)
	echo $((nr + $1)) >$POOL2M/nr_hugepages 2>/dev/null
	got=$(($(cat $POOL2M/nr_hugepages) - nr))
	rv_added=$((rv_added + got))
	[ "$got" -ge "$1" ]
}

# rv_start NAME READY-ERE CMD...: CMD in the background until its stdout
# matches READY-ERE (0), or a minute passes (1); its pid in $spin.
rv_start() {
	local name=$1 ready=$2
	shift 2
	: >"$OUT/$name.out" # now: the job truncates it only once it runs (an old one says "$ready")
	"$@" >"$OUT/$name.out" 2>"$OUT/$name.err" &
	spin=$!
	disown "$spin" # killed on purpose: no job notice from the shell
	rv_bg="$rv_bg $spin"
	for _ in $(seq 600); do
		grep -Eq "$ready" "$OUT/$name.out" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

rv_stop() {
	kill -"${2:-TERM}" "$1" 2>/dev/null
	timeout 60 tail --pid="$1" -f /dev/null
}

rm -rf "$RV"
mkdir -p "$RV"
if [ "$(id -u)" != 0 ]; then
	skip reservoir "needs root (mounts tmpfs and hugetlbfs, sets nr_hugepages)"
else
	# --- a file on tmpfs ------------------------------------------------------
	T=$RV/tmpfs
	rv_mount "$T" tmpfs size=96M
	fallocate -l 64M "$T/ram"
	expect memfile-tmpfs 0 '' 'guest RAM: 64 MiB at 0 MiB of .*/ram, on tmpfs.*--backing memfd \(from the file system\)' -- \
		$MINIVMM --mem 64M --mem-path "$T/ram" --eager=populate -o "$OUT/memfile-tmpfs.json" $GUEST -- flat --max-mib 16 --iterations 1
	jq_true memfile-tmpfs-json "$OUT/memfile-tmpfs.json" \
		'.config.backing == "memfd" and .ram.source == "file" and .ram.backing_from == "file system"
		 and .ram.file.fs == "tmpfs" and .ram.file.locked and .eager.resident_bytes_after == .config.mem_bytes'
	# A file keeps what a guest wrote: the zero check can fail (it is no tautology).
	fallocate -l 32M "$T/pattern"
	expect memfile-pattern 0 '' 'pattern written' -- $RAW --mem-path "$T/pattern" tests/bin/pattern.raw
	expect memfile-keeps-contents 1 'NOT ZERO' '' -- $RAW -q --mem-path "$T/pattern" tests/bin/zeros.raw
	expect memfile-says-not-zeroed 1 '' 'the guest starts with what it holds: not zeroed' -- \
		$RAW --mem-path "$T/pattern" tests/bin/hello.raw
	rm -f "$T/pattern"
	expect memfile-compare 0 '' '^verdict' -- \
		$MINIVMM -q --compare --eager=populate --mem 64M --mem-path "$T/ram" $GUEST -- flat --max-mib 8 --iterations 1
	# A directory: an unlinked file of its own; nothing is left there.
	mkdir -p "$T/dir"
	expect memfile-dir 0 '' 'an unlinked file of its own' -- $MINIVMM --mem 32M --mem-path "$T/dir" $GUEST -- exit 0
	[ -z "$(ls -A "$T/dir")" ] && pass memfile-dir-empty || fail memfile-dir-empty "left: $(ls -A "$T/dir")"
	# Too small, missing: refused unless --mem-grow; never shrunk.
	fallocate -l 16M "$T/small"
	expect memfile-too-small 2 'the file has 16 MiB, guest RAM needs 32 MiB.*--mem-grow' '' -- \
		$MINIVMM --mem 32M --mem-path "$T/small" $GUEST -- exit 0
	expect memfile-missing 2 'no such file.*--mem-grow' '' -- $MINIVMM --mem 32M --mem-path "$T/none" $GUEST -- exit 0
	expect memfile-grow 0 '' 'grown from 16 MiB' -- $MINIVMM --mem 32M --mem-path "$T/small" --mem-grow $GUEST -- exit 0
	expect memfile-never-shrinks 0 '' '' -- $MINIVMM --mem 16M --mem-path "$T/small" --mem-grow $GUEST -- exit 0
	[ "$(stat -c %s "$T/small")" = $((32 << 20)) ] && pass memfile-size-kept ||
		fail memfile-size-kept "$(stat -c %s "$T/small") bytes, not 32 MiB"
	rm -f "$T/small"
	# The file system's size= limit cannot hold it: refused before the guest (no SIGBUS).
	expect memfile-no-space 3 'tmpfs .* has [0-9]+ MiB free, [0-9]+ MiB more needed .*mount -o remount,size=' '' -- \
		$MINIVMM --mem 128M --mem-path "$T/dir" $GUEST -- exit 0
	expect memfile-backing-anon 2 '--backing anon is private anonymous memory' '' -- \
		$MINIVMM --mem 64M --backing anon --mem-path "$T/ram" $GUEST -- exit 0
	expect memfile-backing-hugetlb 2 'the file is on tmpfs' '' -- \
		$MINIVMM --mem 64M --backing hugetlb2m --mem-path "$T/ram" $GUEST -- exit 0
	# Two VMs never share a page: the second is refused while the first runs.
	if rv_start memfile-holder spinning $MINIVMM --mem 64M --mem-path "$T/ram" $GUEST -- spin; then
		expect memfile-locked 3 'holds \[0, 64\) MiB of it: two VMs never share guest RAM' '' -- \
			$MINIVMM --mem 32M --mem-path "$T/ram" $GUEST -- exit 0
	else
		fail memfile-locked "the holding guest never spun: $(head -c 300 "$OUT/memfile-holder.err")"
	fi
	rv_stop "$spin"
	expect memfile-unlocked 0 '' '' -- $MINIVMM --mem 32M --mem-path "$T/ram" $GUEST -- exit 0
	# A read-only file system.
	mount -o remount,ro "$T"
	expect memfile-readonly 3 'cannot open it for writing: Read-only file system' '' -- \
		$MINIVMM --mem 64M --mem-path "$T/ram" $GUEST -- exit 0
	mount -o remount,rw "$T"
	# A file on a disk file system: refused unless asked, then a warning. In
	# the emulated host the tree is 9p, whose files back no shared writable
	# mapping: there the disk is an ext4 of the tier's own, on a loop device.
	DK=$RV
	if [ "$(findmnt -no FSTYPE -T "$RV" 2>/dev/null)" = 9p ]; then
		DK=$RV/ext4
		truncate -s 64M /tmp/minivmm-ext4.img && mkfs.ext4 -q -F /tmp/minivmm-ext4.img &&
			mkdir -p "$DK" && mount -o loop /tmp/minivmm-ext4.img "$DK" && rv_mounts="$DK $rv_mounts" ||
			fail memfile-disk-setup "no ext4 on a loop device in $DK"
	fi
	truncate -s 32M "$DK/disk"
	expect memfile-disk 2 'not hugetlbfs or tmpfs: its pages would be a disk.s page cache.*--mem-any-fs' '' -- \
		$MINIVMM --mem 32M --mem-path "$DK/disk" $GUEST -- exit 0
	expect memfile-disk-asked 0 'WARNING: --mem-any-fs' '' -- \
		$MINIVMM --mem 32M --mem-path "$DK/disk" --mem-any-fs $GUEST -- exit 0
	rm -f "$DK/disk"

	# --- hugetlbfs ---------------------------------------------------------------
	H=$RV/huge
	if ! rv_grow 48; then
		skip hugefile "the kernel granted fewer than 48 more 2 MiB pages"
	else
		rv_mount "$H" hugetlbfs pagesize=2M
		fallocate -l 32M "$H/ram"
		expect hugefile-inferred 0 '' 'on hugetlbfs .*2048 KiB pages: --backing hugetlb2m \(from the file system\); mapped shared; 32 MiB allocated' -- \
			$MINIVMM --mem 32M --mem-path "$H/ram" --eager=populate -o "$OUT/hugefile.json" $GUEST -- flat --max-mib 8 --iterations 1
		jq_true hugefile-json "$OUT/hugefile.json" \
			'.config.backing == "hugetlb2m" and .config.backing_page_bytes == 2097152 and .ram.file.fs == "hugetlbfs"
			 and .ram.file.allocated_bytes_before == .config.mem_bytes and .eager.resident_bytes_after == .config.mem_bytes'
		expect hugefile-page-size 2 '--backing hugetlb1g asks for 1024 MiB pages; the file is on hugetlbfs with 2 MiB pages.*pagesize=1G' '' -- \
			$MINIVMM --mem 1G --backing hugetlb1g --mem-path "$H/ram" $GUEST -- exit 0
		expect hugefile-dir 0 '' 'an unlinked file of its own' -- \
			$MINIVMM --mem 16M --backing hugetlb2m --mem-path "$H" --eager=populate $GUEST -- exit 0
		expect hugefile-pool-short 3 'hugetlb pool has [0-9]+ free pages of 2 MiB, [0-9]+ needed.*nr_hugepages' '' -- \
			$MINIVMM --mem 64G --mem-path "$H" $GUEST -- exit 0
		rm -f "$H/ram"
		umount "$H" && rv_mounts=${rv_mounts/"$H "/}
	fi
	# --- hugetlbfs not mounted: /dev is devtmpfs ---------------------------------------
	# A --mem-path in /dev where no hugetlbfs is mounted is refused with how to set one up;
	# nothing is made in /dev. Then the commands it prints, followed (the mount in a mount
	# namespace of its own, the pool given back), make the same run work on huge pages.
	devdir=/dev/minivmm-test-hugepages-$$
	if [ "$(awk '$5 == "/dev" { t = $0 } END { sub(/.* - /, "", t); split(t, w, " "); print w[1] }' /proc/self/mountinfo)" != devtmpfs ]; then
		skip memfile-devtmpfs "/dev is not devtmpfs here"
	else
		expect memfile-devtmpfs 2 "--mem-path $devdir: no hugetlbfs is mounted there: it is on devtmpfs .*mkdir -p /dev/hugepages && mount -t hugetlbfs -o pagesize=2M none /dev/hugepages && echo [0-9]+ > $POOL2M/nr_hugepages \\(8 pages of 2 MiB for --mem 16M" '' -- \
			$MINIVMM --mem 16M --mem-path "$devdir" --eager=populate $GUEST -- exit 0
		if grep -q 'fallocate' "$OUT/memfile-devtmpfs.err" || [ -e "$devdir" ]; then
			fail memfile-devtmpfs-no-file-in-dev "$(ls -d "$devdir" 2>&1): $(cat "$OUT/memfile-devtmpfs.err")"
		else
			pass memfile-devtmpfs-no-file-in-dev
		fi
		mkdir "$devdir"
		expect memfile-devtmpfs-dir 2 "mkdir -p $devdir && mount -t hugetlbfs -o pagesize=2M none $devdir && echo [0-9]+ > $POOL2M/nr_hugepages .*then --mem-path $devdir;" '' -- \
			$MINIVMM --mem 16M --mem-path "$devdir" $GUEST -- exit 0
		setup=$(sed -n 's/.*Set up hugetlbfs ([^)]*): \(.*\) (8 pages of .*/\1/p' "$OUT/memfile-devtmpfs-dir.err")
		nr_before=$(cat $POOL2M/nr_hugepages)
		run memfile-devtmpfs-followed unshare -m sh -c "mount --make-rprivate / && $setup && exec $MINIVMM --mem 16M --mem-path $devdir --eager=populate $GUEST -- exit 0"
		grown=$(($(cat $POOL2M/nr_hugepages) - nr_before))
		[ "$grown" -le 0 ] || echo $(($(cat $POOL2M/nr_hugepages) - grown)) >$POOL2M/nr_hugepages
		rmdir "$devdir"
		if [ "$(cat "$OUT/memfile-devtmpfs-followed.rc")" = 0 ] &&
			grep -q "guest RAM: 16 MiB .* on hugetlbfs .*2048 KiB pages" "$OUT/memfile-devtmpfs-followed.out"; then
			pass memfile-devtmpfs-followed
		else
			fail memfile-devtmpfs-followed "'$setup': status $(cat "$OUT/memfile-devtmpfs-followed.rc"): $(head -c 400 "$OUT/memfile-devtmpfs-followed.err")"
		fi
		[ "$(cat $POOL2M/nr_hugepages)" = "$nr_before" ] && [ ! -e "$devdir" ] && pass memfile-devtmpfs-undone ||
			fail memfile-devtmpfs-undone "nr_hugepages $nr_before -> $(cat $POOL2M/nr_hugepages); $(ls -d "$devdir" 2>&1)"
	fi

	# The pool as found: the reservoir grows it itself.
	[ "$rv_added" -gt 0 ] && echo $(($(cat $POOL2M/nr_hugepages) - rv_added)) >$POOL2M/nr_hugepages && rv_added=0

	# --- the reservoir -------------------------------------------------------------
	R2=$RV/res2m
	expect reservoir-usage 2 'SIZE is missing' '' -- $RES create --dir "$R2"
	expect reservoir-none 3 'no reservoir at' '' -- $RES status --dir "$R2"
	# Sizes and pages as --mem takes them, or the line to type.
	expect reservoir-size-without-unit 2 "create 512: read as 512 bytes \(no K/M/G/T suffix\); for 512 MiB write: $RES create 512M --dir $R2\$" '' -- \
		$RES create 512 --dir "$R2"
	expect reservoir-size-not-a-page 2 "SIZE must be a multiple of 2 MiB for hugetlb2m pages; write: $RES create 32M --page 2M --dir $R2 \(or 34M\)" '' -- \
		$RES create 33M --page 2M --dir "$R2"
	[ -e "$R2" ] && fail reservoir-refused-leaves-nothing "$R2 is there" || pass reservoir-refused-leaves-nothing
	expect reservoir-lease-none 3 'no reservoir at' '' -- $RAW --reservoir "$R2" tests/bin/zeros.raw
	expect reservoir-create 0 '' "reservoir $R2: 32 MiB of 2048 KiB pages \(hugetlbfs at .*\), allocated and zeroed in [0-9.]+ s \([0-9.]+ GiB/s\)" -- \
		$RES create 32M --dir "$R2"
	if [ "$(cat "$OUT/reservoir-create.rc")" = 0 ]; then
		expect reservoir-status 0 '' '^free: 32 MiB, in use: 0 MiB' -- $RES status --dir "$R2"
		# A guest writes a pattern, ends; the next lessee of the same range reads zeros.
		expect reservoir-pattern 0 '' 'pattern written' -- $RAW -o "$OUT/lease1.json" --reservoir "$R2" tests/bin/pattern.raw
		expect reservoir-next-reads-zero 0 '' 'all zero' -- $RAW -o "$OUT/lease2.json" --reservoir "$R2" tests/bin/zeros.raw
		jq_true reservoir-first-lease "$OUT/lease1.json" '.ram.lease.offset == 0 and .ram.lease.keeper_pid > 0'
		jq_true reservoir-same-range "$OUT/lease2.json" \
			'.ram.source == "reservoir" and .ram.lease.offset == 0 and .config.backing == "hugetlb2m"
			 and .ram.file.allocated_bytes_before == .config.mem_bytes and .ram.lease.scrubbed_at_lease_bytes == 0'
		# The scrub ran in the background and said how fast.
		for _ in $(seq 100); do [ "$(grep -c 'release.*ok$' "$R2/scrub.log")" -ge 2 ] && break; sleep 0.1; done
		if awk -F'\t' '$2 == "release" && $5 == 33554432 && $7 > 0 && $8 == "ok" { n++ } END { exit n < 2 }' "$R2/scrub.log"; then
			pass reservoir-scrub-logged
		else
			fail reservoir-scrub-logged "$(cat "$R2/scrub.log")"
		fi
		expect reservoir-status-scrubs 0 '' '^scrubs: [0-9]+, [0-9]+ MiB in [0-9.]+ s \([0-9.]+ GiB/s\)' -- $RES status --dir "$R2"
		# A second lessee while the first runs: refused (exit 3), never the same pages.
		# The first is then killed: its keeper scrubs anyway.
		if rv_start reservoir-holder spinning $RAW --reservoir "$R2" tests/bin/pattern-spin.raw; then
			expect reservoir-second-lessee 3 'no free 32 MiB in its 32 MiB: 1 range in use by running VMs' '' -- \
				$RAW --reservoir "$R2" tests/bin/zeros.raw
			expect reservoir-status-leased 0 '' 'lease: \[0, 32\) MiB: a running VM' -- $RES status --dir "$R2"
			rv_stop "$spin" KILL
			expect reservoir-lessee-killed 0 '' 'all zero' -- $RAW --reservoir "$R2" tests/bin/zeros.raw
		else
			fail reservoir-second-lessee "the holding guest never spun: $(head -c 300 "$OUT/reservoir-holder.err")"
		fi
		# The keeper itself dies before it scrubs: the next lessee scrubs, then maps.
		if rv_start reservoir-holder2 spinning $RAW --reservoir "$R2" tests/bin/pattern-spin.raw; then
			kill -9 "$(grep -o 'keeper pid [0-9]*' "$OUT/reservoir-holder2.out" | awk '{ print $3 }')"
			rv_stop "$spin"
			expect reservoir-keeper-killed 0 '' 'scrubbed 32 MiB an earlier lease left dirty' -- \
				$RAW -o "$OUT/lease5.json" --reservoir "$R2" tests/bin/zeros.raw
			jq_true reservoir-keeper-killed-json "$OUT/lease5.json" '.ram.lease.scrubbed_at_lease_bytes == 33554432 and .exit.status == 0'
		else
			fail reservoir-keeper-killed "the holding guest never spun: $(head -c 300 "$OUT/reservoir-holder2.err")"
		fi
		expect reservoir-backing-mismatch 2 '--backing memfd maps files on tmpfs; the file is on hugetlbfs' '' -- \
			$MINIVMM --mem 32M --backing memfd --reservoir "$R2" $GUEST -- exit 0
		expect reservoir-too-big 2 "does not fit: the reservoir has 32 MiB; use --mem 32M or less, or make a larger one: scripts/reservoir destroy --dir $R2 && scripts/reservoir create 64M --page 2m --dir $R2" '' -- \
			$MINIVMM --mem 64M --reservoir "$R2" $GUEST -- exit 0
		expect reservoir-parent 3 "no reservoir at $RV; did you mean $RV/res2m\?" '' -- \
			$MINIVMM --mem 32M --reservoir "$RV" $GUEST -- exit 0
		expect reservoir-mem-path-on-pool 2 "is a reservoir's pool" '' -- $RAW --mem-path "$R2/pool/mem" tests/bin/zeros.raw
		sleep 0.5
		expect reservoir-scrub-all 0 '' '^scrub: 32 MiB in [0-9.]+ s \([0-9.]+ GiB/s\)' -- $RES scrub --all --dir "$R2"
		before=$(cat $POOL2M/nr_hugepages)
		added=$(sed -n 's/^pages_added=//p' "$R2/reservoir.info")
		expect reservoir-destroy 0 '' 'destroyed.*' -- $RES destroy --dir "$R2"
		if grep -q "$R2" /proc/mounts || [ -e "$R2" ]; then
			fail reservoir-destroy-clean "left behind: $(grep "$R2" /proc/mounts) $(ls -d "$R2" 2>/dev/null)"
		elif [ "$(cat $POOL2M/nr_hugepages)" -ne $((before - added)) ]; then
			fail reservoir-destroy-clean "nr_hugepages $before -> $(cat $POOL2M/nr_hugepages), not the $added create added fewer"
		else
			pass reservoir-destroy-clean
		fi
	fi
	# 4 KiB pages on tmpfs: the same guarantee, with a zeroing pass.
	R4=$RV/res4k
	expect reservoir-4k-create 0 '' '32 MiB of 4 KiB pages \(tmpfs' -- $RES create 32M --page 4K --dir "$R4"
	expect reservoir-4k-pattern 0 '' '' -- $RAW --reservoir "$R4" tests/bin/pattern.raw
	expect reservoir-4k-zero 0 '' 'all zero' -- $RAW --reservoir "$R4" -o "$OUT/lease4k.json" tests/bin/zeros.raw
	jq_true reservoir-4k-json "$OUT/lease4k.json" '.config.backing == "memfd" and .ram.file.fs == "tmpfs"'
	expect reservoir-4k-destroy 0 '' 'destroyed' -- $RES destroy --dir "$R4"

	# --- the roofline -----------------------------------------------------------------
	before=$(cat $POOL2M/nr_hugepages)
	expect roofline-bench 0 '' '' -- build/bench/roofline --size 32M --runs 2 --backings anon,memfd,hugetlb2m --grow-pools -o "$RV/roofline.tsv"
	[ "$(cat $POOL2M/nr_hugepages)" = "$before" ] && pass roofline-pool-restored ||
		fail roofline-pool-restored "nr_hugepages $before -> $(cat $POOL2M/nr_hugepages)"
	rate() { awk -F'\t' -v b="$1" -v o="$2" -v t="$3" '$1 == b && $2 == o && $3 == t { print $9 }' "$RV/roofline.tsv"; }
	if [ -n "$(rate anon clear 1)" ] && [ -n "$(rate anon clear 2)" ] && [ -n "$(rate memfd map 1)" ] &&
		[ -n "$(rate anon memset 2)" ]; then
		pass roofline-rows
	else
		fail roofline-rows "$(cat "$RV/roofline.tsv")"
	fi
	# Sane relative numbers, wide margins: populating pre-zeroed pages costs less than
	# clearing them, and 2 MiB page tables far less per byte than 4 KiB ones.
	if awk -v m="$(rate memfd map 1)" -v c="$(rate memfd clear 1)" 'BEGIN { exit !(m > c) }'; then
		pass roofline-map-beats-clear
	else
		fail roofline-map-beats-clear "memfd map $(rate memfd map 1) GiB/s, clear $(rate memfd clear 1) GiB/s"
	fi
	if [ -z "$(rate hugetlb2m map 1)" ]; then
		skip roofline-2m-map "no hugetlb2m row: $(grep 'skipped hugetlb2m' "$RV/roofline.tsv" | head -1)"
	elif awk -v h="$(rate hugetlb2m map 1)" -v m="$(rate memfd map 1)" 'BEGIN { exit !(h > 5 * m) }'; then
		pass roofline-2m-map
	else
		fail roofline-2m-map "hugetlb2m map $(rate hugetlb2m map 1) GiB/s, memfd map $(rate memfd map 1) GiB/s"
	fi
	expect roofline-eager 0 '' 'roofline: [0-9.]+ GiB/s is [0-9]+% of the clear ceiling' -- \
		$MINIVMM --mem 64M --vcpus 2 --eager=populate --roofline "$RV/roofline.tsv" -o "$OUT/roofline-eager.json" $GUEST -- exit 0
	jq_true roofline-eager-json "$OUT/roofline-eager.json" \
		'.eager.roofline.found and .eager.roofline.op == "clear" and .eager.roofline.percent_of_ceiling > 0
		 and .eager.roofline.ceiling_gib_per_s > 0 and .config.roofline != null'
	expect roofline-missing-row 0 '' 'roofline: no ceiling: the roofline has no anon clear row for 3 threads' -- \
		$MINIVMM --mem 64M --eager=populate --eager-threads 3 --roofline "$RV/roofline.tsv" $GUEST -- exit 0
	expect roofline-map 0 '' 'of the map ceiling' -- \
		$MINIVMM --mem 64M --eager=populate --roofline "$RV/roofline.tsv" --mem-path "$T/ram" $GUEST -- exit 0
	expect roofline-predicts 0 '' '^eager: predicted [0-9.]+ s for 1.0. GiB of anon' -- \
		$MINIVMM --mem 1026M --eager=populate --roofline "$RV/roofline.tsv" $GUEST -- exit 0
	expect roofline-bad 2 'header lacks' '' -- $MINIVMM --mem 32M --eager --roofline /etc/hostname $GUEST -- exit 0
	# Like for like (issue 31): every run a process of its own, the counts interleaved, and
	# the slowest run kept; a ceiling measured at another size is said to be one.
	grep -q '^# size 32 MiB .*each a process of its own, the thread counts interleaved' "$RV/roofline.tsv" &&
		awk -F'\t' '!/^#/ && NR > 1 && $1 != "backing" { if (!($12 > 0 && $12 <= $9)) bad = 1; n++ } END { exit bad || !n }' "$RV/roofline.tsv" &&
		pass roofline-own-processes || fail roofline-own-processes "$(cat "$RV/roofline.tsv")"
	expect roofline-not-like-for-like 0 '' 'roofline: not like for like: the ceiling was measured at 32 MiB, this populate was 128 MiB; measure it at this size: build/bench/roofline --size 128M --backings anon --threads 1 -o FILE' -- \
		$MINIVMM --mem 128M --eager=populate --roofline "$RV/roofline.tsv" $GUEST -- exit 0
	# Far from the ceiling: why it may be (this machine's balloon, read here as minivmm
	# reads it), the command that measures it like for like, and what a reservoir would cost.
	printf 'backing\top\tthreads\tbytes\tpage_bytes\truns\tbest_s\tmedian_s\tgib_per_s\tmedian_gib_per_s\tns_per_page\tmin_gib_per_s\n' >"$RV/roof-high.tsv"
	printf 'anon\tclear\t1\t67108864\t4096\t3\t0\t0\t5000\t5000\t1\t4000\nhugetlb2m\tmap\t1\t67108864\t2097152\t3\t0\t0\t2000\t2000\t1\t1000\nhugetlb2m\tclear\t1\t67108864\t2097152\t3\t0\t0\t4\t4\t1\t3\n' >>"$RV/roof-high.tsv"
	fpr=none
	for d in /sys/bus/virtio/devices/*; do
		[ "$(cat "$d/device" 2>/dev/null)" = 0x0005 ] || continue
		fpr=$(cut -c6 "$d/features")
		break
	done
	case $fpr in 1) why='balloon \(virtio[0-9]+\) hands memory a process freed back to its host \(free page reporting' ;;
	0) why='its balloon reports no free pages to a host' ;; *) why='there is no virtio balloon here' ;; esac
	expect roofline-far-below 0 '' "roofline: far below the ceiling.*$why.*Measure the ceiling like for like: build/bench/roofline --size 64M --backings anon --threads 1 -o FILE" -- \
		$MINIVMM --mem 64M --eager=populate --roofline "$RV/roof-high.tsv" $GUEST -- exit 0
	grep -Eq '^  slow: a 2 MiB reservoir would leave page tables only: predicted [0-9.]+ m?s for 64 MiB here \(the roofline.s hugetlb2m map ceiling, 2000 GiB/s\), once it is made \([0-9.]+ m?s of clearing at its clear ceiling\); make one: scripts/reservoir create 64M, then: minivmm --mem 64M --reservoir /run/minivmm/reservoir --eager=populate .*guest.bin -- exit 0$' \
		"$OUT/roofline-far-below.out" && pass roofline-slow-says-reservoir ||
		fail roofline-slow-says-reservoir "$(grep -A8 '^eager:' "$OUT/roofline-far-below.out")"
	printf 'backing\top\tthreads\tbytes\tgib_per_s\nanon\tclear\t1\t67108864\t0.0001\n' >"$RV/roof-low.tsv"
	expect roofline-far-above 0 '' 'roofline: above the ceiling: it was measured slower than this machine goes' -- \
		$MINIVMM --mem 64M --eager=populate --roofline "$RV/roof-low.tsv" $GUEST -- exit 0
	grep -q 'slow:' "$OUT/roofline-far-above.out" && fail roofline-fast-says-nothing "$(grep slow: "$OUT/roofline-far-above.out")" ||
		pass roofline-fast-says-nothing
	rv_cleanup
	[ -z "$(grep minivmm-test /proc/mounts)" ] && [ "$rv_added" = 0 ] && pass reservoir-tier-clean ||
		fail reservoir-tier-clean "$(grep minivmm-test /proc/mounts)"
fi
trap - EXIT INT TERM
