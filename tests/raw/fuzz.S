/*
 * The guest-side ABI fuzzer (tests/fuzz/guest-fuzz runs it): a --raw guest
 * that, from a seed, issues random hypercalls (numbers, sizes, argument
 * GPAs, counts, contents), port I/O (single and rep, every width), MMIO
 * beyond RAM, and bursts that repeat one call up to a million times. Every
 * vCPU runs it with its own stream (seed mixed with the vCPU index).
 *
 * The driver patches the parameter block after FUZZ_MAGIC: the seed, the
 * number of actions (after which the guest exits 0 through port 0xF4), and
 * --mem in bytes. Per seed, a "malice" level sets how often a field takes a
 * hostile value (any GPA, count or number) instead of a valid one, so some
 * runs end at their first violation and others reach deep into the handlers.
 *
 * Records come in every kind, in sequences the ABI forbids as well as ones
 * it allows (issue 38): order records for the vCPU's own index mostly,
 * sometimes another's or many in one batch, and repeated by a burst (a
 * second order record for a vCPU); progress points, sometimes before any
 * order record, of a frontier each vCPU advances across its batches until
 * there are more than the order record's stride takes. The driver runs
 * some seeds with --eager=background, whose report builds the coverage
 * segments from them.
 *
 * Memory: each vCPU writes only its own 128 KiB scratch at 2 MiB + 128 KiB *
 * index (args at +0, zero runs at +0x200, its frontier's bytes done at
 * +0x400 and the seed's focus at +0x408, data at +0x1000: sweep records, and at +0x13000 order or
 * progress records), except where a hostile hypercall asks the VMM to write
 * (zero) elsewhere.
 */
#include "flood.inc"

#define SCRATCH_GPA   0x200000
#define SCRATCH_BYTES 0x20000
#define RUNS_OFF      0x200
#define DATA_OFF      0x1000
#define DATA_BYTES    (SCRATCH_BYTES - DATA_OFF)
#define MAP_LIMIT     0x40000000 /* the entry tables map the first GiB */
#define FRONT_STATE   0x400	 /* this vCPU's frontier: bytes done so far */
#define FRONT_FOCUS   0x408	 /* non-zero: this seed's records are mostly order and progress */
#define FRONT_OFF     0x13000	 /* order and progress records, built per call */
#define MVM_REC_PROGRESS 3
#define MVM_REC_ORDER	 4
#define PASS_GPA      0x400000	 /* every order record's pass: 1 MiB at 4 MiB */
#define PASS_BYTES    0x100000
#define STRIDE_BYTES  0x10000	 /* a point every 64 KiB: 18 points a pass at most */
#define ORDER_BYTES   64	 /* struct mvm_rec_order */
#define POINT_BYTES   40	 /* struct mvm_rec_progress */

	/* rax = a random number below \n (clobbers rcx, rdx) */
	.macro RNDMOD n
	call rnd
	xor %edx, %edx
	mov $\n, %ecx
	div %rcx
	mov %rdx, %rax
	.endm

	/* CF = 1 when this field takes a hostile value (r11/256 of the time) */
	.macro BAD
	RNDMOD 256
	cmp %r11, %rax
	.endm

_start:
	jmp start
	.align 8
	.ascii "MVMFUZZ!"		/* FUZZ_MAGIC: the driver patches what follows */
p_seed:	.quad 0x1234567
p_steps: .quad 1000
p_mem:	.quad 16 << 20

start:
	mov %rsi, %r10			/* vCPU index */
	mov p_seed(%rip), %r15
	lea 1(%r10), %rax
	movabs $0x9e3779b97f4a7c15, %rcx
	imul %rcx, %rax
	xor %rax, %r15
	jnz 1f
	inc %r15			/* xorshift needs a non-zero state */
1:	mov p_steps(%rip), %r14
	mov p_mem(%rip), %r12
	mov $MAP_LIMIT, %rax
	cmp %rax, %r12
	cmovae %rax, %r12		/* r12 = the end of what the guest can reach */
	mov %r10, %r13
	shl $17, %r13
	add $SCRATCH_GPA, %r13		/* r13 = this vCPU's scratch */
	/* Malice, from the seed alone (same for every vCPU): 0, 4, 16 or 64 in 256. */
	mov p_seed(%rip), %rax
	shr $3, %rax
	and $3, %eax
	lea malice(%rip), %rcx
	movzbl (%rcx,%rax), %r11d
	/* Frontier focus, from the seed (1 in 2): most records calls are order and progress batches. */
	mov p_seed(%rip), %rax
	shr $5, %rax
	and $1, %eax
	mov %rax, FRONT_FOCUS(%r13)

