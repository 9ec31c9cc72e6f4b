# Guest runs on /dev/kvm: boot facts, exit statuses, faults, timeouts, devices, signals.
G="$MINIVMM --mem 64M $GUEST --"

expect hello 0 '' 'memory: 64 MiB \(67108864 bytes\)' -- $G hello
grep -q '^vcpus: 1$' "$OUT/hello.out" && grep -q '^args: 1 \[hello\]$' "$OUT/hello.out" &&
	grep -Eq '^tsc: [1-9][0-9]* kHz$' "$OUT/hello.out" && pass hello-facts ||
	fail hello-facts "$(cat "$OUT/hello.out")"
expect hello-platform 0 '' '^platform: (pvm|vmx|svm|unknown), (shadow|tdp) paging' -- $G hello
expect hello-args 0 '' '^args: 4 \[hello\] \[a b\] \[\] \[--x\]$' -- $G hello "a b" "" --x
expect hello-vcpus 0 '' '^vcpus: 3$' -- $MINIVMM --mem 64M --vcpus 3 $GUEST -- hello
expect hello-16g-lazy 0 '' '^memory: 16384 MiB' -- $MINIVMM --mem 16G $GUEST -- hello
expect hello-quiet 0 '' '' -- $MINIVMM -q --mem 64M $GUEST -- hello
[ ! -s "$OUT/hello-quiet.out" ] && [ ! -s "$OUT/hello-quiet.err" ] && pass quiet-is-quiet ||
	fail quiet-is-quiet "printed: $(cat "$OUT/hello-quiet.out" "$OUT/hello-quiet.err")"
expect default-workload 0 "" "" -- $MINIVMM -q --mem 16M $GUEST

expect exit-status 1 'guest exited with status 7' '' -- $G exit 7
expect exit-zero 0 '' '' -- $G exit 0
expect unknown-workload 2 'status 2.*a usage error' "unknown workload 'nosuch' \(the list above\)" -- $G nosuch
# A typo gets the name it is nearest, last (where -q's tail of the console shows it).
expect unknown-workload-typo 2 "guest: unknown workload 'flta'; did you mean flat\? \(minivmm \.\.\. -- flat ARGS\)" '' -- \
	$MINIVMM -q --mem 64M $GUEST -- flta --max-mib 4
# A guest's usage error (its exit status 2, MVM_EXIT_USAGE) is minivmm's exit 2, reason guest-usage.
expect guest-usage-json 2 '' '' -- $MINIVMM -q --mem 16M -o "$OUT/guest-usage.json" $GUEST -- flat --max-mib 0
jq_true guest-usage-reason "$OUT/guest-usage.json" '.exit.reason == "guest-usage" and .exit.status == 2 and .exit.guest_status == 2'
# -q still prints what '-- help' asks for: the workloads, a word on each.
expect quiet-help 0 '' '^  exit N +exit with status N$' -- $MINIVMM -q --mem 16M $GUEST -- help
grep -q 'what the guest learned at boot' "$OUT/quiet-help.out" && pass quiet-help-words ||
	fail quiet-help-words "$(head -c 400 "$OUT/quiet-help.out")"
# Workload options take --opt=value, as minivmm's own do.
expect guest-opt-equals 0 '' '^flat: 1\.\.4 MiB, 1 iteration,' -- $G flat --max-mib=4 --iterations=1
expect guest-flag-value 2 "--parallel takes no value" '' -- $MINIVMM -q --mem 16M $GUEST -- flat --parallel=1
expect fault-unmapped 4 'page fault.*fault address 0x40000000000' '' -- $G touch 0x40000000000
expect fault-null 4 'fault address 0x0\)' '' -- $G touch 0
expect fault-ud2 4 '#UD invalid opcode' '' -- $G ud2
expect munmap-unmaps 4 'fault address 0x100000001000' '' -- $G munmap-touch
expect guest-assert 4 'guest aborted.*deliberate failure.*guest/tests.c' '' -- $G assert
expect timeout 5 'still running after --timeout 1 s' 'spinning' -- \
	$MINIVMM --mem 64M --timeout 1 -o "$OUT/timeout.json" $GUEST -- spin
jq_true timeout-json "$OUT/timeout.json" '.exit.reason == "timeout" and .exit.status == 5'

expect results-on-crash 4 '' '' -- $MINIVMM --mem 64M -o "$OUT/crash.json" $GUEST -- touch 0
jq_true results-on-crash-json "$OUT/crash.json" \
	'.exit.reason == "guest-abort" and .exit.status == 4 and .config.mem_bytes == 67108864 and .minivmm.abi == 5 and (.exit.message | test("fault address 0x0"))'
expect results-ok 0 '' '' -- $MINIVMM --mem 64M --vcpus 2 -o "$OUT/ok.json" $GUEST -- hello x
jq_true results-ok-json "$OUT/ok.json" \
	'.exit.reason == "guest-exit" and .exit.guest_status == 0 and .config.vcpus == 2 and .config.guest_args == ["hello","x"] and (.platform.tsc_khz > 0) and (.platform.paging | test("shadow|tdp"))'

# Hand-written CPL0 guests: devices and misbehaviour.
expect devices 0 '2 unclaimed port I/O accesses \(first: write to 0x80\)' \
	'hello from port 0xe9' -- $MINIVMM --mem 16M tests/bin/devices.bin
