/*
 * A guest with no minivmm header, run with --raw: the kind a student writes
 * in twenty lines. It starts here, in 64-bit mode at CPL0 with a stack
 * (RSP) and the vCPU index in RSI, prints through the debug console (port
 * 0xE9) and exits with status 7 through the exit port (0xF4).
 */
	.code64
	.text
	.globl _start
_start:
	lea msg(%rip), %rsi
	mov $len, %ecx
	mov $0xe9, %dx
	rep outsb		/* one exit per byte here: fine for a greeting */
	call seven		/* the stack works */
	mov $0xf4, %dx
	out %al, %dx		/* ends the run: status 7 */
	hlt			/* not reached */
seven:
	mov $7, %eax
	ret
msg:	.ascii "hello from a raw guest\n"
	.set len, . - msg