step:	test %r14, %r14
	jz done
	dec %r14
	RNDMOD 16
	cmp $7, %eax
	jb act_hc			/* 0-6: a hypercall */
	cmp $9, %eax
	jb act_out			/* 7-8: OUT */
	cmp $10, %eax
	jb act_in			/* 9: IN */
	cmp $11, %eax
	jb act_rep			/* 10: rep outs/ins */
	cmp $13, %eax
	jb act_mmio			/* 11-12: MMIO beyond RAM */
	cmp $14, %eax
	jb act_scribble			/* 13: random data for later calls */
	je act_recfill			/* 14: plausible sweep records for later calls */
	jmp act_pause			/* 15: let the other vCPUs run */

done:	xor %eax, %eax
	mov $MVM_EXIT_PORT, %dx
	out %al, %dx			/* exit status 0: the run ends here */
	jmp done

/* --- the random stream: xorshift64 in r15; rax = next (clobbers rcx) -------- */
rnd:	mov %r15, %rax
	mov %rax, %rcx
	shl $13, %rcx
	xor %rcx, %rax
	mov %rax, %rcx
	shr $7, %rcx
	xor %rcx, %rax
	mov %rax, %rcx
	shl $17, %rcx
	xor %rcx, %rax
	mov %rax, %r15
	ret

/* rax = a hostile GPA: inside, across and beyond RAM, 0, huge, the image (clobbers rcx, rdx, r8) */
pick_gpa:
	RNDMOD 16
	mov %rax, %r8
	RNDMOD DATA_BYTES
	cmp $8, %r8d
	jb 1f
	je 2f
	cmp $10, %r8d
	jb 3f
	je 4f
	cmp $12, %r8d
	jb 5f
	je 6f
	cmp $14, %r8d
	jb 7f
	je 8f
	RNDMOD 1 << 20			/* 15: anywhere below 1 MiB past RAM's end */
	add %r12, %rax
	ret
1:	cmp $7, %r8d
	je 9f
	lea DATA_OFF(%r13,%rax), %rax	/* 0-6: this vCPU's data, any alignment */
	ret
9:	mov %r13, %rax			/* 7: its hypercall struct (rep outsl sends it again) */
	ret
2:	and $255, %eax			/* 8: a struct that runs past the end of RAM */
	neg %rax
	add %r12, %rax
	ret
3:	mov %r12, %rax			/* 9: exactly the end */
	ret
4:	xor %eax, %eax			/* 10: 0 */
	ret
5:	jmp rnd				/* 11: anything (64 bits) */
6:	and $63, %eax			/* 12: just below 4 GiB */
	mov $0xffffffff, %ecx
	sub %rax, %rcx
	mov %rcx, %rax
	ret
7:	and $0xfff, %eax		/* 13: the image itself */
	add $MVM_LOAD_GPA, %rax
	ret
8:	xor %edx, %edx			/* 14: any page of RAM */
	call rnd
	div %r12
	mov %rdx, %rax
	and $~0xfff, %rax
	ret

/* rax = a hostile count: 0, 1, powers of two and their neighbours, huge (clobbers rcx, rdx) */
pick_count:
	RNDMOD 16
	lea counts(%rip), %rcx
	mov (%rcx,%rax,8), %rax
	cmp $-1, %rax
	jne 1f
	jmp rnd				/* the table's -1: anything */
1:	ret

/* --- a hypercall: its struct at rbx, built unless it lies outside scratch --- */
act_hc:
	mov %r13, %rbx
	BAD
	jae 1f
	call pick_gpa			/* hostile: the struct anywhere */
	mov %rax, %rbx
1:	/* Build only inside this vCPU's scratch; elsewhere the call sees what is there. */
	mov %rbx, %rax
	sub %r13, %rax
	cmp $(RUNS_OFF - 8), %rax
	ja hc_issue
	call pick_nr
	mov %eax, (%rbx)
	mov %eax, %ebp			/* ebp = nr */
	call pick_size
	mov %eax, 4(%rbx)
	/* The body: interesting values in every slot, then the fields of nr. */
	lea 8(%rbx), %rdi
	mov $((RUNS_OFF - 8) / 8), %esi
