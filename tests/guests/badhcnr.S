/* Issues a hypercall with a number the ABI does not define. */
#include "common.inc"

	.text
	.globl _start
_start:
	HCALL args
	HC_EXIT 0
	.align 8
args:	.long 77, 8
	EXIT_ARGS
