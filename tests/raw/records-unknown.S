/*
 * A sweep record whose workload no one knows (9): the VMM must refuse it as
 * an ABI violation rather than write "workload": "unknown", which the
 * results schema refuses (tests/hostile.sh).
 */
#include "flood.inc"

_start:
	SET_GPA recs_gpa, rec
	lea args(%rip), %eax
	mov $MVM_HC_PORT, %dx
	out %eax, %dx
	hlt

	.align 8
args:	.long MVM_HC_RECORDS, 24, MVM_REC_SWEEP, 1
recs_gpa: .quad 0
rec:	.long 9, MVM_MODE_DEMAND	/* workload 9 */
	.long 1, 1, 0, 0		/* iteration, size_mib, vcpu, pad */
	.quad 1000, 1000, 256, 0, 0, 0
