/* Console hypercalls of MVM_CONSOLE_MAX_BYTES each (zeroed RAM at 4 MiB), forever. */
#include "flood.inc"

_start:
	FLOOD args

	.align 8
args:	.long MVM_HC_CONSOLE, 24
	.quad 0x400000, MVM_CONSOLE_MAX_BYTES
