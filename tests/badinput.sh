# Bad input: each ends with one clear message and exit status 2, 3 or 4.
B=$OUT/badinput
mkdir -p "$B"
: >"$B/empty.bin"
truncate -s 65M "$B/huge.bin"
head -c 65536 /dev/urandom >"$B/random.bin"
printf '#!/bin/sh\necho this is not a guest\n' >"$B/text.bin"
# The real guest, with its header claiming another load address (offset 16).
cp "$GUEST" "$B/otherload.bin"
printf '\x00\x00\x20\x00\x00\x00\x00\x00' | dd of="$B/otherload.bin" bs=1 seek=16 conv=notrunc 2>/dev/null

expect missing-image 2 'guest image .*nonexistent.bin: No such file or directory' '' -- \
	$MINIVMM --mem 64M "$B/nonexistent.bin"
expect empty-image 2 'empty file' '' -- $MINIVMM --mem 64M "$B/empty.bin"
expect oversized-image 2 'larger than the 64 MiB limit' '' -- $MINIVMM --mem 1G "$B/huge.bin"
expect directory-image 2 'not a regular file' '' -- $MINIVMM --mem 64M "$B"
expect random-image 2 'not a minivmm guest' '' -- $MINIVMM --mem 64M "$B/random.bin"
expect text-image 2 'not a minivmm guest' '' -- $MINIVMM --mem 64M "$B/text.bin"
expect other-load-address 2 'built for load address 0x200000' '' -- \
	$MINIVMM --mem 64M "$B/otherload.bin"
expect mem-garbage 2 "--mem: 'lots' is not a size" '' -- $MINIVMM --mem lots "$GUEST"
expect mem-zero 2 '--mem 0: below the minimum' '' -- $MINIVMM --mem 0 "$GUEST"
expect mem-unaligned 2 '--mem 65M: not a multiple of 2M; write --mem 64M or --mem 66M$' '' -- $MINIVMM --mem 65M "$GUEST"
expect mem-below-minimum 2 '--mem 7M: below the minimum of 8M; write --mem 8M or more$' '' -- $MINIVMM --mem 7M "$GUEST"
# Lazy guest RAM beyond MemAvailable runs, and says once that it is overcommitted;
# eager beyond it is refused with the --mem that fits.
over=$(awk '/^MemAvailable:/ { m = int($2 / 1024 / 1024) * 2 + 2; print (m > 1024 ? 1024 : m) "G" }' /proc/meminfo)
expect mem-overcommitted-note 0 'note: --mem [0-9]+ MiB is more than the host.s [0-9]+ MiB available \(MemAvailable\): guest RAM is overcommitted.*--mem [0-9]+M or less fits now' '' -- \
	$MINIVMM -q --mem "$over" "$GUEST" -- hello
[ "$(grep -c overcommitted "$OUT/mem-overcommitted-note.err")" = 1 ] && pass mem-overcommitted-once ||
	fail mem-overcommitted-once "$(cat "$OUT/mem-overcommitted-note.err")"
expect mem-eager-beyond-available 3 'MiB available \(MemAvailable\); use --mem [0-9]+M or less, or leave out --eager' '' -- \
	$MINIVMM -q --mem "$over" --eager=populate "$GUEST" -- hello
# --dry-run: options checked as a run checks them, nothing run, exit 0 or 2.
expect dry-run-valid 0 '' '^minivmm --dry-run: the options are valid; nothing was run$' -- \
	$MINIVMM --dry-run --mem 64M --compare=lazy,eager "$GUEST" -- flat
grep -q platform "$OUT/dry-run-valid.out" && fail dry-run-runs-nothing "$(head -2 "$OUT/dry-run-valid.out")" ||
	pass dry-run-runs-nothing
expect dry-run-refuses 2 '--backing hugetlb1g: --mem must be a multiple of its 1 GiB pages' '' -- \
	$MINIVMM --dry-run --mem 1536M --backing hugetlb1g -- flat
expect timeout-with-unit 2 '--timeout 5s: SEC is a plain number of seconds; write --timeout 5$' '' -- \
	$MINIVMM --timeout 5s "$GUEST"
