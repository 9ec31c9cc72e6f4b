# Tier "kernel": minivmm's side of a Linux guest (--kernel, vmm/boot/linux*.c)
# with crafted bzImages (tests/kernel/mkbzimage: a real setup header, and at
# the 64-bit entry a few instructions of tests/kernel/payload.S instead of a
# kernel), so that it runs on PVM too: the header checks, the initrd's and
# the command line's limits, the PVM refusal, and (--kernel-anyway) the zero
# page, the boot timer, a panic, a reset, a triple fault, a hang and a
# serial flood. Each case checks the status, the message and that the
# results file was written. The real kernel boots in the AMD rig (rig cases
# linux-*).
K=$OUT/kernel
mkdir -p "$K"
kmake() { # NAME MODE [mkbzimage options]
	local name=$1 mode=$2
	shift 2
	gcc -c -DMODE_"$mode" -o "$K/$mode.o" tests/kernel/payload.S &&
		objcopy -O binary -j .text "$K/$mode.o" "$K/$mode.bin" &&
		tests/kernel/mkbzimage "$K/$name" "$K/$mode.bin" "$@"
}
kmake zp.bz ZP && kmake timer.bz TIMER && kmake panic.bz PANIC && kmake reset.bz RESET &&
	kmake triple.bz TRIPLE && kmake hang.bz HANG && kmake flood.bz FLOOD &&
	kmake nohdrs.bz ZP --no-hdrs && kmake old.bz ZP --version 0x020a &&
	kmake no64.bz ZP --no-64 && kmake trunc.bz ZP --truncate 1500 &&
	kmake short-cmdline.bz ZP --cmdline-size 80 && kmake low-initrd.bz ZP --initrd-max 0x15fffff &&
	kmake big.bz ZP --init-size 0x8000000 &&
	kmake wrap.bz ZP --pref-address 0xfffffffffe000000 --code-bytes $((34 << 20)) || fail kernel-fixtures "could not build the crafted bzImages"
head -c $((3 << 20)) /dev/urandom >"$K/initrd.img"
# PVM emulates guest kernel code: a real boot takes minutes, so it is refused
# unless asked for; every crafted kernel here needs only a few instructions.
any=
if grep -q . /sys/module/kvm_pvm/initstate 2>/dev/null || [ -d /sys/module/kvm_pvm ]; then any=--kernel-anyway; fi
kx() { # NAME STATUS STDERR-ERE -- ARGS... : minivmm with -o NAME.json; the file must be written
	local name=$1 status=$2 re=$3
	shift 4
	expect "$name" "$status" "$re" '' -- $MINIVMM -q -o "$K/$name.json" "$@"
	if [ "$(cat "$OUT/$name.rc")" = "$status" ]; then
		jq_true "$name-results" "$K/$name.json" '.exit.status == '"$status"
	fi
}

# Bad input, refused before any KVM call (exit 2).
kx kernel-not-bzimage 2 'not a Linux bzImage: no "HdrS"' -- --kernel "$K/nohdrs.bz" --mem 64M
kx kernel-protocol-old 2 'boot protocol 2.10 is too old: minivmm needs 2.12' -- --kernel "$K/old.bz" --mem 64M
kx kernel-no-64bit 2 'no 64-bit entry point \(XLF_KERNEL_64' -- --kernel "$K/no64.bz" --mem 64M
kx kernel-truncated 2 'bzImage is truncated: 1500 bytes, its header says' -- --kernel "$K/trunc.bz" --mem 64M
kx kernel-missing 2 'kernel .*nonexistent: No such file or directory' -- --kernel "$K/nonexistent" --mem 64M
kx kernel-initrd-missing 2 'initrd .*nonexistent.img: No such file or directory' -- \
	--kernel "$K/zp.bz" --initrd "$K/nonexistent.img" --mem 64M
kx kernel-initrd-too-big 2 'does not fit: it must lie above the kernel.s 20 MiB and below the kernel.s initrd_addr_max \(22 MiB\); use a smaller initrd$' -- \
	--kernel "$K/low-initrd.bz" --initrd "$K/initrd.img" --mem 64M
kx kernel-ram-too-small 2 '--mem 32 MiB is too small for this kernel \(9.9.9-fixture: 20 MiB to decompress in, the initrd above it,\) and room to boot: use --mem 56M or more' -- \
	--kernel "$K/zp.bz" --initrd "$K/initrd.img" --mem 32M