2:	call pick_any
	mov %rax, (%rdi)
	add $8, %rdi
	dec %esi
	jnz 2b
	cmp $MVM_HC_CONSOLE, %ebp
	je body_console
	cmp $MVM_HC_EXIT, %ebp
	je body_exit
	cmp $MVM_HC_ABORT, %ebp
	je body_abort
	cmp $MVM_HC_RECORDS, %ebp
	je body_records
	cmp $MVM_HC_ZERO, %ebp
	je body_zero
	cmp $MVM_HC_MARK, %ebp
	je body_mark
	jmp hc_issue

body_console:
	BAD
	jb 1f
	RNDMOD 0x1000
	lea DATA_OFF(%r13,%rax), %rax
	mov %rax, 8(%rbx)		/* buf_gpa */
	RNDMOD MVM_CONSOLE_MAX_BYTES + 1
	mov %rax, 16(%rbx)		/* len */
1:	jmp hc_issue

body_exit:
	RNDMOD 4
	mov %eax, 8(%rbx)		/* status 0-3 */
	jmp hc_issue

body_abort:
	/* file[64] and msg[192] at 40: bytes that are not UTF-8, NULs among them. */
	lea 40(%rbx), %rdi
	mov $256, %esi
1:	RNDMOD 8
	lea abort_bytes(%rip), %rcx
	movzbl (%rcx,%rax), %eax
	cmp $1, %eax
	ja 2f
	je 3f
	RNDMOD 26			/* the table's 0: a letter */
	add $'a', %eax
	jmp 2f
3:	xor %eax, %eax			/* the table's 1: a NUL, more bytes after it */
2:	mov %al, (%rdi)
	inc %rdi
	dec %esi
	jnz 1b
	jmp hc_issue

body_records:
	BAD
	jb 1f
	RNDMOD 8
	cmpq $0, FRONT_FOCUS(%r13)
	je 3f
	cmp $2, %eax			/* focus: 2 in 8 as below, else a frontier batch */
	jb 3f
	add $3, %eax
	cmp $8, %eax
	jb 2f
	mov $5, %eax			/* focus: progress 5 in 8, an order batch 1 in 8 */
	jmp 2f
3:	cmp $5, %eax
	jae 2f
	cmp $4, %eax
	sbb %eax, %eax
	add $2, %eax			/* kind: SWEEP 4 times in 8, TOUCH once */
	mov %eax, 8(%rbx)
	call valid_count
	mov %eax, 12(%rbx)		/* count */
	lea DATA_OFF(%r13), %rax
	mov %rax, 16(%rbx)		/* recs_gpa: the data area holds 1024 of either kind */
1:	jmp hc_issue
2:	cmp $7, %eax
	jb fill_progress		/* twice in 8 */
	jmp fill_order			/* once */

/* eax = a record's vCPU: its own index mostly, else 0-3 (perhaps one the guest lacks), or hostile */
pick_vcpu:
	BAD
	jb 2f
	RNDMOD 4
	test %eax, %eax
	jz 1f
	mov %r10d, %eax
	ret
1:	RNDMOD 4
	ret
2:	jmp pick_count

/* 1 order record, or 1 in 4 times up to 64 (duplicates, vCPUs it lacks), at FRONT_OFF */
fill_order:
	movl $MVM_REC_ORDER, 8(%rbx)
	RNDMOD 4
	test %eax, %eax
	jnz 1f
	RNDMOD 64
	jmp 2f
1:	xor %eax, %eax
2:	inc %eax
	mov %eax, 12(%rbx)		/* count */
	mov %eax, %ebp
	lea FRONT_OFF(%r13), %rdi
	mov %rdi, 16(%rbx)		/* recs_gpa */
3:	call pick_vcpu
	mov %eax, (%rdi)		/* vcpu */
	RNDMOD 2
	add $2, %eax
	mov %eax, 4(%rdi)		/* workload: flat or perm */
	RNDMOD 8
	sub $4, %eax			/* order 1-4, sequential (a segment per point) 5 in 8 */
	ja 5f
	xor %eax, %eax
