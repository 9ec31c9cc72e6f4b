/*
 * The issue's case: result batches of one sweep record each, as fast as the
 * guest can send them (the same record: no table row is printed for it).
 */
#include "flood.inc"

_start:
	SET_GPA recs_gpa, rec
	FLOOD args

	.align 8
args:	.long MVM_HC_RECORDS, 24, MVM_REC_SWEEP, 1
recs_gpa: .quad 0
rec:	.long MVM_WL_SWEEP, MVM_MODE_DEMAND
	.long 1, 1, 0, 0		/* iteration, size_mib, vcpu, pad */
	.quad 1000, 1000, 256, 0, 0, 0	/* cycles, pages, faults, pfn_sum, unmap */
