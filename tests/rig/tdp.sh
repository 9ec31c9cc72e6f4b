# Rig tdp (sourced by tests/rig/run): an AMD machine with SVM and nested
# paging and two NUMA nodes, emulated by QEMU's TCG (-cpu max). Fast: about
# 10 s for the minivmm guest's cases, 10-15 s more for each Linux guest's
# (docs/guide.md, "Reliability of the Linux guest in the rig").
rig_title="QEMU -accel tcg -cpu max (AMD SVM + NPT, emulated)"
rig_vendor=svm
rig_modules=(virt/lib/irqbypass drivers/crypto/ccp/ccp arch/x86/kvm/kvm arch/x86/kvm/kvm-amd)
rig_tdp_param=kvm_amd/parameters/npt
rig_timeout=600 # the Linux guest's boots: 10-15 s each, at most their --timeout
rig_append= # -no-reboot stops QEMU when the kernel panics

rig_need() {
	need qemu-system-x86_64 qemu-system-x86
}

# rig_boot KERNEL INITRD APPEND LOG TIMEOUT: the emulated KVM host's machine
# (scripts/emu-host, the one way this tree starts an emulated QEMU machine)
# with the rig's initramfs instead of the shared root. Its TCG runs one
# thread (EMU_THREAD): with one host thread per CPU the L1 kernel sometimes
# hit a stray int3 in __schedule (an Oops, then a panic) while KVM's start or
# end of a VM patched the scheduler's static branch on the other CPU: 2 runs
# of about 20 here. Two NUMA nodes (SRAT from QEMU's ACPI tables): CPU 0 and
# half the memory on node 0, CPU 1 and the rest on node 1; the numa cases
# place guest RAM on them.
rig_numa_nodes=2
# The Linux guest's cases (run_linux in tests/rig/cases) run here.
rig_linux=1
rig_boot() {
	scripts/emu-host --boot "$1" "$2" "$3" "$4" --mem "$MEM_MIB" --smp 2 --numa 2 --timeout "$5"
}
