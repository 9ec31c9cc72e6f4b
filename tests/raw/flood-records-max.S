/* Full result batches (MVM_RECORDS_MAX records of zeroed RAM at 4 MiB) as fast as possible. */
#include "flood.inc"

_start:
	FLOOD args

	.align 8
args:	.long MVM_HC_RECORDS, 24, MVM_REC_SWEEP, MVM_RECORDS_MAX
	.quad 0x400000
