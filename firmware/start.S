/*
 * The image header and every vCPU's first instruction: the boot stack, then
 * fw_main (main.c). Apart from the trap stubs (entry.S), which main.c's
 * setup installs: the boot path calls down, the traps call up.
 */
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
 * index, RDX = vCPU count, RCX = entry flags: fw_main's four arguments.
 * Pick this vCPU's boot stack and enter C.
 */
	.section .text.entry, "ax"
	.globl _start
_start:
	cmp $FW_MAX_VCPUS, %rsi
	jae 1f
	lea 1(%rsi), %rax
	shl $FW_STACK_SHIFT, %rax
	lea fw_stacks - FW_PF_STACK_BYTES(%rip), %rsp /* RSP0 of the vCPU's slot */
	add %rax, %rsp
	xor %ebp, %ebp
	call fw_main
1:	hlt
	jmp 1b
