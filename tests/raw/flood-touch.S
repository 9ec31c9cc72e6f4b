/* --eager=touch reports (vCPU 0's and the whole pass's, valid) as fast as possible. */
#include "flood.inc"

_start:
	SET_GPA recs_gpa, recs
	FLOOD args

	.align 8
args:	.long MVM_HC_RECORDS, 24, MVM_REC_TOUCH, 2
recs_gpa: .quad 0
recs:	.long 0, 0			/* vcpu 0, pad */
	.quad 0, 0x1000000, 4095, 1000	/* start, end, pages, cycles */
	.long 0xffffffff, 0		/* MVM_VCPU_ALL */
	.quad 0, 0x1000000, 4095, 1000
