/* Zero hypercalls of one page each (at 4 MiB), forever: per-call cost and growth. */
#include "flood.inc"

_start:
	SET_GPA runs_gpa, runs
	FLOOD args

	.align 8
args:	.long MVM_HC_ZERO, 24, 1, 0
runs_gpa: .quad 0
runs:	.quad 0x400000, 1
