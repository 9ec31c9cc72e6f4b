/*
 * A stand-in for a Linux kernel's 64-bit entry (tests/kernel/mkbzimage puts
 * it at code32_start + 0x200 of a crafted bzImage): a few instructions that
 * exercise what minivmm gives a Linux guest, on any KVM (PVM emulates them).
 * Entered as the boot protocol says: long mode, RSI = the zero page.
 */
	.code64
	.text
/* Print the NUL-terminated string at %rbx to COM1 (%dx), a byte an exit. */
	.macro	puts
1:	movb	(%rbx), %al
	test	%al, %al
	jz	2f
	out	%al, %dx
	inc	%rbx
	jmp	1b
2:
	.endm
	.globl _start
_start:
	mov	%rsi, %r12		/* the zero page */
	mov	$0x3f8, %dx		/* COM1 */
#if defined(MODE_ZP)
	/* Print the command line the zero page points to, exit with e820_entries. */
	mov	0x228(%r12), %ebx
	puts
	mov	$'\n', %al
	out	%al, %dx
	movzbl	0x1e8(%r12), %eax
	mov	$0xf4, %dx
	out	%al, %dx
#elif defined(MODE_TIMER)
	/* /init's mark three times and a wrong byte once, then exit 0. */
	mov	$0x514, %dx
	mov	$123, %al
	out	%al, %dx
	out	%al, %dx
	out	%al, %dx
	mov	$5, %al
	out	%al, %dx
	xor	%eax, %eax
	mov	$0xf4, %dx
	out	%al, %dx
#elif defined(MODE_PANIC) || defined(MODE_RESET)
#if defined(MODE_PANIC)
	lea	msg(%rip), %rbx
	puts
#endif
	mov	$0xfe, %al		/* the i8042's reset line */
	mov	$0x64, %dx
	out	%al, %dx
	hlt
#elif defined(MODE_FLOOD)
	/* COM1 without end, in string I/O (--timeout ends it). */
1:	mov	$0x200000, %rsi
	mov	$(1 << 20), %rcx
	rep outsb
	jmp	1b
#elif defined(MODE_HANG)
1:	pause
	jmp	1b
#elif defined(MODE_TRIPLE)
	lidt	idt0(%rip)		/* no IDT: the next fault shuts the CPU down */
	ud2
#endif
	hlt
	.balign 16
msg:	.ascii	"[    0.512345] Kernel panic - not syncing: VFS: Unable to mount root fs on unknown-block(0,0)\n"
	.ascii	"[    0.512400] CPU: 0 PID: 1 Comm: swapper/0 Not tainted 9.9.9-fixture #1\n"
	.asciz	"[    0.512500] ---[ end Kernel panic - not syncing: VFS: Unable to mount root fs ]---\n"
	.balign	8
idt0:	.word	0
	.quad	0
