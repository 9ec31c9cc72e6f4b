/* Image header, vCPU entry, and the trap stubs that lead into trap.c. */
#include "minivmm_abi.h"
#include "kernel.h"

	.section .mvm_header, "a"
	.ascii "MINIVMM\0"
	.long MVM_ABI_VERSION
	.long FW_MAX_VCPUS
	.quad MVM_LOAD_GPA
	.quad _start
	.quad _end

/*
 * Every vCPU starts here (see minivmm_abi.h): RDI = boot info, RSI = vCPU
 * index, RDX = vCPU count. Pick this vCPU's boot stack and enter C.
 */
	.section .text.entry, "ax"
	.globl _start
_start:
	cmp $FW_MAX_VCPUS, %rsi
	jae 1f
	lea 1(%rsi), %rax
	shl $FW_STACK_SHIFT, %rax
	lea fw_stacks(%rip), %rsp
	add %rax, %rsp
	xor %ebp, %ebp
	call fw_main
1:	hlt
	jmp 1b

/*
 * Trap entry. Each stub makes the frame uniform (an error code, then the
 * vector) and jumps to trap_common, which saves only the caller-saved
 * registers: trap_dispatch() is a C function and preserves the rest. Guest
 * kernel code is emulated instruction by instruction on PVM (~0.5 us each),
 * so this path is kept as short as it can be.
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
