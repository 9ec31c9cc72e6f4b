/* Per-vCPU descriptor tables (GDT with the Linux selector layout, TSS) and the IDT. */
#include "kernel.h"

static struct cpu cpus[FW_MAX_VCPUS];
static uint64_t idt[256][2];
extern char trap_stubs[], pf_entry_smp[], pf_entry_up[], pf_entry_smp_tdp[],
	pf_entry_up_tdp[];

struct __attribute__((packed)) dtr {
	uint16_t limit;
	uint64_t base;
};

#define MSR_FS_BASE 0xc0000100

/* Per-vCPU area whose offset 0x28 holds the stack-protector canary (libfdt). */
static uint64_t tls[FW_MAX_VCPUS][8];

void cpu_init(uint32_t index)
{
	struct cpu *c = &cpus[index];
	uint64_t tss = (uintptr_t)c->tss;
	uint64_t ist1 = (uintptr_t)fault_state_of(index); /* the #PF stack */
	uint64_t rsp0 = ist1 + PFS_BYTES - FW_PF_STACK_BYTES;
	struct dtr gdtr = { sizeof(c->gdt) - 1, (uintptr_t)c->gdt };
	uint32_t lo, hi;

	c->index = index;
	c->gdt[MVM_SEL_KCODE / 8] = 0x00af9b000000ffffULL;
	c->gdt[MVM_SEL_KDATA / 8] = 0x00cf93000000ffffULL;
	c->gdt[0x20 / 8] = 0x00cffb000000ffffULL; /* user code, 32-bit (unused) */
	c->gdt[MVM_SEL_UDATA / 8] = 0x00cff3000000ffffULL;
	c->gdt[MVM_SEL_UCODE / 8] = 0x00affb000000ffffULL;
	c->gdt[MVM_SEL_TSS / 8] = (sizeof(c->tss) - 1) | (tss & 0xffffff) << 16 |
				  0x89ULL << 40 | ((tss >> 24) & 0xff) << 56;
	c->gdt[MVM_SEL_TSS / 8 + 1] = tss >> 32;
	memcpy(c->tss + 4, &rsp0, sizeof(rsp0));  /* RSP0: kernel stack for traps */
	memcpy(c->tss + 36, &ist1, sizeof(ist1)); /* IST1: for #PF (idt_pf_variant) */
	c->tss[102] = sizeof(c->tss);		  /* I/O bitmap base: none */
	__asm__ volatile("lgdt %0" : : "m"(gdtr));
	__asm__ volatile("ltr %w0" : : "r"(MVM_SEL_TSS));

	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	tls[index][5] = ((uint64_t)hi << 32 | lo) ^ 0x5a17c0de00000000ULL;
	wrmsr(MSR_FS_BASE, (uintptr_t)tls[index]);
}

/*
 * Interrupt gates (IF cleared on entry). Only the system-call vector (INT3)
 * may be raised from CPL3: on PVM, INT n for other n raises #UD and SYSCALL
 * does not enter CPL0, while INT3 is delivered through this IDT like #PF.
 */
void idt_load(void)
{
	struct dtr idtr = { sizeof(idt) - 1, (uintptr_t)idt };

	__asm__ volatile("lidt %0" : : "m"(idtr));
}

static void set_gate(int v, uint64_t h, uint64_t ist)
{
	uint64_t dpl = v == FW_SYSCALL_VECTOR ? 3 : 0;

	idt[v][0] = (h & 0xffff) | (uint64_t)MVM_SEL_KCODE << 16 | ist << 32 |
		    (0x8eULL | dpl << 5) << 40 | ((h >> 16) & 0xffff) << 48;
	idt[v][1] = h >> 32;
}

/*
 * #PF enters entry.S's fast path, on its own stack (IST1), in the variant
 * for the number of vCPUs (one vCPU needs no atomic PTE update) and the
 * paging (where its registers are cheapest to keep): main.c picks it once
 * the boot info is read. Until then #PF goes straight to the general stub
 * (idt_init), where every variant would send it: no vCPU has a fault
 * window before vm_fault() sets one (struct fault_state starts zeroed).
 */
void idt_pf_variant(uint32_t vcpus, int tdp)
{
	char *h = tdp ? (vcpus == 1 ? pf_entry_up_tdp : pf_entry_smp_tdp)
		      : (vcpus == 1 ? pf_entry_up : pf_entry_smp);

	set_gate(14, (uintptr_t)h, 1);
}

void idt_init(void)
{
	for (int v = 0; v < 256; v++)
		set_gate(v, (uintptr_t)trap_stubs + 16 * (uint64_t)v, 0);
	idt_load();
}
