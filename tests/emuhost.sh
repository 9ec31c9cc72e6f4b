# The emulated KVM host's contract (scripts/emu-host), from outside it: the
# command's exit status and its two streams come back apart, it runs in the
# current directory with this shell's environment, the checkout is shared
# read-write and the root read-only, a status that never arrives is 125 (never
# 0), the hard timeout is 124 with the console's tail, and a bad option is
# refused before any boot. Four boots of a few seconds each (on any machine:
# QEMU TCG needs no KVM here).
EH="scripts/emu-host --mem 1024 --timeout 300"
eh_probe=$OUT/emuhost-probe.$$
rm -f "$eh_probe"
# One boot: status, streams, directory, environment, the two shares.
EMUHOST_MARK=seen-$$ run emuhost-contract $EH -- sh -c '
	echo to-stdout; echo to-stderr >&2
	echo "pwd=$(pwd)"; echo "mark=$EMUHOST_MARK emulated=$MINIVMM_EMULATED"
	echo written-inside >"$0"
	if echo x >/usr/.emuhost-probe 2>/dev/null; then echo usr-written-inside; fi
	exit 7' "$eh_probe"
rc=$(cat "$OUT/emuhost-contract.rc")
if [ "$rc" != 7 ]; then
	fail emuhost-status "exit status $rc, expected the command's 7; stderr: $(tail -c 600 "$OUT/emuhost-contract.err")"
else
	pass emuhost-status
fi
if grep -qx to-stdout "$OUT/emuhost-contract.out" && ! grep -q to-stderr "$OUT/emuhost-contract.out" &&
	grep -qx to-stderr "$OUT/emuhost-contract.err" && ! grep -q to-stdout "$OUT/emuhost-contract.err"; then
	pass emuhost-streams-apart
else
	fail emuhost-streams-apart "stdout: $(head -c 300 "$OUT/emuhost-contract.out"); stderr: $(head -c 300 "$OUT/emuhost-contract.err")"
fi
if grep -qx "pwd=$(pwd)" "$OUT/emuhost-contract.out" &&
	grep -qx "mark=seen-$$ emulated=1" "$OUT/emuhost-contract.out"; then
	pass emuhost-directory-and-environment
else
	fail emuhost-directory-and-environment "want pwd=$(pwd) and mark=seen-$$ emulated=1: $(head -c 400 "$OUT/emuhost-contract.out")"
fi
if [ "$(cat "$eh_probe" 2>/dev/null)" = written-inside ]; then
	pass emuhost-checkout-shared-rw
else
	fail emuhost-checkout-shared-rw "$eh_probe was not written through the share"
fi
# The root is read-only under an overlay: a write inside lands in tmpfs.
if [ -e /usr/.emuhost-probe ]; then
	rm -f /usr/.emuhost-probe
	fail emuhost-root-untouched "a write to /usr inside reached this machine's /usr"
else
	pass emuhost-root-untouched
fi
rm -f "$eh_probe"

# The machine powers off before any status is sent: 125, never 0.
run emuhost-no-status $EH --quiet -- sh -c 'echo 1 >/proc/sys/kernel/sysrq; echo o >/proc/sysrq-trigger; sleep 30'
rc=$(cat "$OUT/emuhost-no-status.rc")
if [ "$rc" = 125 ] && grep -q "status" "$OUT/emuhost-no-status.err"; then
	pass emuhost-missing-status-fails
else
	fail emuhost-missing-status-fails "exit status $rc, expected 125 with a message; stderr: $(tail -c 400 "$OUT/emuhost-no-status.err")"
fi

# The hard timeout: 124 and the console's tail.
run emuhost-timeout scripts/emu-host --mem 1024 --timeout 40 -- sleep 600
rc=$(cat "$OUT/emuhost-timeout.rc")
if [ "$rc" = 124 ] && grep -qi "console" "$OUT/emuhost-timeout.err"; then
	pass emuhost-timeout
else
	fail emuhost-timeout "exit status $rc, expected 124 with the console's tail; stderr: $(tail -c 400 "$OUT/emuhost-timeout.err")"
fi

# A bad option: exit 2 at once, nothing booted.
t0=$(date +%s)
expect emuhost-bad-mem 2 "--mem" "" -- scripts/emu-host --mem lots -- true
if [ $(($(date +%s) - t0)) -gt 5 ]; then
	fail emuhost-bad-mem-before-boot "took $(($(date +%s) - t0)) s: it booted before refusing"
else
	pass emuhost-bad-mem-before-boot
fi
