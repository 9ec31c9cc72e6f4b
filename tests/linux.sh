# Tier "linux": the Linux guest's side (guest/linux/, make linux-guest) without
# booting Linux (PVM emulates guest kernel code; the AMD rig boots it): the
# programs are static, the initramfs holds /init and the workloads, the ABI
# client's pagemap translation (as root), the workloads' arguments.
# Sourced by tests/run. The kernel (build/linux/vmlinuz) is not needed here.
LXD=build/linux
if ! make -s build/linux/initrd.cpio.gz build/linux/test-pagemap >"$OUT/linux-build.log" 2>&1; then
	fail linux-build "make build/linux/initrd.cpio.gz: $(tail -5 "$OUT/linux-build.log")"
else
	pass linux-build
	for p in init hello sweep-host; do
		if readelf -lW "$LXD/bin/$p" | grep -q 'INTERP'; then
			fail "linux-static-$p" "$LXD/bin/$p asks for a dynamic loader"
		else
			pass "linux-static-$p"
		fi
	done
	if cmp -s build/bench/sweep-host "$LXD/bin/sweep-host"; then
		pass linux-sweep-is-the-host-binary
	else
		fail linux-sweep-is-the-host-binary "build/linux/bin/sweep-host is not build/bench/sweep-host"
	fi
	list=$(zcat "$LXD/initrd.cpio.gz" | cpio -t --quiet 2>&1 | sort | tr '\n' ' ')
	if [ "$list" = ". bin bin/hello bin/sweep-host dev init proc " ]; then
		pass linux-initrd-listing
	else
		fail linux-initrd-listing "cpio -t lists: $list"
	fi
	if zcat "$LXD/initrd.cpio.gz" | cpio -tv --quiet 2>/dev/null | grep -Eq '^-rwx.* root +root .* init$'; then
		pass linux-initrd-init-executable
	else
		fail linux-initrd-init-executable "$(zcat "$LXD/initrd.cpio.gz" | cpio -tv --quiet 2>&1 | grep init)"
	fi
	# The translation against the kernel's own view of known frames (root reads PFNs).
	if [ "$(id -u)" = 0 ]; then
		"$LXD/test-pagemap" >"$OUT/linux-pagemap.log" 2>&1
		grep -E '^(PASS|FAIL)' "$OUT/linux-pagemap.log" ||
			fail lx-pagemap "no result: $(tail -3 "$OUT/linux-pagemap.log")"
	else
		skip lx-pagemap "needs root (/proc/self/pagemap hides PFNs otherwise)"
	fi
	# Arguments, on the host (no MINIVMM_GUEST: no port is touched).
	lx() { env -u MINIVMM_GUEST "$@" >"$OUT/lx.out" 2>"$OUT/lx.err"; echo $?; }
	lxcase() { # NAME EXPECTED-STATUS ERE-ON-STDOUT+STDERR CMD...
		local name=$1 want=$2 re=$3 got
		shift 3
		got=$(lx "$@")
		if [ "$got" != "$want" ]; then
			fail "$name" "exit $got, expected $want: $(cat "$OUT/lx.err")"
		elif ! cat "$OUT/lx.out" "$OUT/lx.err" | grep -Eq -- "$re"; then
			fail "$name" "does not say /$re/: $(head -c 300 "$OUT/lx.out" "$OUT/lx.err")"
		else
			pass "$name"
		fi
	}
	ln -sf "$(realpath "$LXD/bin/sweep-host")" "$OUT/flat"
	ln -sf "$(realpath "$LXD/bin/hello")" "$OUT/help"
	lxcase linux-args-sweep 0 '^   2 ' "$LXD/bin/sweep-host" --max-mib 2 --iterations 1
	lxcase linux-args-flat-by-name 0 'flat: one mapping' "$OUT/flat" --max-mib 2 --iterations 1 --progress-mib 0
	lxcase linux-args-bad-size 2 "max-mib: bad number 'x'" "$LXD/bin/sweep-host" --max-mib x
	lxcase linux-args-zero-iterations 2 "iterations: bad number '0'" "$OUT/flat" --iterations 0
	lxcase linux-args-bad-progress 2 "progress-mib: bad number '-1'" "$OUT/flat" --progress-mib -1
	lxcase linux-args-parallel 2 'measure on one CPU' "$OUT/flat" --parallel
	lxcase linux-args-unknown 2 'usage: sweep-host' "$LXD/bin/sweep-host" --nosuch
	lxcase linux-args-hello-status 7 "arguments: .*'--exit' '7'" "$LXD/bin/hello" --exit 7
	lxcase linux-args-hello-bad-status 2 "'300' is not a status" "$LXD/bin/hello" --exit 300
	lxcase linux-args-hello-stray 2 "unexpected argument 'x'" "$LXD/bin/hello" x
	lxcase linux-args-help 0 '^  flat \[--max-mib' "$OUT/help"
	lxcase linux-init-not-pid-1 2 'runs as PID 1 in a minivmm guest only' "$LXD/bin/init" hello
