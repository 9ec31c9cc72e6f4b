/* Halts with interrupts off: a stop the VMM must recognise as final. */
#include "common.inc"

	.text
	.globl _start
_start:
	cli
	hlt
	jmp _start
