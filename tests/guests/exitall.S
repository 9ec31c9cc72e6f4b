/* Every vCPU makes the exit hypercall at once: whichever is first ends the run. */
#include "common.inc"

	.text
	.globl _start
_start:
	HC_EXIT 0
	hlt
	EXIT_ARGS
