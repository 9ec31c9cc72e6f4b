# Rig vmx (sourced by tests/rig/run): an Intel machine with VMX and EPT,
# emulated by Bochs 2.7 (Debian's bochs is built with VMX and EPT; QEMU's
# software emulation has none). One host core at ~100 M instructions/s:
# boot and insmod took 25-38 s here, the cases of tests/rig/cases 20-40 s.
rig_title="Bochs 2.7 corei7_icelake_u (Intel VMX + EPT, emulated)"
rig_vendor=vmx
rig_modules=(virt/lib/irqbypass arch/x86/kvm/kvm arch/x86/kvm/kvm-intel)
rig_tdp_param=kvm_intel/parameters/ept
rig_timeout=900 # 124-215 s alone; past 480 s once with a load of 10 on 2 cores (helpers and emulators beside CI)
# A panicking kernel reboots (panic=-1) and Bochs would boot it again: with
# reboot=t the reboot is a triple fault, on which Bochs stops
# (reset_on_triple_fault=0 below).
rig_append="reboot=t"
rig_numa_nodes=1 # one emulated CPU: the numa cases are skipped

BOCHS_PLUGINS=/usr/lib/x86_64-linux-gnu/bochs/plugins

rig_need() {
	need bochs-bin bochs
	need $BOCHS_PLUGINS/libbx_term_gui.so bochs-term
	need /usr/share/bochs/BIOS-bochs-latest bochsbios
	need /usr/share/vgabios/vgabios.bin vgabios
	need /usr/lib/ISOLINUX/isolinux.bin isolinux
	need /usr/lib/syslinux/modules/bios/ldlinux.c32 syslinux-common
	need xorriso xorriso
	need script bsdutils
}

# rig_boot KERNEL INITRD APPEND LOG TIMEOUT. Bochs cannot boot a bzImage, so
# the kernel goes on an isolinux CD. Its display is the curses `term` library
# on a pseudo-terminal that script(1) provides and nobody reads: no window and
# no listening port (rfb would open one). Debian builds Bochs with its
# debugger, which waits for a command at start: bochs.rc says continue.
# Bochs exits with status 1 when the guest powers off; the console log judges.
rig_boot() {
	local d
	d=$(realpath "$(dirname "$4")")
	rm -rf "$d/iso" "$4" "$4.raw"
	mkdir -p "$d/iso/isolinux"
	cp /usr/lib/ISOLINUX/isolinux.bin /usr/lib/syslinux/modules/bios/ldlinux.c32 "$d/iso/isolinux/"
	cp "$1" "$d/iso/vmlinuz"
	cp "$2" "$d/iso/initrd.gz"
	printf '%s\n' 'DEFAULT linux' 'PROMPT 0' 'TIMEOUT 0' 'LABEL linux' \
		'  KERNEL /vmlinuz' '  INITRD /initrd.gz' "  APPEND $3" >"$d/iso/isolinux/isolinux.cfg"
	xorriso -as mkisofs -quiet -o "$d/boot.iso" -b isolinux/isolinux.bin -c isolinux/boot.cat \
		-no-emul-boot -boot-load-size 4 -boot-info-table -J -R "$d/iso" 2>"$d/xorriso.log" ||
		die "xorriso could not build $d/boot.iso: $(cat "$d/xorriso.log")"
	# ips: the emulated clock's rate, close to what Bochs runs here. fastboot:
	# the BIOS skips its boot menu wait (300 M instructions).
	cat >"$d/bochsrc" <<RC
config_interface: textconfig
display_library: term
romimage: file=/usr/share/bochs/BIOS-bochs-latest, options=fastboot
vgaromimage: file=/usr/share/vgabios/vgabios.bin
memory: guest=$MEM_MIB, host=$MEM_MIB
cpu: model=corei7_icelake_u, count=${RIG_CPUS:-1}, ips=100000000, reset_on_triple_fault=0
pci: enabled=1, chipset=i440fx
clock: sync=none, time0=local
ata0-master: type=cdrom, path=$d/boot.iso, status=inserted
boot: cdrom
com1: enabled=1, mode=file, dev=$4.raw
log: $d/bochs.log
panic: action=fatal
error: action=report
info: action=report
debug: action=ignore
RC
	echo c >"$d/bochs.rc"
	# Bochs ignores SIGTERM; nothing is lost by killing it.
	local rc=0 cmd
	cmd=$(printf '%q ' timeout -s KILL "$5" bochs-bin -q -f "$d/bochsrc" -rc "$d/bochs.rc")
	script -qefc "$cmd" /dev/null </dev/null >"$d/bochs.out" 2>&1 || rc=$?
	# Bochs creates the serial file at the first byte: there may be none.
	touch "$4.raw"
	tr -d '\r' <"$4.raw" >"$4"
	return $rc
}
