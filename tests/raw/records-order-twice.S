/*
 * Issue 38: two order records for vCPU 0 (the ABI allows one per vCPU a
 * run), then eight progress points of its pass, then exit 0. Before the
 * fix, an --eager run kept both and its report built one segment per point
 * for each order record, past the np + no it had allocated: a heap overrun
 * on the main thread. The VMM must refuse the second order record as an
 * ABI violation (tests/hostile.sh).
 */
#include "flood.inc"

#define MVM_REC_PROGRESS      3
#define MVM_REC_ORDER	      4
#define MVM_WL_FLAT	      2
#define MVM_ORDER_SEQUENTIAL  1
#define PASS_GPA	      0x400000
#define PASS_BYTES	      0x100000 /* 1 MiB: 256 pages */
#define STRIDE_BYTES	      0x10000  /* a point every 64 KiB: at most 18 */
#define POINTS		      8
#define PROGRESS_BYTES	      40 /* struct mvm_rec_progress */

	/* Send \count records of \kind from \recs: one hypercall. */
	.macro SEND kind, count, recs
	movl $\kind, kind(%rip)
	movl $\count, count(%rip)
	SET_GPA recs_gpa, \recs
	lea args(%rip), %eax
	mov $MVM_HC_PORT, %dx
	out %eax, %dx
	.endm

_start:
	/* The points: vCPU 0, pass 1, 64 KiB more each, the guest's TSC now. */
	lea points(%rip), %rdi
	xor %esi, %esi
1:	movl $0, (%rdi)			/* vcpu */
	movl $1, 4(%rdi)		/* iteration */
	mov %rsi, %rax
	shl $16, %rax
	mov %rax, 8(%rdi)		/* bytes_done */
	movq $PASS_BYTES, 16(%rdi)	/* bytes_total */
	rdtsc
	shl $32, %rdx
	or %rdx, %rax
	mov %rax, 24(%rdi)		/* tsc */
	movq $PASS_GPA, 32(%rdi)	/* last_gpa */
	add $PROGRESS_BYTES, %rdi
	inc %esi
	cmp $POINTS, %esi
	jb 1b
	SEND MVM_REC_ORDER, 1, order
	SEND MVM_REC_ORDER, 1, order	/* the second one for vCPU 0 */
	SEND MVM_REC_PROGRESS, POINTS, points
	xor %eax, %eax
	mov $MVM_EXIT_PORT, %dx
	out %al, %dx			/* status 0 */
	hlt

	.align 8
args:	.long MVM_HC_RECORDS, 24
kind:	.long 0
count:	.long 0
recs_gpa: .quad 0
order:	.long 0, MVM_WL_FLAT, MVM_ORDER_SEQUENTIAL, 0	/* vcpu, workload, order, pad */
	.quad 0, 1					/* seed, stride_pages */
	.quad PASS_GPA, PASS_GPA + PASS_BYTES		/* start_gpa, end_gpa */
	.quad PASS_BYTES / 4096, STRIDE_BYTES		/* pages, progress_bytes */
points:	/* POINTS records, built at run time, past the end of the image */