expect mem-below-image 2 'too small for this guest' '' -- $MINIVMM --mem 8M "$GUEST"
# The same message says what to type.
grep -q -- 'use --mem 10M or more' "$OUT/mem-below-image.err" && pass mem-below-image-fits ||
	fail mem-below-image-fits "stderr does not say 'use --mem 10M or more': $(head -c 600 "$OUT/mem-below-image.err")"
expect vcpus-zero 2 '--vcpus 0: need at least one vCPU' '' -- $MINIVMM --vcpus 0 "$GUEST"
# The guest's header is checked first; a copy claiming 65536 vCPUs (its max_vcpus at
# offset 12) reaches KVM's own limit: --vcpus 65536 is above every KVM_CAP_MAX_VCPUS
# (x86's largest is 4096), so KVM's limit refuses before any vCPU or fd is made.
cp "$GUEST" "$B/wide.bin"
printf '\000\000\001\000' | dd of="$B/wide.bin" bs=1 seek=12 conv=notrunc status=none
expect vcpus-above-kvm 2 '^minivmm: --vcpus 65536: this KVM supports at most [0-9]+ \(KVM_CAP_MAX_VCPUS\)$' '' -- \
	$MINIVMM --mem 64M --vcpus 65536 "$B/wide.bin"
# Within KVM's limit, past RLIMIT_NOFILE's: two fds a vCPU. `ulimit -n` sets the hard
# limit too, so raising the soft one cannot help: refused with the number to ask for.
expect vcpus-above-fd-limit 2 '^minivmm: --vcpus 100: needs ([0-9]+) open files .* RLIMIT_NOFILE allows 64 \(hard limit 64\): raise it with ulimit -n [0-9]+ ' '' -- \
	sh -c "ulimit -n 64 && exec $MINIVMM --mem 64M --vcpus 100 $B/wide.bin"
need=$(sed -n 's/.*needs \([0-9]*\) open files.*/\1/p' "$OUT/vcpus-above-fd-limit.err")
grep -q "ulimit -n $need " "$OUT/vcpus-above-fd-limit.err" && [ "${need:-0}" -gt 100 ] &&
	pass vcpus-above-fd-limit-says-needed || fail vcpus-above-fd-limit-says-needed "$(cat "$OUT/vcpus-above-fd-limit.err")"
# A soft limit below the need and a hard one above it: raised silently, the run goes on.
hard=$(ulimit -Hn)
if [ "$hard" = unlimited ] || [ "$hard" -ge 128 ]; then
	expect vcpus-fd-soft-limit-raised 0 '' '^hello from the minivmm guest' -- \
		sh -c "ulimit -Sn 16 && exec $MINIVMM --mem 64M --vcpus 2 $GUEST -- hello"
	grep -q RLIMIT_NOFILE "$OUT/vcpus-fd-soft-limit-raised.err" &&
		fail vcpus-fd-soft-limit-raised-silently "$(cat "$OUT/vcpus-fd-soft-limit-raised.err")" ||
		pass vcpus-fd-soft-limit-raised-silently
else
	skip vcpus-fd-soft-limit-raised "the hard RLIMIT_NOFILE here is $hard"
fi
expect vcpus-above-guest 2 'this guest supports at most 256' '' -- \
	$MINIVMM --mem 64M --vcpus 300 "$GUEST"
expect unknown-option 2 "unknown option '--frobnicate'" '' -- $MINIVMM --frobnicate "$GUEST"
grep -q 'did you mean' "$OUT/unknown-option.err" && fail unknown-option-no-guess "$(cat "$OUT/unknown-option.err")" ||
	pass unknown-option-no-guess
# Messages that say what to type (issue 26).
expect option-nearest 2 "unknown option '--memory'; did you mean --mem\?" '' -- $MINIVMM --memory 64M "$GUEST"
expect option-nearest-swap 2 "unknown option '--eagre'; did you mean --eager\?" '' -- $MINIVMM --eagre "$GUEST"
expect option-no-abbreviation 2 "'--vcpu' is short for --vcpus: minivmm takes options by their full names only; write --vcpus" '' -- \
	$MINIVMM --vcpu 2 --mem 64M "$GUEST" -- hello
expect option-after-image 2 "'--mem' after the guest image: options go before the image .*; write: $MINIVMM --mem 64M $GUEST -- hello\$" '' -- \
	$MINIVMM "$GUEST" --mem 64M -- hello
