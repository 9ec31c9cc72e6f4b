/* KVM exit dispatch: a table indexed by exit reason, bounds- and NULL-checked. */
#include "internal.h"

#include <string.h>

typedef enum vcpu_action (*exit_fn)(struct vm *vm, struct vcpu *v);

static const char *const exit_names[] = {
	[KVM_EXIT_UNKNOWN] = "KVM_EXIT_UNKNOWN",
	[KVM_EXIT_EXCEPTION] = "KVM_EXIT_EXCEPTION",
	[KVM_EXIT_IO] = "KVM_EXIT_IO",
	[KVM_EXIT_HYPERCALL] = "KVM_EXIT_HYPERCALL",
	[KVM_EXIT_DEBUG] = "KVM_EXIT_DEBUG",
	[KVM_EXIT_HLT] = "KVM_EXIT_HLT",
	[KVM_EXIT_MMIO] = "KVM_EXIT_MMIO",
	[KVM_EXIT_IRQ_WINDOW_OPEN] = "KVM_EXIT_IRQ_WINDOW_OPEN",
	[KVM_EXIT_SHUTDOWN] = "KVM_EXIT_SHUTDOWN",
	[KVM_EXIT_FAIL_ENTRY] = "KVM_EXIT_FAIL_ENTRY",
	[KVM_EXIT_INTR] = "KVM_EXIT_INTR",
	[KVM_EXIT_SET_TPR] = "KVM_EXIT_SET_TPR",
	[KVM_EXIT_TPR_ACCESS] = "KVM_EXIT_TPR_ACCESS",
	[KVM_EXIT_NMI] = "KVM_EXIT_NMI",
	[KVM_EXIT_INTERNAL_ERROR] = "KVM_EXIT_INTERNAL_ERROR",
	[KVM_EXIT_OSI] = "KVM_EXIT_OSI",
	[KVM_EXIT_WATCHDOG] = "KVM_EXIT_WATCHDOG",
	[KVM_EXIT_EPR] = "KVM_EXIT_EPR",
	[KVM_EXIT_SYSTEM_EVENT] = "KVM_EXIT_SYSTEM_EVENT",
	[KVM_EXIT_IOAPIC_EOI] = "KVM_EXIT_IOAPIC_EOI",
	[KVM_EXIT_HYPERV] = "KVM_EXIT_HYPERV",
	[KVM_EXIT_X86_RDMSR] = "KVM_EXIT_X86_RDMSR",
	[KVM_EXIT_X86_WRMSR] = "KVM_EXIT_X86_WRMSR",
	[KVM_EXIT_DIRTY_RING_FULL] = "KVM_EXIT_DIRTY_RING_FULL",
	[KVM_EXIT_AP_RESET_HOLD] = "KVM_EXIT_AP_RESET_HOLD",
	[KVM_EXIT_X86_BUS_LOCK] = "KVM_EXIT_X86_BUS_LOCK",
	[KVM_EXIT_XEN] = "KVM_EXIT_XEN",
	[KVM_EXIT_RISCV_SBI] = "KVM_EXIT_RISCV_SBI",
	[KVM_EXIT_RISCV_CSR] = "KVM_EXIT_RISCV_CSR",
	[KVM_EXIT_NOTIFY] = "KVM_EXIT_NOTIFY",
};

const char *exit_reason_name(uint32_t reason)
{
	if (reason < sizeof(exit_names) / sizeof(exit_names[0]) && exit_names[reason])
		return exit_names[reason];
	return "unknown exit";
}

/* End the run (a guest crash or halt), naming the exit and the vCPU's registers. */
static enum vcpu_action crash_as(struct vm *vm, struct vcpu *v, enum run_end end,
				 const char *what)
{
	char regs[384];

	vcpu_describe(v, regs, sizeof(regs));
	vm_finish(vm, end, 0, "guest %s on vCPU %u: %s (%s); %s",
		  end == END_GUEST_HALT ? "stopped" : "crashed", v->index, what,
		  exit_reason_name(v->kvm_run->exit_reason), regs);
	return VCPU_STOP;
}

static enum vcpu_action crash(struct vm *vm, struct vcpu *v, const char *what)
{
	return crash_as(vm, v, END_GUEST_CRASH, what);
}

/* Count an access nobody owns; with --strict-io it ends the run instead. */
static int unclaimed(struct vm *vm, struct vcpu *v, struct io_bus *bus, uint64_t addr,
		     int is_write)
{
	io_bus_unclaimed(bus, addr, is_write);
	if (!vm->strict_io)
		return 0;
	vm_finish(vm, END_UNCLAIMED_IO, 0,
		  "guest %s %s 0x%llx on vCPU %u, which no device claims (--strict-io)",
		  is_write ? "wrote to" : "read from", bus == &vm->mmio ? "MMIO" : "port",
		  (unsigned long long)addr, v->index);
	return 1;
}

