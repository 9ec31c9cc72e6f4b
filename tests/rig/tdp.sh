# Rig tdp (sourced by tests/rig/run): an AMD machine with SVM and nested
# paging and two NUMA nodes, emulated by QEMU's TCG (-cpu max). Fast: about
# 10 s for the minivmm guest's cases, 10-15 s more for each Linux guest's
# (docs/rigs.md, "Reliability").
rig_title="QEMU -accel tcg -cpu max (AMD SVM + NPT, emulated)"
rig_vendor=svm
rig_modules=(virt/lib/irqbypass drivers/crypto/ccp/ccp arch/x86/kvm/kvm arch/x86/kvm/kvm-amd)
rig_tdp_param=kvm_amd/parameters/npt
rig_timeout=600 # the Linux guest's boots: 10-15 s each, at most their --timeout
rig_append= # -no-reboot stops QEMU when the kernel panics

rig_need() {
	need qemu-system-x86_64 qemu-system-x86
}

# rig_boot KERNEL INITRD APPEND LOG TIMEOUT: QEMU boots the kernel directly;
# -nographic puts the serial line on stdout and opens no display or port.
# thread=single: with one host thread per CPU (multi-threaded TCG) the L1
# kernel sometimes hit a stray int3 in __schedule (an Oops, then a panic)
# while KVM's start or end of a VM patched the scheduler's static branch on
# the other CPU: 2 runs of about 20 here. One thread emulates both CPUs in turn.
# Two NUMA nodes (SRAT from QEMU's ACPI tables): CPU 0 and half the memory on
# node 0, CPU 1 and the rest on node 1; the numa cases place guest RAM on them.
rig_numa_nodes=2
# The Linux guest's cases (run_linux in tests/rig/cases) run here.
rig_linux=1
rig_boot() {
	local rc=0 m0=$((MEM_MIB / 2))
	timeout -k 10 "$5" qemu-system-x86_64 -accel tcg,thread=single -cpu max -m "$MEM_MIB" -smp 2 \
		-object memory-backend-ram,id=m0,size=${m0}M -object memory-backend-ram,id=m1,size=$((MEM_MIB - m0))M \
		-numa node,nodeid=0,cpus=0,memdev=m0 -numa node,nodeid=1,cpus=1,memdev=m1 \
		-kernel "$1" -initrd "$2" -append "$3" -nographic -no-reboot -nic none \
		</dev/null >"$4.raw" || rc=$?
	tr -d '\r' <"$4.raw" >"$4"
	return $rc
}
