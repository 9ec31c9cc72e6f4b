/* The trap stubs that lead into trap.c, and the drop to CPL3. */
#include "minivmm_abi.h"
#include "kernel.h"

/*
 * Trap entry. Each stub makes the frame uniform (an error code, then the
 * vector) and jumps to trap_common, which saves only the caller-saved
 * registers: trap_dispatch() is a C function and preserves the rest. Guest
 * kernel code is emulated instruction by instruction on PVM (~0.5 us each),
 * so this path is kept as short as it can be. #PF goes to pf_entry first.
 */
	.text
	.align 16
	.globl trap_stubs
trap_stubs:
	.set vec, 0
	.rept 256
	.align 16
	/* vectors that push an error code: 8, 10-14, 17, 21, 29, 30 */
	.if (vec == 8) || (vec >= 10 && vec <= 14) || (vec == 17) || (vec == 21) || (vec == 29) || (vec == 30)
	.else
	pushq $0
	.endif
	pushq $vec
	jmp trap_common
	.set vec, vec + 1
	.endr

/*
 * #PF fast path (the IDT sends #PF here, on its own stack): a fault inside
 * this vCPU's fault window (the mapping its last slow-path fault was in;
 * vm.c) gets the next page of its struct fault_state. Inside the window
 * every fault is a missing page: all of it has page tables, and its PTEs
 * are empty or writable user pages. On PVM every instruction here is
 * emulated (~0.5-1 us each) and every store is one KVM must check against
 * its shadow page tables (its mmu_pte_write counter), so the path stores
 * twice: the PTE and fault_state.next. The registers it needs are parked
 * in debug registers DR0-DR2, not on the stack (DR7 is 0: they arm no
 * breakpoint). The PTE is reached through the self map, from the window's
 * first PTE. With more than one vCPU the PTE is written with LOCK CMPXCHG
 * (another vCPU may map the page first); with one, with a plain store.
 * Anything else (no page left, outside the window, PTE no longer empty)
 * restores the registers and takes the general path into vm_fault().
 */
.macro PF_FAST smp stack
	.if \stack
	push %rdx
	push %rcx
	.if \smp
	push %rax
	.endif
	.set OFF, PF_FRAME_BYTES + 8 * (2 + \smp)
	.else
	mov %rdx, %dr0
	.set OFF, PF_FRAME_BYTES
	.endif
	mov %cr2, %rdx
	sub OFF + PFS_LO(%rsp), %rdx
	cmp OFF + PFS_LEN(%rsp), %rdx
	jae 3f
	.if !\stack
	mov %rcx, %dr1
	.endif
	mov OFF + PFS_NEXT(%rsp), %rcx
	cmp OFF + PFS_END(%rsp), %rcx
	jae 2f
	shr $9, %rdx
	and $-8, %rdx
	add OFF + PFS_PTE_LO(%rsp), %rdx	/* &PTE(CR2) */
	.if \smp
	.if !\stack
	mov %rax, %dr2
	.endif
	xor %eax, %eax
	lock cmpxchg %rcx, (%rdx)
	jne 1f
	.else
	mov %rcx, (%rdx)
	.endif
	addq $4096, OFF + PFS_NEXT(%rsp)
	.if \stack
	.if \smp
	pop %rax
	.endif
	pop %rcx
	pop %rdx
	.else
	.if \smp
	mov %dr2, %rax
	.endif
	mov %dr1, %rcx
	mov %dr0, %rdx
	.endif
	add $8, %rsp			/* the error code */
	iretq
	.if \stack
1:
2:
3:
	.if \smp
	pop %rax
	.endif
	pop %rcx
	pop %rdx
	.else
	.if \smp
1:	mov %dr2, %rax
	.endif
2:	mov %dr1, %rcx
3:	mov %dr0, %rdx
	.endif
	jmp trap_stubs + 14 * 16	/* the general #PF stub */
.endm

/*
 * Shadow paging (PVM): registers in debug registers, as above. EPT/NPT: the
 * handler runs natively, where a push costs nothing and a debug-register
 * access is an exit (KVM intercepts them again after every exit), so the
 * registers go on the stack. The boot info says which (minivmm,paging).
 */
	.globl pf_entry_smp, pf_entry_up, pf_entry_smp_tdp, pf_entry_up_tdp
pf_entry_smp:
	PF_FAST 1 0
pf_entry_up:
	PF_FAST 0 0
pf_entry_smp_tdp:
	PF_FAST 1 1
pf_entry_up_tdp:
	PF_FAST 0 1

trap_common:
	push %r11
	push %r10
	push %r9
	push %r8
	push %rdi
	push %rsi
	push %rdx
	push %rcx
	push %rax
	mov %rsp, %rdi
	call trap_dispatch
	pop %rax
	pop %rcx
	pop %rdx
	pop %rsi
	pop %rdi
	pop %r8
	pop %r9
	pop %r10
	pop %r11
	add $16, %rsp
	iretq

/* fw_enter_user(rip, rsp, arg): drop to CPL3 with interrupts enabled, arg in RDI. */
	.globl fw_enter_user
fw_enter_user:
	pushq $MVM_SEL_UDATA
	push %rsi
	pushq $0x202
	pushq $MVM_SEL_UCODE
	push %rdi
	mov %rdx, %rdi
	xor %eax, %eax
	mov %eax, %ds
	mov %eax, %es
	iretq