static enum vcpu_action on_io(struct vm *vm, struct vcpu *v)
{
	struct kvm_run *run = v->kvm_run;
	uint8_t *data = (uint8_t *)run + run->io.data_offset;
	int is_write = run->io.direction == KVM_EXIT_IO_OUT;
	const struct io_dev *dev = io_bus_find(&vm->pio, run->io.port);

	if (run->io.data_offset > v->run_size ||
	    (uint64_t)run->io.size * run->io.count > v->run_size - run->io.data_offset)
		return crash(vm, v, "malformed I/O exit from KVM");
	for (uint32_t i = 0; i < run->io.count; i++, data += run->io.size) {
		if (!dev) {
			/* Unclaimed: reads see all-ones, as on a bus nobody answers. */
			if (unclaimed(vm, v, &vm->pio, run->io.port, is_write))
				return VCPU_STOP;
			if (!is_write)
				memset(data, 0xff, run->io.size);
			continue;
		}
		if (dev->io(dev->cookie, v->index, run->io.port, is_write, data,
			    run->io.size) == DEV_STOP)
			return VCPU_STOP;
	}
	return VCPU_CONTINUE;
}

/* Beyond the RAM memslot: the MMIO bus (no device registers there today: all unclaimed). */
static enum vcpu_action on_mmio(struct vm *vm, struct vcpu *v)
{
	struct kvm_run *run = v->kvm_run;
	const struct io_dev *dev = io_bus_find(&vm->mmio, run->mmio.phys_addr);

	if (dev)
		return dev->io(dev->cookie, v->index, run->mmio.phys_addr,
			       run->mmio.is_write, run->mmio.data,
			       run->mmio.len) == DEV_STOP
			       ? VCPU_STOP
			       : VCPU_CONTINUE;
	if (unclaimed(vm, v, &vm->mmio, run->mmio.phys_addr, run->mmio.is_write))
		return VCPU_STOP;
	if (!run->mmio.is_write)
		memset(run->mmio.data, 0xff, sizeof(run->mmio.data));
	return VCPU_CONTINUE;
}

/* Nothing raises interrupts in a minivmm VM: a halted vCPU can never resume. */
static enum vcpu_action on_hlt(struct vm *vm, struct vcpu *v)
{
	return crash_as(
		vm, v, END_GUEST_HALT,
		"it executed HLT and can never be woken (minivmm raises no interrupts; use the exit hypercall)");
}

static enum vcpu_action on_shutdown(struct vm *vm, struct vcpu *v)
{
	char regs[384];

	/* A PC guest's way to reset (reboot=t), or its crash: its owner sees the console. */
	if (vm->pc && vm->hooks.shutdown) {
		vcpu_describe(v, regs, sizeof(regs));
		vm->hooks.shutdown(vm->hooks.cookie, v->index, regs);
		return VCPU_STOP;
	}
	return crash(vm, v, "triple fault (the CPU shut down)");
}

static enum vcpu_action on_internal_error(struct vm *vm, struct vcpu *v)
{
	char what[128];

	snprintf(what, sizeof(what), "KVM internal error, suberror %u%s",
		 v->kvm_run->internal.suberror,
		 v->kvm_run->internal.suberror == KVM_INTERNAL_ERROR_EMULATION
			 ? " (instruction emulation failed)"
			 : "");
	return crash(vm, v, what);
}

static enum vcpu_action on_fail_entry(struct vm *vm, struct vcpu *v)
{
	char what[128];

	snprintf(
		what, sizeof(what), "VM entry failed, hardware reason 0x%llx",
		(unsigned long long)v->kvm_run->fail_entry.hardware_entry_failure_reason);
	return crash(vm, v, what);
}

static enum vcpu_action on_intr(struct vm *vm, struct vcpu *v)
{
	(void)vm;
	(void)v;
	return VCPU_CONTINUE; /* a signal interrupted KVM_RUN; the loop checks for stop */
}

static const exit_fn exit_handlers[] = {
	[KVM_EXIT_IO] = on_io,
	[KVM_EXIT_MMIO] = on_mmio,
	[KVM_EXIT_HLT] = on_hlt,
	[KVM_EXIT_SHUTDOWN] = on_shutdown,
	[KVM_EXIT_INTERNAL_ERROR] = on_internal_error,
	[KVM_EXIT_FAIL_ENTRY] = on_fail_entry,
	[KVM_EXIT_INTR] = on_intr,
};

enum vcpu_action exit_dispatch(struct vm *vm, struct vcpu *v)
{
	uint32_t reason = v->kvm_run->exit_reason;

	if (reason < sizeof(exit_handlers) / sizeof(exit_handlers[0]) &&
	    exit_handlers[reason])
		return exit_handlers[reason](vm, v);
	return crash(vm, v, "unexpected exit");
}
