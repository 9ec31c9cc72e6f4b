/* A console hypercall with a huge length (1 MiB): an ABI violation, not a host copy. */
#include "common.inc"

	.text
	.globl _start
_start:
	HCALL args
	HC_EXIT 0
	.align 8
args:	.long MVM_HC_CONSOLE, 24
	.quad 0x100000, 0x100000
	EXIT_ARGS