kx kernel-big-ram-too-small 2 'too small for this kernel \(9.9.9-fixture: 144 MiB' -- --kernel "$K/big.bz" --mem 64M
kx kernel-cmdline-too-long 2 'the kernel command line is [0-9]+ bytes .*this kernel takes at most 80 \(cmdline_size\)' -- \
	--kernel "$K/short-cmdline.bz" --mem 64M -- hello with arguments that make it long
# pref_address 2^64 - 32 MiB and 34 MiB of code: the end wraps to 2 MiB (issue 38: --mem 34M then passed, and placing the kernel wrote through NULL).
kx kernel-pref-address-wraps 2 "bzImage.s header is inconsistent \(pref_address 0xfffffffffe000000, init_size 0x400000, 35651584 bytes of code\): it does not fit below 3072 MiB" -- \
	--kernel "$K/wrap.bz" --mem 34M
kx kernel-mem-above-3g 2 'more than a Linux guest gets here, 3072 MiB' -- --kernel "$K/zp.bz" --mem 4G
expect kernel-and-image 2 "--kernel .*zp.bz boots a Linux guest, and 'guest/guest.bin' would be a minivmm guest image too" '' -- \
	$MINIVMM --kernel "$K/zp.bz" guest/guest.bin
expect kernel-eager-touch 2 '--eager=touch is the minivmm guest.s' '' -- \
	$MINIVMM --kernel "$K/zp.bz" --eager=touch --mem 64M
expect kernel-initrd-alone 2 '--initrd is about a Linux guest: add --kernel FILE' '' -- \
	$MINIVMM --initrd "$K/initrd.img" guest/guest.bin
# No /dev/kvm (hidden in a private /dev): no guest ran, so no line tells how its boot went.
if [ "$(id -u)" = 0 ] && command -v unshare >/dev/null; then
	expect kernel-no-kvm 3 'KVM: open /dev/kvm: No such file or directory: .*scripts/emu-host -- [^ ]*minivmm --kernel' '' -- \
		unshare -m sh -c "mount -t tmpfs none /dev && exec $MINIVMM --kernel $K/zp.bz --mem 64M -- hello"
	if grep -q 'init' "$OUT/kernel-no-kvm.out"; then
		fail kernel-no-kvm-no-boot "stdout tells of a boot that never was: $(cat "$OUT/kernel-no-kvm.out")"
	else
		pass kernel-no-kvm-no-boot
	fi
else
	skip kernel-no-kvm "needs root and unshare"
fi
# The platform: PVM refuses with exit 3 and the rig line for the same command.
if [ -n "$any" ]; then
	kx kernel-pvm-refused 3 "this /dev/kvm is PVM.*make rig RIG=tdp ARGS='-q -o [^ ]*kernel-pvm-refused.json --kernel [^ ]*zp.bz --mem 64M -- hello'; or add --kernel-anyway" -- \
		--kernel "$K/zp.bz" --mem 64M -- hello
	jq_true kernel-pvm-refused-reason "$K/kernel-pvm-refused.json" '.exit.reason == "platform"'
	expect kernel-pvm-refused-compare 3 '--compare: mode lazy .*cannot run here.*PVM' '' -- \
		$MINIVMM -q --compare --kernel "$K/zp.bz" --mem 64M
else
	skip kernel-pvm-refused "not on PVM"
fi

# Running the crafted entries (emulated on PVM: a few instructions each).
kx kernel-zero-page 1 'guest exited with status 3' -- $any --kernel "$K/zp.bz" --initrd "$K/initrd.img" --mem 64M -- flat "two words"
# The payload printed the command line the zero page points to; exit status = e820 entries (3).
expect kernel-zero-page-cmdline 1 '' '^console=ttyS0 reboot=k panic=-1 acpi=off pci=off i8042.noaux i8042.nomux nomodule tsc=reliable quiet -- flat "two words"$' -- \
	$MINIVMM --kernel "$K/zp.bz" $any --mem 64M -- flat "two words"
jq_true kernel-results-guest "$K/kernel-zero-page.json" \
	'.guest.kind == "linux" and .guest.kernel_release == "9.9.9-fixture" and .guest.boot_protocol == 527 and .guest.initrd_bytes == 3145728 and (.guest.cmdline | endswith(" -- flat \"two words\"")) and .config.guest_args == ["flat", "two words"]'