5:	inc %eax
	mov %eax, 8(%rdi)
	movl $0, 12(%rdi)
	call rnd
	mov %rax, 16(%rdi)		/* seed */
	movq $1, 24(%rdi)		/* stride_pages */
	movq $PASS_GPA, 32(%rdi)	/* start_gpa */
	movq $PASS_GPA + PASS_BYTES, 40(%rdi) /* end_gpa */
	movq $PASS_BYTES / 4096, 48(%rdi) /* pages */
	RNDMOD 8
	test %eax, %eax
	mov $STRIDE_BYTES, %eax
	jnz 4f
	xor %eax, %eax			/* 1 in 8: no points taken */
4:	mov %rax, 56(%rdi)		/* progress_bytes */
	add $ORDER_BYTES, %rdi
	dec %ebp
	jnz 3b
	jmp hc_issue

/* 1-24 points of one vCPU, on from this vCPU's frontier (FRONT_STATE), the TSC now */
fill_progress:
	movl $MVM_REC_PROGRESS, 8(%rbx)
	RNDMOD 24
	inc %eax
	mov %eax, 12(%rbx)		/* count */
	mov %eax, %ebp
	lea FRONT_OFF(%r13), %rdi
	mov %rdi, 16(%rbx)		/* recs_gpa */
	call pick_vcpu
	mov %eax, %r8d			/* the batch's vCPU */
	mov FRONT_STATE(%r13), %r9	/* bytes done so far */
1:	mov %r8d, (%rdi)		/* vcpu */
	movl $1, 4(%rdi)		/* iteration */
	mov %r9, 8(%rdi)		/* bytes_done */
	movq $PASS_BYTES, 16(%rdi)	/* bytes_total */
	rdtsc
	shl $32, %rdx
	or %rdx, %rax
	mov %rax, 24(%rdi)		/* tsc */
	lea PASS_GPA(%r9), %rax
	mov %rax, 32(%rdi)		/* last_gpa */
	add $STRIDE_BYTES, %r9		/* the next point: 64 KiB on, up to the pass */
	mov $PASS_BYTES, %eax
	cmp %rax, %r9
	cmova %rax, %r9
	BAD
	jae 2f
	call pick_count			/* hostile: any bytes done */
	mov %rax, 8(%rdi)
2:	add $POINT_BYTES, %rdi
	dec %ebp
	jnz 1b
	mov %r9, FRONT_STATE(%r13)
	jmp hc_issue

body_zero:
	BAD
	jb 1f
	RNDMOD 17
	mov %eax, 8(%rbx)		/* count */
	lea RUNS_OFF(%r13), %rdi
	mov %rdi, 16(%rbx)		/* runs_gpa */
	mov $16, %esi
2:	RNDMOD 24			/* a run of 1-4 pages inside the data area */
	add $2, %eax
	shl $12, %rax
	add %r13, %rax
	mov %rax, (%rdi)
	RNDMOD 4
	inc %eax
	mov %rax, 8(%rdi)
	add $16, %rdi
	dec %esi
	jnz 2b
1:	jmp hc_issue

body_mark:
	BAD
	jb 1f
	RNDMOD 4
	inc %eax
	mov %eax, 8(%rbx)		/* mark 1-4 */
	mov %r10d, 12(%rbx)		/* vcpu */
	rdtsc
	mov %eax, 16(%rbx)
	mov %edx, 20(%rbx)		/* tsc */
1:	jmp hc_issue

/* Issue the call at rbx once, or a burst: up to 2^20 times. */
hc_issue:
	RNDMOD 16
	mov $1, %ebp
	cmp $11, %eax
	jb 3f
	cmp $13, %eax
	jb 1f
	mov %eax, %esi
	sub $13, %esi			/* 13, 14, 15: 2^(rnd % 12, 17 or 21) */
	lea burst_bits(%rip), %rcx
	movzbl (%rcx,%rsi), %ecx
	push %rcx
	call rnd
	pop %rcx
	xor %edx, %edx
	div %rcx
	mov %edx, %ecx
	shl %cl, %ebp
	jmp 3f
1:	RNDMOD 64			/* 11, 12: a few */
	lea 1(%rax), %ebp
3:	mov %ebx, %eax
	mov $MVM_HC_PORT, %dx
	out %eax, %dx
	dec %ebp
	jnz 3b
	jmp step

/* eax = a hypercall number: valid ones weighted to the handlers that keep the run going */
pick_nr:
	BAD
	jb 1f
	RNDMOD 20
	lea valid_nrs(%rip), %rcx
	movzbl (%rcx,%rax), %eax
	ret
1:	RNDMOD 16
	cmp $MVM_HC_COUNT, %eax
	jbe 2f
	call rnd			/* 9-15: any number */
