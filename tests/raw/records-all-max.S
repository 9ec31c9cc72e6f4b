/*
 * Every record store filled to (just under) its guest limit, then a clean
 * exit: the largest results file a guest can make minivmm write. 124 full
 * sweep batches (126,976 records of one measurement) and 3,968 one-record
 * batches (each its own measurement, with KVM's counters, and its own
 * table), then vCPU 0's one order record (the ABI allows one per vCPU) for
 * a pass whose stride takes 131,072 progress points, and those, then exit
 * 0. tests/hostile.sh bounds the file, the time and the RSS.
 */
#include "flood.inc"

#define MVM_REC_PROGRESS 3
#define MVM_REC_ORDER	 4
#define MVM_WL_PERM	 3
#define MVM_ORDER_RANDOM 2
#define SWEEP_BYTES	 72 /* struct mvm_rec_sweep */
#define PROGRESS_BYTES	 40
#define ORDER_BYTES	 64
#define FULL_BATCHES	 124
#define ONE_BATCHES	 3968
#define PROGRESS_CALLS	 128
#define PASS_BYTES	 0x20000000 /* 131,072 pages, a point each (4 KiB stride) */

	/* Send kind with count records from recs: one hypercall. */
	.macro SEND kind, count
	movl $\kind, kind(%rip)
	movl \count, count(%rip)
	lea args(%rip), %eax
	mov $MVM_HC_PORT, %dx
	out %eax, %dx
	.endm

	/* Zero \bytes at recs, then set %rdi to recs. */
	.macro CLEAR bytes
	lea recs(%rip), %rdi
	mov $\bytes, %ecx
	xor %eax, %eax
	rep stosb
	lea recs(%rip), %rdi
	.endm

_start:
	SET_GPA recs_gpa, recs
	/* Sweep records: workload sweep, demand, iteration 1, 1 MiB, vCPU 0. */
	CLEAR (MVM_RECORDS_MAX*SWEEP_BYTES)
	mov $MVM_RECORDS_MAX, %ecx
1:	movl $MVM_WL_SWEEP, (%rdi)
	movl $MVM_MODE_DEMAND, 4(%rdi)
	movl $1, 8(%rdi)
	movl $1, 12(%rdi)
	movq $1000, 32(%rdi)		/* touch_cycles */
	movq $256, 40(%rdi)		/* pages */
	add $SWEEP_BYTES, %rdi
	loop 1b
	mov $FULL_BATCHES, %r12d
2:	SEND MVM_REC_SWEEP, $MVM_RECORDS_MAX
	dec %r12d
	jnz 2b
	/* One-record batches, iterations 2, 3, ...: each a measurement of its own. */
	mov $ONE_BATCHES, %r12d
	mov $2, %r13d
3:	mov %r13d, recs+8(%rip)
	SEND MVM_REC_SWEEP, $1
	inc %r13d
	dec %r12d
	jnz 3b
	/* vCPU 0's order record: perm, random, a point every page; before its points. */
	CLEAR ORDER_BYTES
	movl $MVM_WL_PERM, 4(%rdi)
	movl $MVM_ORDER_RANDOM, 8(%rdi)
	movq $0x400000, 32(%rdi)	/* start_gpa */
	movq $0x400000 + PASS_BYTES, 40(%rdi) /* end_gpa */
	movq $PASS_BYTES / 4096, 48(%rdi) /* pages */
	movq $4096, 56(%rdi)		/* progress_bytes */
	SEND MVM_REC_ORDER, $1
	/* Progress points: vCPU 0, pass 1, 0 bytes of its pass done. */
	CLEAR (MVM_RECORDS_MAX*PROGRESS_BYTES)
	mov $MVM_RECORDS_MAX, %ecx
4:	movl $1, 4(%rdi)		/* iteration */
	movq $PASS_BYTES, 16(%rdi)	/* bytes_total */
	add $PROGRESS_BYTES, %rdi
	loop 4b
	mov $PROGRESS_CALLS, %r12d
5:	SEND MVM_REC_PROGRESS, $MVM_RECORDS_MAX
	dec %r12d
	jnz 5b
	xor %eax, %eax
	mov $MVM_EXIT_PORT, %dx
	out %al, %dx			/* status 0 */
	hlt

	.align 8
args:	.long MVM_HC_RECORDS, 24
kind:	.long 0
count:	.long 0
recs_gpa: .quad 0
recs:	/* the records are built here, past the end of the image */
