/* Loads an empty IDT and faults: the CPU shuts down (triple fault). */
#include "common.inc"

	.text
	.globl _start
_start:
	lidt idtr(%rip)
	ud2
idtr:	.word 0
	.quad 0