2:	ret

/* eax = the size for nr (ebp), or a hostile one */
pick_size:
	BAD
	jb 1f
	cmp $MVM_HC_COUNT, %ebp
	jae 1f
	lea hc_sizes(%rip), %rcx
	movzwl (%rcx,%rbp,2), %eax
	ret
1:	RNDMOD 2
	test %eax, %eax
	jz pick_count
	RNDMOD MVM_HC_ARGS_MAX + 16
	ret

/* eax = a record count a well-behaved guest might send: 1 mostly, up to MVM_RECORDS_MAX */
valid_count:
	RNDMOD 8
	cmp $4, %eax
	jb 1f
	cmp $6, %eax
	jb 2f
	je 3f
	mov $MVM_RECORDS_MAX, %eax
	ret
1:	mov $1, %eax
	ret
2:	RNDMOD 16
	ret
3:	RNDMOD MVM_RECORDS_MAX + 1
	ret

/* rax = anything interesting for a struct slot: a GPA, a count, two counts, or noise */
pick_any:
	RNDMOD 4
	cmp $1, %eax
	jb pick_gpa
	je pick_count
	cmp $2, %eax
	je rnd
	call pick_count
	mov %eax, %r9d
	call pick_count
	shl $32, %rax
	or %r9, %rax
	ret

/* --- port I/O ------------------------------------------------------------------ */
/* edx = a port: the devices' and unclaimed ones; the hypercall and exit ports when hostile */
pick_port:
	BAD
	jb 1f
	RNDMOD 12
	lea ports(%rip), %rcx
	movzwl (%rcx,%rax,2), %eax
	cmp $0xffff, %eax
	jne 2f
	call rnd			/* the table's 0xffff: any port but the two that end runs */
	movzwl %ax, %eax
	cmp $MVM_HC_PORT, %eax
	je 3f
	cmp $MVM_EXIT_PORT, %eax
	jne 2f
3:	mov $0x80, %eax
	jmp 2f
1:	RNDMOD 4			/* hostile: the hypercall port (also mid-range), the exit port, anything */
	lea ports_bad(%rip), %rcx
	movzwl (%rcx,%rax,2), %eax
	cmp $0xffff, %eax
	jne 2f
	call rnd
	movzwl %ax, %eax
2:	mov %eax, %edx
	ret

act_out:
	call pick_port
	push %rdx
	RNDMOD 3
	mov %eax, %esi
	call rnd
	pop %rdx
	cmp $1, %esi
	jb 1f
	je 2f
	out %eax, %dx
	jmp step
1:	out %al, %dx
	jmp step
2:	out %ax, %dx
	jmp step

act_in:
	call pick_port
	push %rdx
	RNDMOD 3
	pop %rdx
	cmp $1, %eax
	jb 1f
	je 2f
	in %dx, %eax
	jmp step
1:	in %dx, %al
	jmp step
2:	in %dx, %ax
	jmp step

/* rep outs/ins of 1-4096 elements between the data area and a port */
act_rep:
	call pick_port
	push %rdx
	RNDMOD 4096
	lea 1(%rax), %ebp		/* count */
	RNDMOD 6
	mov %eax, %esi
	pop %rdx
	mov %esi, %r9d			/* 0-2: outs b/w/l, 3-5: ins b/w/l */
	lea DATA_OFF(%r13), %rdi
	mov %rdi, %rsi
	mov %ebp, %ecx
	cmp $3, %r9d
	jae 4f
	cmp $1, %r9d
	jb 1f
	je 2f
	rep outsl
	jmp step
1:	rep outsb
	jmp step
2:	rep outsw
	jmp step
4:	cmp $4, %r9d
	jb 5f
	je 6f
	rep insl			/* 4096 * 4 bytes fit in the data area */
	jmp step
5:	rep insb
	jmp step
6:	rep insw
	jmp step

/* --- MMIO: loads and stores of every width past RAM (inside the mapped GiB) ---- */
act_mmio:
	mov $MAP_LIMIT - 0x1000, %rax
	sub %r12, %rax
	jbe step			/* RAM fills the mapped GiB: no MMIO to reach */
	mov %rax, %rcx
	push %rcx
	call rnd
	pop %rcx
	xor %edx, %edx
	div %rcx
	lea (%r12,%rdx), %rdi		/* rdi = an address past RAM */
	BAD
	jae 1f
	call rnd			/* hostile: past the mapped GiB too (a #PF: triple fault) */
	and $0x7fffffff, %eax
	mov %rax, %rdi