expect workload-without-dashes 2 "guest image 'hello': no such file; if hello is a workload .*; write: $MINIVMM --mem 64M -- hello\$" '' -- \
	$MINIVMM --mem 64M hello
expect guest-args-without-dashes 2 "unexpected argument 'flat' after the guest image .*; write: $MINIVMM --mem 64M $GUEST -- flat --max-mib 4\$" '' -- \
	$MINIVMM --mem 64M "$GUEST" flat --max-mib 4
# The command lines suggested run.
for n in option-after-image workload-without-dashes guest-args-without-dashes; do
	line=$(sed -n 's/.*; write: //p' "$OUT/$n.err")
	run "$n-runs" sh -c "$line >/dev/null"
	[ "$(cat "$OUT/$n-runs.rc")" = 0 ] && pass "$n-suggestion-runs" ||
		fail "$n-suggestion-runs" "'$line': status $(cat "$OUT/$n-runs.rc")"
done
expect mem-without-unit 2 '--mem 64: read as 64 bytes \(no K/M/G/T suffix\), below the minimum of 8M; for 64 MiB write --mem 64M' '' -- \
	$MINIVMM --mem 64 "$GUEST"
expect raw-without-raw 2 'no "MINIVMM" header .*runs with --raw' '' -- $MINIVMM --mem 64M tests/bin/hello.raw
# Without an image: the guest.bin beside minivmm (here guest/guest.bin); a lone binary says what it looked for.
expect no-image-default-guest 0 '' '^hello from the minivmm guest' -- $MINIVMM --mem 64M -- hello
mkdir -p "$B/lone" && cp "$MINIVMM" "$B/lone/minivmm"
expect no-image-none-beside 2 'no guest image given, and none found beside minivmm' '' -- "$B/lone/minivmm" --mem 64M
expect guest-args-too-long 2 'guest arguments' '' -- \
	$MINIVMM --mem 64M "$GUEST" -- $(seq 1 100)
expect help 0 '' '^Exit status' -- $MINIVMM --help
expect version 0 '' '^minivmm [0-9.]+ \(guest ABI 5\)$' -- $MINIVMM --version
# No /dev/kvm: hide it in a private mount namespace (needs root and unshare).
# One line says why, read from the machine (a KVM host: the kernel's device
# has no node here; this kernel or CPU has no KVM), and the line that runs
# the same command in an emulated KVM host.
no_kvm_why='KVM: open /dev/kvm: No such file or directory: (the kernel has (a )?KVM|this kernel has no KVM|this CPU has neither vmx nor svm)'
no_kvm_emu='\. Run the same line in an emulated KVM host(, from a minivmm checkout)?: ([^ ]*/)?scripts/emu-host -- [^ ]*minivmm'
if [ "$(id -u)" = 0 ] && command -v unshare >/dev/null; then
	expect no-dev-kvm 3 "$no_kvm_why.*$no_kvm_emu --mem 64M $GUEST -- hello 'a b'\$" '' -- \
		unshare -m sh -c "mount -t tmpfs none /dev && exec $MINIVMM --mem 64M $GUEST -- hello 'a b'"
	[ "$(wc -l <"$OUT/no-dev-kvm.err")" = 1 ] && pass no-dev-kvm-one-line ||
		fail no-dev-kvm-one-line "$(cat "$OUT/no-dev-kvm.err")"
	# Above 1 GiB of guest RAM the emulated host is asked for it and 2 GiB more;
	# --compare names no mode (none could run); the results file says the same.
	expect no-dev-kvm-compare 3 "$no_kvm_why.*scripts/emu-host --mem 6144 -- [^ ]*minivmm -q -o [^ ]*no-dev-kvm-compare.json --compare --mem 4G $GUEST\$" '' -- \
		unshare -m sh -c "mount -t tmpfs none /dev && exec $MINIVMM -q -o $OUT/no-dev-kvm-compare.json --compare --mem 4G $GUEST"
	jq_true no-dev-kvm-results "$OUT/no-dev-kvm-compare.json" \
		'.exit.status == 3 and .exit.reason == "host-error" and (.exit.message | test("scripts/emu-host --mem 6144 -- ")) and (.runs[0].platform.kvm == "") and (.runs[0].platform.paging == "none")'
	# The tools that run guests say the same (scripts/need-kvm), with their own line.
	expect need-kvm-says-why 3 "^tool: $no_kvm_why" '' -- \
		unshare -m sh -c "mount -t tmpfs none /dev && exec scripts/need-kvm tool --mem 99 -- bench/x 'a b'"
	if grep -q "^tool: run it in an emulated KVM host: scripts/emu-host --mem 99 -- bench/x 'a b'" "$OUT/need-kvm-says-why.err" &&
		! grep -q 'Run the same line' "$OUT/need-kvm-says-why.err"; then
		pass need-kvm-emu-line
	else
		fail need-kvm-emu-line "$(cat "$OUT/need-kvm-says-why.err")"
	fi
