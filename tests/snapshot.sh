# Tier "snapshot" (issue 33): --snapshot saves the VM where the guest asks,
# --restore runs it on (modes copy and private), every bad input refused with
# one message and its exit class. Sourced by tests/run.
S=$OUT/snapshot
rm -rf "$S"
mkdir -p "$S"
FLAT="flat --max-mib 4 --iterations 3"

# --- save, then restore each way ---------------------------------------------
expect snap-save 0 'snapshot: the VM was saved where vCPU 0 asked' '^snapshot: .*S1 written in .* of data in [0-9]+ extents' -- \
	$MINIVMM --mem 32M --snapshot "$S/S1" -o "$S/save.json" "$GUEST" -- $FLAT --snapshot-after 1
[ -f "$S/S1/state" ] && [ -f "$S/S1/memory" ] && pass snap-files || fail snap-files "$(ls -la "$S/S1" 2>&1)"
# Sparse: the memory file is as long as RAM, with fewer blocks (never-touched pages are holes).
if [ "$(stat -c %s "$S/S1/memory" 2>/dev/null)" = $((32 << 20)) ] &&
	[ "$(du -k "$S/S1/memory" | cut -f1)" -lt $((32 << 10)) ]; then
	pass snap-memory-sparse
else
	fail snap-memory-sparse "size $(stat -c %s "$S/S1/memory" 2>&1), $(du -k "$S/S1/memory" 2>&1) KiB allocated"
