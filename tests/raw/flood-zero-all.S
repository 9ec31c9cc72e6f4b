/*
 * Zero hypercalls of MVM_ZERO_RUNS_MAX runs, each all RAM above 2 MiB
 * (run with --mem 512M: 510 MiB a run, 127.5 GiB a call), forever: the most
 * work one call can ask for, which the run's --timeout must still bound.
 */
#include "flood.inc"

#define RUN_MIB 510

_start:
	lea runs(%rip), %rdi
	mov %rdi, runs_gpa(%rip)
	mov $MVM_ZERO_RUNS_MAX, %ecx
1:	movq $0x200000, (%rdi)
	movq $(RUN_MIB << 8), 8(%rdi)	/* RUN_MIB MiB in 4 KiB pages */
	add $16, %rdi
	loop 1b
	FLOOD args

	.align 8
args:	.long MVM_HC_ZERO, 24, MVM_ZERO_RUNS_MAX, 0
runs_gpa: .quad 0
runs:	/* MVM_ZERO_RUNS_MAX runs are built here, past the end of the image */