grep -q 'hello from COM1' "$OUT/devices.out" && pass devices-com1 || fail devices-com1 "no COM1 output"
expect halt 4 'guest stopped on vCPU 0:.*HLT.*rip=0x' '' -- $MINIVMM --mem 16M tests/bin/hlt.bin
expect triple-fault 4 'guest crashed on vCPU 0: triple fault.*KVM_EXIT_SHUTDOWN.*rip=0x' '' -- \
	$MINIVMM --mem 16M tests/bin/triple.bin
expect bad-hypercall-pointer 4 'guest ABI violation.*0xfffff000 are outside guest RAM' '' -- \
	$MINIVMM --mem 16M tests/bin/badhc.bin
expect bad-hypercall-number 4 'guest ABI violation.*unknown hypercall number 77' '' -- \
	$MINIVMM --mem 16M tests/bin/badhcnr.bin

# SIGINT: the run stops, results are written, status 130.
signal_test sigint INT 'interrupted by SIGINT; stopped the guest'
jq_true sigint-json "$OUT/sigint.json" '.exit.reason == "interrupted" and .exit.status == 130'

# make install puts the VMM, the guest image and the man page under DESTDIR/PREFIX.
rm -rf "$OUT/inst"
run install make -s install PREFIX=/usr DESTDIR="$OUT/inst"
[ -x "$OUT/inst/usr/bin/minivmm" ] && [ -s "$OUT/inst/usr/lib/minivmm/guest.bin" ] &&
	[ -s "$OUT/inst/usr/share/man/man1/minivmm.1" ] && pass install ||
	fail install "$(cat "$OUT/install.err"; find "$OUT/inst" -type f)"
expect installed-runs 0 '' '^vcpus: 1$' -- "$OUT/inst/usr/bin/minivmm" --mem 64M \
	"$OUT/inst/usr/lib/minivmm/guest.bin" -- hello

# --raw: a flat binary, no header, entered at its first byte with a stack; 0xE9 prints, 0xF4 exits.
expect raw-guest 1 'guest exited with status 7' '^hello from a raw guest$' -- \
	$MINIVMM --raw --mem 16M -o "$OUT/raw.json" tests/bin/hello.raw
jq_true raw-guest-json "$OUT/raw.json" '.exit.reason == "guest-exit" and .exit.guest_status == 7'
expect raw-too-many-vcpus 2 'a --raw guest gets at most 8' '' -- $MINIVMM --raw --vcpus 9 --mem 16M tests/bin/hello.raw

# Images built for an older ABI keep running (include/minivmm_abi.h: every
# version since MVM_ABI_OLDEST only added): guests of ABI 1, 2 and 3, built
# from this repository's own history, boot and sweep on this minivmm; a
# feature their version lacks, or a version outside the range, is refused
# with what to do.
if git rev-parse --git-dir >/dev/null 2>&1 && command -v git >/dev/null; then
	A=$OUT/old-abi
	# Built once (tests/old-abi-images; tests/run builds them before the
	# emulated host boots: compiling there is 10-20x slower).
	tests/old-abi-images "$A"
	for v in 1 2 3; do
		if [ ! -s "$A/abi$v.commit" ]; then
			skip "old-abi-$v" "no commit with ABI $v in this clone's history"
			continue
		fi
		if [ ! -s "$A/abi$v.bin" ]; then
			fail "old-abi-$v-builds" "commit $(cut -c1-12 "$A/abi$v.commit"): $(tail -3 "$A/build$v.log")"
			continue
		fi
		expect "old-abi-$v-runs" 0 '' '^ +4 +[0-9.]+ +[0-9.]+' -- \
			$MINIVMM --mem 64M -o "$A/abi$v.json" "$A/abi$v.bin" -- sweep --max-mib 4 --iterations 1
		jq_true "old-abi-$v-recorded" "$A/abi$v.json" ".minivmm.image_abi == $v and .minivmm.abi >= $v and .exit.status == 0"
	done
	if [ -s "$A/abi2.bin" ]; then
		expect old-abi-2-numa-refused 2 'numa: the guest is built for ABI version 2, whose firmware does not read the /numa boot-info node \(ABI 3\): rebuild it against' '' -- \
			$MINIVMM -q --mem 64M --numa "$A/abi2.bin" -- hello
	fi
else
	skip old-abi "not a git clone: no history to build old images from"
fi
# Versions outside the range: the header's abi_version (offset 8) patched.
cp "$GUEST" "$OUT/abi-future.bin"
printf '\143\000\000\000' | dd of="$OUT/abi-future.bin" bs=1 seek=8 conv=notrunc status=none
expect abi-newer-image 2 "guest built for ABI version 99, newer than this minivmm's \(it runs images of ABI [0-9]+ to [0-9]+\): update minivmm, or rebuild the image against this minivmm's include/minivmm_abi.h" '' -- \
	$MINIVMM -q --mem 64M "$OUT/abi-future.bin" -- hello
cp "$GUEST" "$OUT/abi-zero.bin"
printf '\000\000\000\000' | dd of="$OUT/abi-zero.bin" bs=1 seek=8 conv=notrunc status=none
expect abi-older-than-oldest 2 'guest built for ABI version 0; this minivmm runs images of ABI [0-9]+ to [0-9]+: rebuild it .*; since then: ABI 1: ' '' -- \
	$MINIVMM -q --mem 64M "$OUT/abi-zero.bin" -- hello