fi
jq_true snap-save-results "$S/save.json" '.exit.reason == "snapshot" and .exit.status == 0 and .snapshot.taken and .snapshot.pass == 1 and .snapshot.data_bytes > 0 and .snapshot.data_bytes < .snapshot.ram_bytes and .snapshot.seconds > 0 and ([.timeline[].phase] | index("snapshot_saved")) != null'
ls -d "$S"/S1.minivmm-* >/dev/null 2>&1 && fail snap-no-temporary "$(ls -d "$S"/S1.minivmm-*)" || pass snap-no-temporary
expect snap-uninterrupted 0 '' '' -- $MINIVMM --mem 32M -o "$S/plain.json" "$GUEST" -- $FLAT
for m in copy private; do
	expect snap-restore-$m 0 '' 'memory checksum 0x[0-9a-f]+ before the snapshot, 0x[0-9a-f]+ after the restore: match' -- \
		$MINIVMM --restore "$S/S1" --restore-mode $m -o "$S/$m.json"
	grep -Eq "^restore: .*S1 \(mode $m\): vCPU state set in .* memory ready in" "$OUT/snap-restore-$m.out" && pass snap-restore-$m-line ||
		fail snap-restore-$m-line "$(grep '^restore' "$OUT/snap-restore-$m.out")"
	jq_true snap-restore-$m-results "$S/$m.json" "
		.restore.mode == \"$m\" and .restore.pass == 1 and .exit.status == 0 and .summary.first_useful_work_ms > 0
		and ([.timeline[].phase] | (index(\"state_loaded\") < index(\"memory_ready\")) and (index(\"memory_ready\") < index(\"guest_resumed\")) and (index(\"guest_resumed\") < index(\"first_useful_work\")))
		and (.config.guest_args == [\"flat\",\"--max-mib\",\"4\",\"--iterations\",\"3\",\"--snapshot-after\",\"1\"]) and .config.mem_bytes == 33554432"
	# The same results as a run never interrupted: the same members and the same records.
	if [ -f "$S/plain.json" ] && [ "$(jq -c '[.sweep[] | [.iteration, .size_mib, .vcpu]]' "$S/$m.json")" = \
		"$(jq -c '[.sweep[] | [.iteration, .size_mib, .vcpu]]' "$S/plain.json")" ] &&
		[ "$(jq -c 'keys - ["restore"]' "$S/$m.json")" = "$(jq -c 'keys' "$S/plain.json")" ] &&
		[ "$(jq -c '[.progress[] | .vcpu] | unique' "$S/$m.json")" = "$(jq -c '[.progress[] | .vcpu] | unique' "$S/plain.json")" ]; then
		pass snap-restore-$m-same-structure
	else
		fail snap-restore-$m-same-structure "$(jq -c '[keys, [.sweep[] | [.iteration, .size_mib]]]' "$S/$m.json" "$S/plain.json" 2>&1 | head -c 600)"
	fi
done
# Valid JSON and valid results, restored or not (the schema tier checks them all again).
./tests/check-json "$S/copy.json" "$S/private.json" "$S/save.json" >"$S/check-json.log" 2>&1 && pass snap-results-json ||
	fail snap-results-json "$(grep -v '^ok' "$S/check-json.log" | head -3)"
if /usr/bin/python3 -c 'import jsonschema' 2>/dev/null; then
	./tests/validate-results "$S/copy.json" "$S/private.json" "$S/save.json" >"$S/schema.log" 2>&1 && pass snap-results-schema ||
		fail snap-results-schema "$(grep -v '^ok' "$S/schema.log" | head -3)"
fi
# copy reads everything before the guest resumes, private nothing: the boundary moved.
jq_true snap-copy-reads-before-resume "$S/copy.json" '.restore.data_bytes > 0 and .restore.memory_s > 0'
# Twice from one snapshot: it is not used up.
expect snap-restore-again 0 '' 'after the restore: match' -- $MINIVMM --restore "$S/S1"

# Other snapshot points: before the first pass, perm, several vCPUs, at workload_start, running on.
expect snap-after-0 0 '' '' -- $MINIVMM -q --mem 32M --snapshot "$S/S0" "$GUEST" -- $FLAT --snapshot-after 0
expect snap-after-0-restore 0 '' 'after the restore: match' -- $MINIVMM --restore "$S/S0" --restore-mode private
expect snap-perm 0 '' '' -- $MINIVMM -q --mem 32M --snapshot "$S/SP" "$GUEST" -- perm --mib 4 --iterations 3 --snapshot-after 2
expect snap-perm-restore 0 '' 'perm: memory checksum .* after the restore: match' -- $MINIVMM --restore "$S/SP" --restore-mode copy -o "$S/perm.json"
jq_true snap-perm-records "$S/perm.json" '[.sweep[] | select(.vcpu == 0 or .vcpu == "all") | .iteration] == [1,2,3]'
expect snap-smp 0 '' '' -- $MINIVMM -q --mem 32M --vcpus 2 --snapshot "$S/S2" "$GUEST" -- flat --max-mib 2 --iterations 2 --parallel --snapshot-after 1
expect snap-smp-restore 0 '' 'after the restore: match' -- $MINIVMM --restore "$S/S2" -o "$S/smp.json"
jq_true snap-smp-vcpus "$S/smp.json" '.config.vcpus == 2 and ([.sweep[] | select(.iteration == 2) | .vcpu] | length) == 6'
expect snap-at-workload-start 0 '' '' -- $MINIVMM -q --mem 32M --snapshot "$S/SW" "$GUEST" -- $FLAT
expect snap-at-workload-start-restore 0 '' 'flat: restored after pass 0' -- $MINIVMM --restore "$S/SW"
expect snap-hello 0 '' '' -- $MINIVMM -q --mem 32M --snapshot "$S/SH" "$GUEST" -- hello
expect snap-hello-restore 0 '' 'hello' -- $MINIVMM --restore "$S/SH"
# Another backing: the snapshot says which, and the restore maps the same.
expect snap-memfd 0 '' '' -- $MINIVMM -q --mem 32M --backing memfd --snapshot "$S/SM" -o "$S/memfd-save.json" "$GUEST" -- $FLAT --snapshot-after 1
expect snap-memfd-restore 0 '' 'after the restore: match' -- $MINIVMM --restore "$S/SM" --restore-mode private -o "$S/memfd.json"
jq_true snap-memfd-backing "$S/memfd.json" '.config.backing == "memfd"'
expect snap-bad-restore-backing 2 '--backing says otherwise' '' -- $MINIVMM --restore "$S/SM" --backing anon
expect snap-continue 0 '' 'snapshot taken after pass 1, running on' -- \
	$MINIVMM --mem 32M --snapshot "$S/SC" --snapshot-continue -o "$S/continue.json" "$GUEST" -- $FLAT --snapshot-after 1
grep -q 'running on: match' "$OUT/snap-continue.out" && pass snap-continue-checksum || fail snap-continue-checksum "$(grep checksum "$OUT/snap-continue.out")"
jq_true snap-continue-results "$S/continue.json" '.exit.reason == "guest-exit" and .snapshot.taken and ([.sweep[] | .iteration] | max) == 3'
expect snap-continue-restore 0 '' 'after the restore: match' -- $MINIVMM --restore "$S/SC" --restore-mode private

# --- bad input ------------------------------------------------------------------
SA=$(cd "$S" && pwd) # links name it absolutely
bad_copy() { rm -rf "$S/$1" && cp -a --sparse=always "$S/S1" "$S/$1"; }
bad_copy T1 && truncate -s 100 "$S/T1/state"
expect snap-bad-truncated-state 2 'state file is truncated' '' -- $MINIVMM --restore "$S/T1"
bad_copy T2 && truncate -s -8 "$S/T2/state"
expect snap-bad-short-state 2 'state file is truncated' '' -- $MINIVMM --restore "$S/T2"
bad_copy T3 && printf '\x5a' | dd of="$S/T3/state" bs=1 seek=5000 conv=notrunc status=none
expect snap-bad-changed-byte 2 'corrupt: its checksum does not match' '' -- $MINIVMM --restore "$S/T3"
bad_copy T4 && printf '\x07\x00\x00\x00' | dd of="$S/T4/state" bs=1 seek=8 conv=notrunc status=none
expect snap-bad-format-version 2 'snapshot format version 7; this minivmm reads version 2' '' -- $MINIVMM --restore "$S/T4"
# Format 1's checksum left the header out: such a snapshot is refused, saying so.
bad_copy TV && ./tests/snap-state "$S/TV/state" header format_version 1
expect snap-bad-format-1 2 'snapshot format version 1, whose checksum left its header out; this minivmm reads version 2: take the snapshot again' '' -- \
	$MINIVMM --restore "$S/TV"
# tests/snap-state edits a state file as a writer would: the checksum made right again.
bad_copy T5 && ./tests/snap-state "$S/T5/state" header abi_version 4
expect snap-bad-abi 2 'built for ABI 4; this minivmm restores guests of ABI 5' '' -- $MINIVMM --restore "$S/T5"
bad_copy T6 && truncate -s 16M "$S/T6/memory"
expect snap-bad-short-memory 2 'the memory file is 16777216 bytes, the guest.s RAM 33554432: truncated' '' -- $MINIVMM --restore "$S/T6"
bad_copy T7 && rm "$S/T7/memory"
expect snap-bad-no-memory 2 'the snapshot has no memory file' '' -- $MINIVMM --restore "$S/T7"
bad_copy T8 && rm "$S/T8/state"
expect snap-bad-no-state 2 'the snapshot has no state file' '' -- $MINIVMM --restore "$S/T8"
expect snap-bad-no-dir 2 'no such snapshot directory' '' -- $MINIVMM --restore "$S/nonexistent"
printf 'garbage' >"$S/T9.state" && bad_copy T9 && cp "$S/T9.state" "$S/T9/state"
expect snap-bad-not-a-snapshot 2 'truncated: 7 bytes' '' -- $MINIVMM --restore "$S/T9"
# Issue 38: a snapshot is trusted input; what minivmm can check, it does.
# The header is inside the checksum: a field changed with the body's checksum
# made right (all that format 1 summed) is corruption, not another backing.
bad_copy TH && ./tests/snap-state --checksum body "$S/TH/state" header backing memfd
expect snap-bad-header-field 2 'corrupt: its checksum does not match' '' -- $MINIVMM --restore "$S/TH"
# A saved record batch passes the checks a guest's call does before it is replayed.
bad_copy TR && ./tests/snap-state "$S/TR/state" record sweep workload 9
expect snap-bad-record 2 'record batch [0-9]+ holds records a guest.s call would have been refused for: sweep record 0: unknown workload 9' '' -- \
	$MINIVMM --restore "$S/TR"
# The files are regular files in the directory: a link is not followed out of it.
bad_copy TL && rm "$S/TL/memory" && ln -s "$SA/S1/memory" "$S/TL/memory"
expect snap-bad-memory-symlink 2 'its memory file is a symbolic link' '' -- $MINIVMM --restore "$S/TL"
bad_copy TS && mv "$S/TS/state" "$S/TS.state" && ln -s "$SA/TS.state" "$S/TS/state"
expect snap-bad-state-symlink 2 'its state file is a symbolic link' '' -- $MINIVMM --restore "$S/TS"
ln -sfn "$SA/S1" "$S/TD"
expect snap-bad-dir-symlink 2 'a symbolic link; name the snapshot directory itself' '' -- $MINIVMM --restore "$S/TD"
# A FIFO named state is refused at once, not waited on (a local directory: 9p's FIFOs are the host's).
F=$(mktemp -d) && cp -a --sparse=always "$S/S1" "$F/TF" && rm "$F/TF/state" && mkfifo "$F/TF/state"
CASE_TIMEOUT=20 expect snap-bad-state-fifo 2 'its state file is a FIFO' '' -- $MINIVMM --restore "$F/TF"
rm -rf "$F"
# A changed byte in guest memory is the guest's to see: its checksum differs (exit 4).
gpa=$(jq '.touch_order[0].gpa // empty' "$S/copy.json" 2>/dev/null)
if [ -n "$gpa" ]; then
	bad_copy T10 && printf '\x01' | dd of="$S/T10/memory" bs=1 seek=$((gpa + 4096 + 100)) conv=notrunc status=none
	expect snap-bad-memory-byte 4 'memory checksum 0x[0-9a-f]+ after the restore differs' '' -- $MINIVMM --restore "$S/T10"
else
	fail snap-bad-memory-byte "no touch_order in $S/copy.json"
fi
expect snap-bad-restore-mem 2 'the snapshot is of 32 MiB of RAM, 1 vCPU, backing anon; --mem says otherwise' '' -- \
	$MINIVMM --restore "$S/S1" --mem 64M
expect snap-bad-restore-vcpus 2 '--vcpus says otherwise' '' -- $MINIVMM --restore "$S/S1" --vcpus 2
expect snap-restore-same-mem 0 '' '' -- $MINIVMM -q --restore "$S/S1" --mem 32M --vcpus 1
expect snap-bad-restore-image 2 '--restore .* takes no guest image' '' -- $MINIVMM --restore "$S/S1" "$GUEST"
expect snap-bad-restore-mode 2 "--restore-mode: no mode 'cpy'; did you mean copy" '' -- $MINIVMM --restore "$S/S1" --restore-mode cpy
expect snap-bad-mode-alone 2 '--restore-mode is about --restore' '' -- $MINIVMM --restore-mode copy "$GUEST"
expect snap-bad-continue-alone 2 '--snapshot-continue is about --snapshot' '' -- $MINIVMM --snapshot-continue "$GUEST"
expect snap-bad-exists 2 "--snapshot $S/S1: it exists" '' -- $MINIVMM --mem 32M --snapshot "$S/S1" "$GUEST" -- $FLAT
expect snap-bad-unwritable 2 '--snapshot /proc/minivmm-snap: cannot create' '' -- $MINIVMM --mem 32M --snapshot /proc/minivmm-snap "$GUEST" -- $FLAT
# An image of ABI 4 has no snapshot call: --snapshot is refused before it runs.
cp "$GUEST" "$S/abi4.bin" && printf '\x04\x00\x00\x00' | dd of="$S/abi4.bin" bs=1 seek=8 conv=notrunc status=none
expect snap-bad-old-image 2 'built for ABI 4, whose guest cannot ask for a snapshot \(ABI 5\)' '' -- \
	$MINIVMM --mem 32M --snapshot "$S/SO" "$S/abi4.bin" -- $FLAT
[ ! -e "$S/SO" ] && ! ls -d "$S"/SO.minivmm-* >/dev/null 2>&1 && pass snap-bad-old-image-nothing-left || fail snap-bad-old-image-nothing-left "$(ls -d "$S"/SO*)"
expect snap-bad-after-past 2 'a usage error' 'snapshot-after 4 is past its 3 iterations' -- $MINIVMM --mem 32M "$GUEST" -- $FLAT --snapshot-after 4
# A full file system: a tmpfs of 1 MiB; no snapshot is left, nor its temporary.
mkdir -p "$S/full"
if mount -t tmpfs -o size=1m minivmm-snap-full "$S/full" 2>/dev/null; then
	expect snap-bad-full 3 'No space left on device \(the file system is full: no snapshot was left\)' '' -- \
		$MINIVMM --mem 32M --snapshot "$S/full/S" -o "$S/full.json" "$GUEST" -- $FLAT --snapshot-after 1
	[ -z "$(ls -A "$S/full")" ] && pass snap-full-nothing-left || fail snap-full-nothing-left "$(ls -la "$S/full")"
	jq_true snap-full-results "$S/full.json" '.exit.reason == "host-error" and (.snapshot.taken | not)'
	umount "$S/full"
else
	skip snap-bad-full "cannot mount a tmpfs here (not root?)"
fi
# SIGKILL while the memory file is written: no complete-looking snapshot, and the next run clears the temporary.
$MINIVMM -q --mem 512M --snapshot "$S/K" "$GUEST" -- flat --max-mib 128 --iterations 2 --snapshot-after 1 >/dev/null 2>&1 &
pid=$!
for _ in $(seq 600); do
	f=$(ls "$S"/K.minivmm-*.tmp/memory 2>/dev/null | head -1)
	[ -n "$f" ] && [ "$(stat -c %s "$f" 2>/dev/null || echo 0)" -gt 0 ] && break
	sleep 0.05
done
kill -9 $pid 2>/dev/null
wait $pid 2>/dev/null
if [ ! -e "$S/K" ] && ls -d "$S"/K.minivmm-*.tmp >/dev/null 2>&1; then
	pass snap-sigkill-nothing-complete
else
	fail snap-sigkill-nothing-complete "$(ls -la "$S" | grep ' K' )"
fi
expect snap-after-sigkill 0 '' '' -- $MINIVMM -q --mem 32M --snapshot "$S/K" "$GUEST" -- $FLAT --snapshot-after 1
ls -d "$S"/K.minivmm-*.tmp >/dev/null 2>&1 && fail snap-sigkill-temporary-cleared "$(ls -d "$S"/K.minivmm-*)" || pass snap-sigkill-temporary-cleared
# A stale temporary that is a link (a shared /tmp: anyone can plant one) is not
# followed: the files in the directory it names survive.
mkdir -p "$S/victim" && echo keep >"$S/victim/state" && echo keep >"$S/victim/memory"
sh -c 'exit 0' &
dead=$!
wait $dead
ln -sfn "$SA/victim" "$S/SV.minivmm-$dead.tmp"
expect snap-stale-link 0 '' '' -- $MINIVMM -q --mem 32M --snapshot "$S/SV" "$GUEST" -- hello
[ -f "$S/victim/state" ] && [ -f "$S/victim/memory" ] && pass snap-stale-link-not-followed ||
	fail snap-stale-link-not-followed "$(ls -la "$S/victim")"
# NAME made while the guest runs (an empty directory too) is not replaced at
# the rename: appeared NAME DIR. On 9p renameat2 RENAME_NOREPLACE is EINVAL
# (the mkdir claim); on a local tmpfs it is the rename itself.
appeared() {
	local name=$1 d=$2 pid rc try won=0
	# The guest is stopped (SIGSTOP) as soon as its temporary exists, NAME made,
	# then it runs on: a loaded machine cannot let the snapshot be committed
	# first. If it was all the same (the poll came too late), another try.
	for try in 1 2 3; do
		rm -rf "$d/SE"
		$MINIVMM -q --mem 32M --snapshot "$d/SE" "$GUEST" -- $FLAT --snapshot-after 2 >"$OUT/$name.out" 2>"$OUT/$name.err" &
		pid=$!
		for _ in $(seq 2000); do
			[ -d "$d/SE.minivmm-$pid.tmp" ] && kill -STOP $pid 2>/dev/null && break
			kill -0 $pid 2>/dev/null || break
			sleep 0.01
		done
		if [ ! -e "$d/SE" ] && mkdir "$d/SE"; then
			won=1
		fi
		kill -CONT $pid 2>/dev/null
		wait $pid
		rc=$?
		[ $won = 1 ] && break
	done
	if [ $won = 0 ]; then
		fail "$name" "the snapshot was committed before NAME could be made, three times"
	elif [ $rc = 2 ] && grep -q 'SE: something was put there while the guest ran; it is not replaced' "$OUT/$name.err" &&
		[ -z "$(ls -A "$d/SE")" ] && ! ls -d "$d"/SE.minivmm-* >/dev/null 2>&1; then
		pass "$name"
	else
		fail "$name" "status $rc: $(head -c 300 "$OUT/$name.err"); SE: $(ls -A "$d/SE" | head -3)"
	fi
}
appeared snap-bad-appeared-dir "$S"
F=$(mktemp -d) && appeared snap-bad-appeared-dir-local "$F"
rm -rf "$F"
# A guest asking again and again: the first is honoured, the rest refused, and past 64 the run ends.
expect snap-storm 0 '' 'snapshot-storm: 10 asked, 1 taken, 9 refused' -- \
	$MINIVMM --mem 32M --snapshot "$S/ST" --snapshot-continue -o "$S/storm.json" "$GUEST" -- snapshot-storm 10
jq_true snap-storm-results "$S/storm.json" '.snapshot.asks == 10 and .snapshot.taken'
expect snap-storm-bounded 4 'guest asked for a snapshot 65 times \(at most 64 a run; the first is honoured\)' '' -- \
	$MINIVMM --mem 32M --snapshot "$S/ST2" --snapshot-continue "$GUEST" -- snapshot-storm 1000
expect snap-storm-unasked 0 '' 'snapshot-storm: 5 asked, 0 taken, 0 refused' -- $MINIVMM --mem 32M "$GUEST" -- snapshot-storm 5
rm -rf "$S"/S[0-9A-Z]* "$S"/T[0-9A-Z]* "$S"/K* "$S"/victim
