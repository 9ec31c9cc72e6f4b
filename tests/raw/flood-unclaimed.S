/* Unclaimed port writes and reads and MMIO beyond RAM (--mem below 1008M), forever. */
#include "flood.inc"

_start:
	mov $0x3f000000, %rdi
1:	mov $0x80, %dx
	out %al, %dx
	mov $0x1234, %dx
	in %dx, %al
	movl $0x12345678, (%rdi)
	mov (%rdi), %eax
	jmp 1b