1:	RNDMOD 10
	mov %eax, %esi
	call rnd
	cmp $1, %esi
	jb 2f
	je 3f
	cmp $3, %esi
	jb 4f
	je 5f
	cmp $5, %esi
	jb 6f
	je 7f
	cmp $7, %esi
	jb 8f
	je 9f
	cmp $8, %esi
	je 10f
	lea DATA_OFF(%r13), %rsi	/* 9: rep movsb from MMIO into the data area */
	xchg %rsi, %rdi
	mov $256, %ecx
	rep movsb
	jmp step
2:	mov %al, (%rdi)
	jmp step
3:	mov %ax, (%rdi)
	jmp step
4:	mov %eax, (%rdi)
	jmp step
5:	mov %rax, (%rdi)
	jmp step
6:	mov (%rdi), %al
	jmp step
7:	mov (%rdi), %ax
	jmp step
8:	mov (%rdi), %eax
	jmp step
9:	mov (%rdi), %rax
	jmp step
10:	mov $64, %ecx			/* 8: rep stosq into MMIO */
	rep stosq
	jmp step

/* --- data for later calls: random qwords at random places of the data area ---- */
act_scribble:
	RNDMOD 256
	lea 1(%rax), %ebp
1:	RNDMOD DATA_BYTES / 8
	lea DATA_OFF(%r13,%rax,8), %rdi
	call pick_any
	mov %rax, (%rdi)
	dec %ebp
	jnz 1b
	jmp step

/* 1-1024 sweep records a workload could send (tables print them), at the data area */
act_recfill:
	RNDMOD MVM_RECORDS_MAX
	lea 1(%rax), %ebp
	lea DATA_OFF(%r13), %rdi
1:	RNDMOD 2
	inc %eax
	mov %eax, (%rdi)		/* workload: sweep or flat */
	RNDMOD 2
	inc %eax
	mov %eax, 4(%rdi)		/* mode: demand or populate */
	RNDMOD 4
	inc %eax
	mov %eax, 8(%rdi)		/* iteration 1-4 */
	RNDMOD 8
	mov %eax, %ecx
	mov $1, %eax
	shl %cl, %eax
	mov %eax, 12(%rdi)		/* size_mib 1-128 */
	RNDMOD 8
	cmp $7, %eax
	jne 3f
	mov $0xffffffff, %eax		/* 7: MVM_VCPU_ALL, else vCPU 0-6 */
3:	mov %eax, 16(%rdi)		/* vcpu */
	movl $0, 20(%rdi)
	mov $6, %esi
	lea 24(%rdi), %r9
4:	call rnd
	shr $40, %rax			/* cycles, pages, faults, pfn_sum: below 2^24 */
	mov %rax, (%r9)
	add $8, %r9
	dec %esi
	jnz 4b
	add $72, %rdi			/* sizeof(struct mvm_rec_sweep) */
	dec %ebp
	jnz 1b
	jmp step

act_pause:
	RNDMOD 1000
	lea 1(%rax), %ecx
1:	pause
	loop 1b
	jmp step

/* --- tables ------------------------------------------------------------------ */
malice:	.byte 0, 4, 16, 64
	.align 8
counts:	.quad 0, 1, 2, 8, 255, 256, 257, 1023
	.quad 1024, 1025, 4095, 4096, 4097, 0xffffffff, 0x100000000, -1
hc_sizes: .short 0, 24, 16, 296, 24, 8, 24, 24	/* sizeof each nr's struct */
valid_nrs: .byte 4, 4, 4, 4, 4, 4, 4, 1, 1, 1, 6, 6, 6, 7, 7, 7, 7, 4, 4, 1
burst_bits: .byte 12, 17, 21
abort_bytes: .byte 0, 0, 0, 0xff, 0xe2, 0x82, 1, 0xc3
ports:	.short MVM_DEBUGCON_PORT, MVM_COM1_PORT, MVM_COM1_PORT + 1, MVM_COM1_PORT + 3
	.short MVM_COM1_PORT + 5, MVM_COM1_PORT + 7, 0x80, 0x3f7, 0x400, 0xffff, 0xffff, 0xffff
ports_bad: .short MVM_HC_PORT, MVM_HC_PORT + 2, MVM_EXIT_PORT, 0xffff
