/*
 * Result batches of one sweep record each, each a new iteration: every
 * record starts a table of its own, so minivmm prints as the guest sends.
 */
#include "flood.inc"

_start:
	SET_GPA recs_gpa, rec
	FLOOD args, "incl iter(%rip)"

	.align 8
args:	.long MVM_HC_RECORDS, 24, MVM_REC_SWEEP, 1
recs_gpa: .quad 0
rec:	.long MVM_WL_SWEEP, MVM_MODE_DEMAND
iter:	.long 0
	.long 1, 0, 0			/* size_mib, vcpu, pad */
	.quad 1000, 1000, 256, 0, 0, 0	/* cycles, pages, faults, pfn_sum, unmap */