else
	skip no-dev-kvm "needs root and unshare"
fi
# /dev/kvm that this user may not open: the message says root or the device's group.
NOBODY="setpriv --reuid=65534 --regid=65534 --clear-groups"
if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null || ! command -v unshare >/dev/null; then
	skip kvm-permission "needs root, setpriv and unshare"
else
	if [ ! -e /dev/kvm ]; then
		skip kvm-permission "no /dev/kvm here (kvm-permission-group makes its own)"
	elif $NOBODY test -w /dev/kvm; then
		skip kvm-permission "everybody may open /dev/kvm here"
	else
		expect kvm-permission 3 'KVM: open /dev/kvm: Permission denied: run minivmm as root' '' -- \
			$NOBODY $MINIVMM --mem 64M $GUEST -- hello
	fi
	# A device node of a group's own (Debian: kvm, 0660), in a private /dev.
	expect kvm-permission-group 3 "Permission denied: run minivmm as root, or as a member of its group 'disk' \(usermod -aG disk USER" '' -- \
		unshare -m sh -c "mount -t tmpfs none /dev && mknod -m 0660 /dev/kvm c 10 232 && chgrp disk /dev/kvm && exec $NOBODY $MINIVMM --mem 64M $GUEST -- hello"
fi
# Each failure prints exactly one line on stderr (the message).
one_line=1
for n in missing-image empty-image random-image mem-below-image vcpus-above-kvm vcpus-above-fd-limit; do
	[ "$(wc -l <"$OUT/$n.err")" = 1 ] || one_line=0
done
[ $one_line = 1 ] && pass one-line-messages || fail one-line-messages "more than one stderr line"

# Messages a newcomer hits: each says what is wrong and what to type.
expect eager-needs-equals 2 "'populate' after --eager is taken as the guest image: write --eager=populate" '' -- \
	$MINIVMM --eager populate "$GUEST"
expect eager-threads-with-touch 2 '--eager=touch runs in the guest, one vCPU per slice' '' -- \
	$MINIVMM --eager=touch --eager-threads 2 "$GUEST"
expect max-mib-zero 2 "--max-mib needs a number from 1 to" '' -- $MINIVMM -q --mem 64M "$GUEST" -- flat --max-mib 0
expect flat-too-big-for-mem 2 'flat --max-mib 64 needs 127 MiB of free guest memory .* run minivmm with --mem [0-9]+M or more' '' -- \
	$MINIVMM -q --mem 16M "$GUEST" -- flat --max-mib 64
# The suggested --mem is enough.
sug=$(grep -o -- '--mem [0-9]*M' "$OUT/flat-too-big-for-mem.err" | head -1)
expect flat-suggested-mem-fits 0 '' '' -- $MINIVMM -q $sug "$GUEST" -- flat --max-mib 64 --iterations 1
expect quiet-shows-guest-error 2 "guest's last console output:.*|unknown option '--bogus'" '' -- \
	$MINIVMM -q --mem 64M "$GUEST" -- sweep --bogus
grep -q "unknown option '--bogus'" "$OUT/quiet-shows-guest-error.err" && pass quiet-error-text ||
	fail quiet-error-text "$(cat "$OUT/quiet-shows-guest-error.err")"
expect one-iteration-singular 0 '' '1 iteration,' -- $MINIVMM --mem 64M "$GUEST" -- flat --max-mib 2 --iterations 1
