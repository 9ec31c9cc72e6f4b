/*
 * pattern.S: a --raw guest that writes a pattern the next guest must never
 * see (tests/reservoir.sh): the first and last quadword of every 4 KiB page
 * of guest-physical [2 MiB, 32 MiB) get 0xa5a5a5a5a5a5a5a5 ^ their address.
 * Needs --mem 32M or more. Exits with status 0; built with SPIN defined
 * (pattern-spin.S), it says "spinning" instead and runs until killed.
 */
	.code64
	.globl _start
_start:
	mov $0x200000, %rdi		/* 2 MiB: past the image and the VMM's pages */
	mov $0x2000000, %rsi		/* 32 MiB */
	movabs $0xa5a5a5a5a5a5a5a5, %rax
1:	mov %rdi, %rdx
	xor %rax, %rdx
	mov %rdx, (%rdi)
	mov %rdx, 4088(%rdi)
	add $4096, %rdi
	cmp %rsi, %rdi
	jb 1b
	lea msg(%rip), %rsi
	mov $len, %ecx
	mov $0xe9, %dx
	rep outsb
#ifdef SPIN
2:	pause
	jmp 2b
#endif
	xor %eax, %eax			/* exit status 0 */
	mov $0xf4, %dx
	out %al, %dx
#ifdef SPIN
msg:	.ascii "pattern written to [2 MiB, 32 MiB), spinning\n"
#else
msg:	.ascii "pattern written to [2 MiB, 32 MiB)\n"
#endif
	.set len, . - msg
