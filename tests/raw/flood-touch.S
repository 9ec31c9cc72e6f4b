/* Full --eager=touch record batches (zeroed RAM at 4 MiB), each replacing the last. */
#include "flood.inc"

_start:
	FLOOD args

	.align 8
args:	.long MVM_HC_RECORDS, 24, MVM_REC_TOUCH, MVM_RECORDS_MAX
	.quad 0x400000
