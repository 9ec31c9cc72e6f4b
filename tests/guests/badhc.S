/* Issues a hypercall whose argument pointer is outside guest RAM. */
#include "common.inc"

	.text
	.globl _start
_start:
	mov $0xfffff000, %eax
	mov $MVM_HC_PORT, %dx
	out %eax, %dx
	HC_EXIT 0
	EXIT_ARGS