expect kernel-cmdline-own 1 '' '^root=none -- x$' -- $MINIVMM --kernel "$K/zp.bz" $any --mem 64M --append root=none -- x
kx kernel-boot-timer 0 '' -- $any --kernel "$K/timer.bz" --mem 64M
jq_true kernel-boot-timer-first-kept "$K/kernel-boot-timer.json" \
	'.devices.boot_timer_writes == 3 and .devices.boot_timer_other == 1 and ([.timeline[] | select(.phase == "init_start")] | length == 1) and .guest.init_start_ms > 0 and .guest.kernel_boot_ms >= 0'
expect kernel-time-to-init 0 '' '^linux guest 9.9.9-fixture: time to init .* \(the kernel.s boot, guest_entry to init_start: ' -- \
	$MINIVMM --kernel "$K/timer.bz" $any --mem 64M
kx kernel-panic 4 'guest kernel panicked \(vCPU 0, then i8042 reset: 0xFE to port 0x64\): Kernel panic - not syncing: VFS: Unable to mount root fs.*end Kernel panic' -- \
	$any --kernel "$K/panic.bz" --mem 64M
jq_true kernel-panic-reason "$K/kernel-panic.json" '.exit.reason == "guest-panic"'
kx kernel-reset 0 '' -- $any --kernel "$K/reset.bz" --mem 64M
jq_true kernel-reset-reason "$K/kernel-reset.json" '.exit.reason == "guest-reset" and (.exit.message | test("guest reset the machine \\(vCPU 0: i8042 reset"))'
kx kernel-triple-fault 4 'guest crashed on vCPU 0: triple fault \(rip=.*with no panic on its console \(before /init started\)' -- \
	$any --kernel "$K/triple.bz" --mem 64M
kx kernel-never-init 5 'timeout' -- $any --kernel "$K/hang.bz" --mem 64M --timeout 2
expect kernel-never-init-says 5 '' '/init never started \(no write of 123 to the boot timer, port 0x514\)' -- \
	$MINIVMM --kernel "$K/hang.bz" $any --mem 64M --timeout 2
# A flood of console bytes ends at its --timeout, kept within the console's bound.
kx kernel-serial-flood 5 'timeout' -- $any --kernel "$K/flood.bz" --mem 64M --timeout 3
jq_true kernel-serial-flood-bounded "$K/kernel-serial-flood.json" \
	'.devices.console_bytes > 10000 and .devices.console_bytes <= 16777216 and .exit.reason == "timeout"'
# --vcpus N: the MP table is there (the crafted entry runs on vCPU 0; the others wait for SIPI).
kx kernel-vcpus 0 '' -- $any --kernel "$K/timer.bz" --mem 64M --vcpus 4
# Every option of a run applies to a Linux guest as to a minivmm image.
kx kernel-compare 0 '' -- $any --kernel "$K/timer.bz" --mem 64M --compare=lazy,eager,background,uffd
jq_true kernel-compare-modes "$K/kernel-compare.json" '[.runs[] | .guest.kind == "linux" and .devices.boot_timer_writes == 3] | length == 4 and all'
kx kernel-repeat 0 '' -- $any --kernel "$K/timer.bz" --mem 64M --repeat 2
kx kernel-record-touch 0 '' -- $any --kernel "$K/timer.bz" --mem 64M --paging uffd --record-touch "$K/timer.touch"
if grep -q '^minivmm-touch-order 1 .* guest=timer.bz$' "$K/timer.touch" 2>/dev/null; then
	pass kernel-record-touch-header
else
	fail kernel-record-touch-header "$(head -c 300 "$K/timer.touch" 2>&1)"
fi
kx kernel-replay 0 '' -- $any --kernel "$K/timer.bz" --mem 64M --eager=background --eager-order "$K/timer.touch"
kx kernel-eager-vcpus 0 '' -- $any --kernel "$K/timer.bz" --mem 64M --eager=populate --vcpus 2 --trace "$K/timer.trace"
# A hang says where each vCPU was when the timeout stopped it.
expect kernel-never-init-where 5 '' 'vCPU 0 at the timeout: rip=0x1002' -- \
	$MINIVMM --kernel "$K/hang.bz" $any --mem 64M --vcpus 2 --timeout 1
