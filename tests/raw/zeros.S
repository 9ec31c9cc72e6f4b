/*
 * zeros.S: a --raw guest that checks guest RAM it never wrote reads zero
 * (tests/reservoir.sh): the first and last quadword of every 4 KiB page of
 * guest-physical [2 MiB, 32 MiB), where pattern.S writes. Exit status 0
 * when all are zero, 1 at the first that is not. Needs --mem 32M or more.
 */
	.code64
	.globl _start
_start:
	mov $0x200000, %rdi
	mov $0x2000000, %rsi
1:	mov (%rdi), %rax
	or 4088(%rdi), %rax
	jnz dirty
	add $4096, %rdi
	cmp %rsi, %rdi
	jb 1b
	lea clean(%rip), %rsi
	mov $clean_len, %ecx
	xor %ebx, %ebx			/* exit status 0 */
	jmp say
dirty:	lea seen(%rip), %rsi
	mov $seen_len, %ecx
	mov $1, %ebx			/* exit status 1 */
say:	mov $0xe9, %dx
	rep outsb
	mov %ebx, %eax
	mov $0xf4, %dx
	out %al, %dx
clean:	.ascii "all zero in [2 MiB, 32 MiB)\n"
	.set clean_len, . - clean
seen:	.ascii "NOT ZERO: an earlier guest's data is visible\n"
	.set seen_len, . - seen
