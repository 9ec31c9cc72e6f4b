/* Spins silently at CPL0 until minivmm stops it (--timeout, a signal). */
	.code64
	.text
	.globl _start
_start:
1:	pause
	jmp 1b
