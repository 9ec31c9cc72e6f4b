/*
 * An abort hypercall whose file name and message are not UTF-8: a \xff, a
 * truncated multi-byte sequence (\xe2\x82), and an embedded NUL with more
 * bytes after it. minivmm copies them into its message and the results file.
 */
#include "minivmm_abi.h"

	.code64
	.text
	.globl _start
_start:
	lea args(%rip), %eax
	mov $MVM_HC_PORT, %dx
	out %eax, %dx
	hlt			/* not reached: the abort ends the run */

	.align 8
args:	.long MVM_HC_ABORT, 296	/* sizeof(struct mvm_hc_abort) */
	.long 42		/* line */
	.long 0xffffffff	/* vector: MVM_ABORT_NO_VECTOR */
	.quad 0, 0, 0		/* error_code, rip, cr2 */
file:	.ascii "f\xe2\x82.c\0"
	.fill 64 - (. - file), 1, 0
msg:	.ascii "bad \xff byte, cut \xe2\x82\0after-the-nul \xfe\xff"
	.fill 192 - (. - msg), 1, 0