fi
# The initramfs on Debian's kernel, booted by QEMU's software emulation (no
# KVM, no minivmm: the kernel's own boot, /init as PID 1, the workload's
# arguments and exit status). QEMU ignores the hypercall port, so /init's
# MVM_HC_EXIT falls through to the exit port, which QEMU's isa-debug-exit
# turns into its own status: (status << 1) | 1. About 4 s a boot here.
lxboot() { # NAME EXPECTED-GUEST-STATUS ERE-ON-CONSOLE|"" WORKLOAD-ARGS...
	local name=$1 want=$2 re=$3 rc=0
	shift 3
	timeout 120 qemu-system-x86_64 -accel tcg -cpu max -m 256 -nographic -no-reboot -nic none \
		-device isa-debug-exit,iobase=0xf4,iosize=0x01 -kernel "$LXD/vmlinuz" \
		-initrd "$LXD/initrd.cpio.gz" -append "console=ttyS0 quiet panic=-1 ${LXPRE:-}-- $*" \
		</dev/null >"$OUT/$name.log" 2>&1 || rc=$?
	if [ $rc != $((want * 2 + 1)) ]; then
		fail "$name" "QEMU exited $rc, expected $((want * 2 + 1)) (guest status $want): $(tr -d '\r' <"$OUT/$name.log" | tail -5)"
	elif [ -n "$re" ] && ! tr -d '\r' <"$OUT/$name.log" | grep -Eq -- "$re"; then
		fail "$name" "the console does not say /$re/: $(tr -d '\r' <"$OUT/$name.log" | tail -5)"
	else
		pass "$name"
	fi
}
if ! command -v qemu-system-x86_64 >/dev/null; then
	skip linux-qemu "no qemu-system-x86_64 (Debian package qemu-system-x86)"
elif [ ! -f "$LXD/vmlinuz" ]; then
	skip linux-qemu "no $LXD/vmlinuz (make linux-guest)"
else
	lxboot linux-qemu-hello-status 7 '' hello --exit 7
	lxboot linux-qemu-flat 0 '' flat --max-mib 4 --iterations 2
	lxboot linux-qemu-unknown-workload 2 '' nosuch
	# A word the kernel does not know goes to /init's argv too: /init reads the
	# workload from /proc/cmdline's " -- " instead.
	LXPRE='nosuchword ' lxboot linux-qemu-unknown-kernel-word 7 '' hello --exit 7
	# Arguments as minivmm quotes them (issue 38): "two words" is one argument, the quotes gone.
	lxboot linux-qemu-quoted-arg 2 "hello: unexpected argument 'two words' \\(usage" hello '"two words"'
	lxboot linux-qemu-quoted-status 7 '' hello --exit '"7"'
	lxboot linux-qemu-too-big 2 'sweep --max-mib 100000 needs [0-9]+ MiB of free guest memory' sweep --max-mib 100000
fi
