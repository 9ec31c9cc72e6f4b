/* bench/peers' start-up guest: a minivmm image whose first instructions are the exit hypercall. */
#include "common.inc"

	.text
	.globl _start
_start:
	HCALL exit_args		/* lea, mov, out: the out is the third instruction */
	EXIT_ARGS
