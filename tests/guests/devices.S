/* Prints through the 0xE9 debug console and COM1, touches an unclaimed port, exits 0. */
#include "common.inc"

	.text
	.globl _start
_start:
	lea e9msg(%rip), %rsi
	mov $MVM_DEBUGCON_PORT, %dx
1:	lodsb
	test %al, %al
	jz 2f
	out %al, %dx
	jmp 1b
2:	lea com1msg(%rip), %rsi
3:	mov $MVM_COM1_PORT + 5, %dx	/* LSR: wait for an empty transmitter */
	in %dx, %al
	test $0x20, %al
	jz 3b
	lodsb
	test %al, %al
	jz 4f
	mov $MVM_COM1_PORT, %dx
	out %al, %dx
	jmp 3b
4:	mov $0x80, %dx			/* POST port: nobody owns it */
	out %al, %dx
	mov $0x1234, %dx
	in %dx, %al
	movzbl %al, %eax
	cmp $0xff, %eax			/* unclaimed reads must see all-ones */
	jne 5f
	mov $0x3f000000, %rdi		/* beyond RAM (run with --mem < 1008M): MMIO */
	movl $0x12345678, (%rdi)
	mov (%rdi), %eax
	cmp $0xffffffff, %eax
	jne 5f
	HC_EXIT 0
5:	HC_EXIT 9

e9msg:	.asciz "hello from port 0xe9\n"
com1msg: .asciz "hello from COM1\n"
	EXIT_ARGS
