/* Phase marks, cycling through every mark number, as fast as possible. */
#include "flood.inc"

_start:
	FLOOD args, "call next_mark"
next_mark:
	mov mark(%rip), %eax
	inc %eax
	cmp $MVM_MARK_COUNT, %eax
	jb 2f
	mov $1, %eax
2:	mov %eax, mark(%rip)
	rdtsc
	mov %eax, tsc(%rip)
	mov %edx, tsc+4(%rip)
	ret

	.align 8
args:	.long MVM_HC_MARK, 24
mark:	.long 0, 0
tsc:	.quad 0
