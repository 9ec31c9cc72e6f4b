/* bench/peers' start-up guest: a minivmm image whose first instructions are the exit hypercall. */
#include "common.inc"

	.text
	.globl _start
_start:
	test %esi, %esi		/* RSI: this vCPU's index */
	jnz 1f
	HCALL exit_args		/* vCPU 0: lea, mov, out; the out is the fourth instruction */
1:	HCALL park_args		/* the others park, so vCPU 0 alone ends the run */
	jmp 1b

	.align 8
park_args:
	.long MVM_HC_PARK, 8
	EXIT_ARGS
