/*
 * Full result batches (MVM_RECORDS_MAX valid sweep records of one
 * measurement) as fast as possible: the store's record limit.
 */
#include "flood.inc"

#define REC_BYTES 72 /* struct mvm_rec_sweep */

_start:
	lea recs(%rip), %rdi
	mov %rdi, recs_gpa(%rip)
	mov $MVM_RECORDS_MAX, %ecx
1:	movl $MVM_WL_SWEEP, (%rdi)
	movl $MVM_MODE_DEMAND, 4(%rdi)
	movl $1, 8(%rdi)		/* iteration */
	movl $1, 12(%rdi)		/* size_mib */
	movq $1000, 24(%rdi)		/* map_cycles */
	movq $1000, 32(%rdi)		/* touch_cycles */
	movq $256, 40(%rdi)		/* pages */
	add $REC_BYTES, %rdi
	loop 1b
	FLOOD args

	.align 8
args:	.long MVM_HC_RECORDS, 24, MVM_REC_SWEEP, MVM_RECORDS_MAX
recs_gpa: .quad 0
recs:	/* MVM_RECORDS_MAX records are built here, past the end of the image */
