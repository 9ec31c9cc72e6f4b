/* The guest/VMM contract: image header, entry state, boot info and hypercalls. */
#ifndef MINIVMM_ABI_H
#define MINIVMM_ABI_H

/*
 * This is the one header compiled by both the VMM (hosted) and the guest
 * (freestanding). It holds only fixed-size types and constants. Any change to
 * a layout or a number here bumps MVM_ABI_VERSION.
 *
 * Old images keep running (the KVM API's rule, not Solo5's refusal): an
 * image built for any version from MVM_ABI_OLDEST to MVM_ABI_VERSION runs,
 * because every version since MVM_ABI_OLDEST only added to the one before
 * (hypercall numbers, record kinds, enum values, marks, boot-info nodes and
 * properties a guest may ignore) and the VMM keeps every older meaning. So a
 * version that adds a hypercall or a mark keeps images of the one before
 * running, untouched; the boot info's minivmm,abi-version says the image's
 * own version, the contract of that run. A change that alters a layout or a
 * meaning sets MVM_ABI_OLDEST to the new version: older images are then
 * refused, with what changed (vmm/boot/image.c, abi_changes). The first
 * fields of struct mvm_image_header (magic, abi_version) never change. A
 * feature that needs more of the guest than its image's version has (the
 * /numa node, ABI 3) is refused for that image, saying which version it
 * needs. An image built for a newer version than the VMM's is refused.
 *
 * Image: a flat binary loaded at MVM_LOAD_GPA. It starts with struct
 * mvm_image_header; the VMM refuses files without MVM_IMAGE_MAGIC.
 *
 * Entry state (every vCPU, set by the VMM, no INIT/SIPI):
 *   64-bit long mode, CPL0, CS = MVM_SEL_KCODE, DS/ES/SS = MVM_SEL_KDATA,
 *   CR0 = PE|MP|ET|NE|WP|AM|PG, CR4 = PAE, EFER = SCE|LME|LMA, RFLAGS = 0x2
 *   (interrupts off), CR3 = VMM-built tables that identity-map
 *   [0, MVM_ENTRY_MAP_BYTES) with 2 MiB pages (the firmware replaces them),
 *   RIP = header.entry_gpa, RDI = GPA of the boot info (a flattened device
 *   tree), RSI = vCPU index, RDX = number of vCPUs, RCX = MVM_ENTRY_* flags
 *   (ABI 5; 0 before), RSP = 0 (the firmware picks its own stack).
 *   Guest RAM is one range [0, mem_bytes) and reads as zero except for the
 *   image, the boot info and the entry page tables.
 *
 * Boot info (FDT, /dts-v1/, #address-cells = #size-cells = 2 at the root),
 * property names as the MVM_FDT_* constants below:
 *   /compatible = "minivmm"; /minivmm,abi-version = <MVM_ABI_VERSION>
 *   /memory@0 { device_type = "memory"; reg = <0 0 size-hi size-lo>; }
 *   /cpus { cpu@N { device_type = "cpu"; reg = <N>;
 *                   numa-node-id = <K>  (with /numa only: cpu N's node); } ... }
 *   /chosen { bootargs = "args joined by spaces";
 *             minivmm,args = "arg0", "arg1", ...  (exact, may be absent);
 *             minivmm,tsc-khz = <u32>;
 *             minivmm,eager = "touch"  (only with --eager=touch);
 *             minivmm,paging = "tdp" or "shadow"  (what KVM uses; optional);
 *             minivmm,snapshot = <1>  (ABI 5, only with --snapshot: the VMM
 *                 saves the VM when the guest asks, MVM_HC_SNAPSHOT; the
 *                 entry's RCX says the same, MVM_ENTRY_SNAPSHOT, at no cost:
 *                 a missing property's lookup is thousands of emulated
 *                 instructions on PVM); }
 *   /numa (ABI 3, only with --numa; the root's next child after /chosen, so
 *         that a firmware finds it, or that there is none, without walking
 *         the tree) { #address-cells = <2>; #size-cells = <2>;
 *             minivmm,policy = "bind", "preferred" or "first-touch";
 *             node@K { reg = <gpa-hi gpa-lo size-hi size-lo>;
 *                      minivmm,vcpus = <first count>;
 *                      minivmm,host-node = <host node id>; } ... }
 *     Guest RAM in one range per node: node@0 starts at 0, each starts where
 *     the one before ends, the last ends at mem_bytes; at most
 *     MVM_NUMA_MAX_NODES nodes. Node K's vCPUs are the run [first, first +
 *     count), count >= 1, the runs in node order covering every vCPU (the
 *     cpus' numa-node-id say the same). The host keeps a node's range on
 *     its host node (the policy) and runs its vCPUs on that node's CPUs; a
 *     node's i-th vCPU owns the i-th mvm_slice of its range in 2 MiB units:
 *     what --eager=touch touches, and what --eager populates on that vCPU's
 *     thread (in 1 GiB units with 1 GiB host pages).
 *
 * Hypercalls: the guest writes, with one 32-bit OUT to MVM_HC_PORT, the GPA
 * of an argument struct that starts with struct mvm_hc_hdr. The struct must
 * lie wholly inside guest RAM below 4 GiB and `size` must equal the size of
 * the struct for `nr`. Anything else is an ABI violation that ends the run
 * (exit status 4). Hypercalls exit to the VMM (tens of microseconds on some
 * platforms): never issue one inside a timed loop.
 */

#ifndef __ASSEMBLER__
#include <stdint.h>
#endif

#define MVM_ABI_VERSION 5
#define MVM_ABI_OLDEST	1 /* the oldest image version that still runs (above) */

#define MVM_IMAGE_MAGIC	    "MINIVMM"
#define MVM_LOAD_GPA	    0x100000ULL
#define MVM_BOOTINFO_GPA    0x10000ULL
#define MVM_BOOTINFO_MAX    (MVM_LOAD_GPA - MVM_BOOTINFO_GPA)
#define MVM_ENTRY_PT_GPA    0x1000ULL /* PML4, PDPT, PD: 3 pages */
#define MVM_ENTRY_MAP_BYTES (1ULL << 30)
#define MVM_RAM_ALIGN_BYTES (2ULL << 20) /* guest RAM is whole 2 MiB pages */
#define MVM_PAGE_BYTES	    4096ULL
#define MVM_HC_PORT	    0x0510
#define MVM_DEBUGCON_PORT   0x00e9 /* QEMU/Bochs debug console */
#define MVM_COM1_PORT	    0x03f8
#define MVM_EXIT_PORT	    0x00f4 /* an OUT here ends the run, the value its status */
/* A Linux guest (--kernel): its /init writes the byte MVM_BOOT_TIMER_MAGIC to
 * MVM_BOOT_TIMER_PORT (an 8-bit OUT, after ioperm) the moment it starts: the
 * init_start mark. The first write is kept, later ones are counted. Not used
 * by minivmm images, so no MVM_ABI_VERSION change. */
#define MVM_BOOT_TIMER_PORT  0x0514
#define MVM_BOOT_TIMER_MAGIC 123  /* Firecracker's boot-timer byte */
#define MVM_MAX_GUEST_ARGS   64	  /* minivmm,args entries */
#define MVM_GUEST_ARGS_BYTES 2048 /* minivmm,args length, NULs included */
/* A Linux guest's workload arguments travel on the kernel command line after
 * " -- ": minivmm puts double quotes around one that holds a byte the
 * kernel's isspace() takes (lib/ctype.c: these, and 0xa0) or is empty, and
 * refuses '"' and newline; /init splits and unquotes as the kernel's
 * next_arg() does. Not used by minivmm images, so no MVM_ABI_VERSION change. */
#define MVM_CMDLINE_SPACES " \t\n\v\f\r\xa0"

/* Boot-info node and property names: the VMM writes them, the firmware reads them. */
#define MVM_FDT_COMPATIBLE    "minivmm"
#define MVM_FDT_ABI_VERSION   "minivmm,abi-version"
#define MVM_FDT_MEMORY	      "memory@0" /* node names, children of the root */
#define MVM_FDT_CPUS	      "cpus"
#define MVM_FDT_CHOSEN	      "chosen"
#define MVM_FDT_BOOTARGS      "bootargs"
#define MVM_FDT_ARGS	      "minivmm,args"
#define MVM_FDT_TSC_KHZ	      "minivmm,tsc-khz"
#define MVM_FDT_EAGER	      "minivmm,eager"
#define MVM_FDT_EAGER_TOUCH   "touch"
#define MVM_FDT_PAGING	      "minivmm,paging"	 /* how the second level is built: */
#define MVM_FDT_PAGING_TDP    "tdp"		 /* EPT/NPT */
#define MVM_FDT_PAGING_SHADOW "shadow"		 /* shadow paging (PVM, ept=0, npt=0) */
#define MVM_FDT_SNAPSHOT      "minivmm,snapshot" /* ABI 5: --snapshot wants one */
#define MVM_ENTRY_SNAPSHOT    0x1		 /* ABI 5, RCX at entry: the same */
#define MVM_FDT_NUMA	      "numa" /* ABI 3: --numa's nodes (a child of the root) */
#define MVM_FDT_NUMA_POLICY   "minivmm,policy"
#define MVM_FDT_NUMA_VCPUS    "minivmm,vcpus"
#define MVM_FDT_NUMA_HOST     "minivmm,host-node"
#define MVM_FDT_NUMA_NODE_ID  "numa-node-id" /* on cpu@N: Linux's DT NUMA binding */
#define MVM_NUMA_MAX_NODES    64

/* Hypercall numbers (struct mvm_hc_hdr.nr); MVM_HC_LIST below names each one's struct. */
#define MVM_HC_CONSOLE	1 /* struct mvm_hc_console */
#define MVM_HC_EXIT	2 /* struct mvm_hc_exit: ends the VM */
#define MVM_HC_ABORT	3 /* struct mvm_hc_abort: ends the VM, status 4 */
#define MVM_HC_RECORDS	4 /* struct mvm_hc_records: batched results */
#define MVM_HC_PARK	5 /* struct mvm_hc_hdr: this vCPU has no more work */
#define MVM_HC_ZERO	6 /* struct mvm_hc_zero: zero runs of guest pages */
#define MVM_HC_MARK	7 /* struct mvm_hc_mark: a phase of the run ended */
#define MVM_HC_SNAPSHOT 8 /* struct mvm_hc_snapshot: save the VM here (ABI 5) */
#define MVM_HC_COUNT	9

/* Guest phase marks (struct mvm_hc_mark.mark), in the order a run reaches them. */
#define MVM_MARK_FIRMWARE_READY	   1 /* firmware booted, about to enter CPL3 */
#define MVM_MARK_WORKLOAD_START	   2
#define MVM_MARK_FIRST_USEFUL_WORK 3 /* the workload's first full pass is done */
#define MVM_MARK_WORKLOAD_END	   4
#define MVM_MARK_COUNT		   5

/* Linux GDT selector layout: required for CPL3 on PVM, standard elsewhere. */
#define MVM_SEL_KCODE 0x10
#define MVM_SEL_KDATA 0x18
#define MVM_SEL_UDATA 0x2b
#define MVM_SEL_UCODE 0x33
#define MVM_SEL_TSS   0x40

#ifndef __ASSEMBLER__
struct mvm_image_header {
	char magic[8];	      /* MVM_IMAGE_MAGIC, NUL-padded */
	uint32_t abi_version; /* MVM_ABI_VERSION the image was built for */
	uint32_t max_vcpus;   /* vCPUs the firmware has per-CPU state for */
	uint64_t load_gpa;    /* where the image expects to be loaded */
	uint64_t entry_gpa;   /* first instruction of every vCPU */
	uint64_t end_gpa;     /* end of the image's memory (bss included) */
};

struct mvm_hc_hdr {
	uint32_t nr;   /* MVM_HC_* */
	uint32_t size; /* sizeof the whole argument struct */
};

#define MVM_CONSOLE_MAX_BYTES 4096

struct mvm_hc_console {
	struct mvm_hc_hdr hdr;
	uint64_t buf_gpa; /* bytes to write, inside guest RAM */
	uint64_t len;	  /* at most MVM_CONSOLE_MAX_BYTES */
};

/*
 * A guest's exit status (the exit hypercall's, or the exit port's) of 2 says
 * its arguments were wrong, as a Unix tool's 2 does: minivmm then exits 2
 * too (reason guest-usage), so a script tells a mistyped workload option
 * from a workload that failed (exit 1).
 */
#define MVM_EXIT_USAGE 2

struct mvm_hc_exit {
	struct mvm_hc_hdr hdr;
	int32_t status; /* 0 success; MVM_EXIT_USAGE: see there; anything else: minivmm exits 1 */
	uint32_t pad;
};

/* An abort is a guest crash: an unhandled exception or a failed assert. */
#define MVM_ABORT_NO_VECTOR 0xffffffffu
struct mvm_hc_abort {
	struct mvm_hc_hdr hdr;
	uint32_t line;
	uint32_t vector; /* exception vector, or MVM_ABORT_NO_VECTOR */
	uint64_t error_code;
	uint64_t rip;
	uint64_t cr2;
	char file[64]; /* NUL-terminated within the array */
	char msg[192]; /* NUL-terminated within the array */
};

/*
 * Result records, sent in batches, never from inside a timed region. A
 * batch holds records of one kind. The VMM samples KVM's counters at every
 * MVM_REC_SWEEP batch: its counters are what KVM counted since the previous
 * sweep batch, so a workload sends one batch per measurement (and an empty
 * batch, count 0, where counting starts). Other kinds take no sample. ABI 2
 * added the touch frontier (MVM_REC_PROGRESS) and the order a pass touches
 * its pages in (MVM_REC_ORDER), sent by flat and perm after their last
 * measurement, and the workload perm (MVM_WL_PERM).
 *
 * The VMM copies a batch out of guest memory once and checks the copy;
 * anything else is an ABI violation: a sweep record's workload and mode are
 * known ones (populate for sweep only), iteration and size_mib count from
 * 1, and a batch is one measurement (every record of the same workload,
 * iteration, size and mode); vcpu is below the guest's vCPU count (or
 * MVM_VCPU_ALL in sweep and touch records); a touch batch holds at most one
 * record per vCPU and one for all; progress points have bytes_done <=
 * bytes_total; order records name a known workload and order; no range
 * ends before it starts. Across the run's batches: one order record per
 * vCPU, sent before that vCPU's progress points; a point's bytes_total is
 * its vCPU's pass (end_gpa - start_gpa of its order record), its bytes_done
 * never below the vCPU's previous point's, and a vCPU sends at most
 * pass / progress_bytes + 2 points (none when progress_bytes is 0).
 * A violation ends the run (exit status 4, reason abi-violation); what came
 * before it is kept.
 */
enum mvm_rec_kind {
	MVM_REC_SWEEP = 1,    /* struct mvm_rec_sweep */
	MVM_REC_TOUCH = 2,    /* struct mvm_rec_touch */
	MVM_REC_PROGRESS = 3, /* struct mvm_rec_progress (ABI 2) */
	MVM_REC_ORDER = 4,    /* struct mvm_rec_order (ABI 2) */
	MVM_REC_COUNT = 5,    /* one past the last */
};

#define MVM_RECORDS_MAX 1024 /* records per hypercall */

/*
 * What the VMM keeps of one run's records, at most (guest limits, no
 * layout: they need no ABI bump). A guest that sends more ends its run
 * with exit status 4, reason guest-limit, and a message naming the limit;
 * what it sent before is kept and written. Each is far above what the
 * workloads send (the largest: sweep --parallel on 256 vCPUs, 12 sizes x 5
 * iterations x 2 modes, 30,840 sweep records in 121 batches; flat or perm
 * on 256 vCPUs with the default progress stride, 66,048 points) and keeps
 * a run's results file under 64 MiB and the store under ~20 MiB.
 */
#define MVM_SWEEP_RECORDS_MAX	 131072 /* MVM_REC_SWEEP records per run */
#define MVM_SWEEP_BATCHES_MAX	 4096	/* MVM_REC_SWEEP batches (measurements) per run */
#define MVM_PROGRESS_RECORDS_MAX 131072 /* MVM_REC_PROGRESS points per run */
#define MVM_ORDER_RECORDS_MAX	 4096	/* MVM_REC_ORDER records per run (one per vCPU) */
#define MVM_TOUCH_BATCHES_MAX	 1	/* MVM_REC_TOUCH batches per run (the one pass) */

struct mvm_hc_records {
	struct mvm_hc_hdr hdr;
	uint32_t kind;	/* enum mvm_rec_kind */
	uint32_t count; /* records at recs_gpa, at most MVM_RECORDS_MAX */
	uint64_t recs_gpa;
};

#define MVM_VCPU_ALL 0xffffffffu /* a record's vcpu when it sums up all vCPUs */

/* --eager=touch: what one vCPU (or MVM_VCPU_ALL: the whole pass) touched. */
struct mvm_rec_touch {
	uint32_t vcpu;
	uint32_t pad;
	uint64_t start_gpa, end_gpa; /* the vCPU's slice (mvm_slice, 2 MiB units) */
	uint64_t pages;		     /* pages written (page 0 is never mapped) */
	uint64_t cycles;	     /* TSC cycles */
};

/*
 * Zero guest pages on the guest's behalf. Guest kernel code is emulated on
 * PVM (~0.5 us per instruction, so ~1 ms to clear one 4 KiB page); the
 * firmware clears freed pages with this call instead, one exit per batch.
 */
#define MVM_ZERO_RUNS_MAX 256
struct mvm_zero_run {
	uint64_t gpa;	/* page-aligned */
	uint64_t pages; /* 4 KiB pages from gpa */
};

struct mvm_hc_zero {
	struct mvm_hc_hdr hdr;
	uint32_t count; /* runs at runs_gpa, at most MVM_ZERO_RUNS_MAX */
	uint32_t pad;
	uint64_t runs_gpa;
};

struct mvm_hc_mark {
	struct mvm_hc_hdr hdr;
	uint32_t mark; /* MVM_MARK_* */
	uint32_t vcpu;
	uint64_t tsc; /* when it happened, on the guest's TSC */
};

/*
 * Snapshot (ABI 5): the guest asks the VMM to save the VM at this point,
 * between two passes of its work. Every vCPU is paused, the VM saved, and
 * the VMM writes `result` into the guest's struct (in guest RAM, before RAM
 * is saved): the saved guest, once restored, reads MVM_SNAP_RESTORED; the
 * running guest reads MVM_SNAP_TAKEN if it runs on (--snapshot-continue;
 * without it the run ends here, exit 0), MVM_SNAP_NONE without --snapshot,
 * MVM_SNAP_REFUSED once one was taken (the first is honoured) or when the
 * snapshot failed. A guest that asks more than MVM_SNAPSHOT_ASKS_MAX times
 * ends its run (guest-limit, exit 4). `checksum` is the guest's own
 * checksum of its memory (kept in the snapshot and reported; the restored
 * guest compares its own against it). `pass`: passes done before it.
 */
#define MVM_SNAP_NONE	      0
#define MVM_SNAP_TAKEN	      1
#define MVM_SNAP_RESTORED     2
#define MVM_SNAP_REFUSED      3
#define MVM_SNAPSHOT_ASKS_MAX 64 /* per run (a guest limit, no layout) */
struct mvm_hc_snapshot {
	struct mvm_hc_hdr hdr;
	uint32_t vcpu;
	uint32_t result; /* MVM_SNAP_*, written by the VMM */
	uint64_t checksum;
	uint64_t pass;
};

/*
 * Every hypercall once: X(name, number, argument struct). The VMM builds its
 * one table of handlers from this list, so a number without a handler, or an
 * argument struct larger than MVM_HC_ARGS_MAX (what the VMM copies), does not
 * build. Keep it in number order; MVM_HC_COUNT is one past the last.
 */
#define MVM_HC_LIST(X)                                    \
	X(console, MVM_HC_CONSOLE, struct mvm_hc_console) \
	X(exit, MVM_HC_EXIT, struct mvm_hc_exit)          \
	X(abort, MVM_HC_ABORT, struct mvm_hc_abort)       \
	X(records, MVM_HC_RECORDS, struct mvm_hc_records) \
	X(park, MVM_HC_PARK, struct mvm_hc_hdr)           \
	X(zero, MVM_HC_ZERO, struct mvm_hc_zero)          \
	X(mark, MVM_HC_MARK, struct mvm_hc_mark)          \
	X(snapshot, MVM_HC_SNAPSHOT, struct mvm_hc_snapshot)
#define MVM_HC_ARGS_MAX 512 /* bytes: the largest argument struct the ABI allows */

enum mvm_workload { MVM_WL_SWEEP = 1, MVM_WL_FLAT = 2, MVM_WL_PERM = 3 };
enum mvm_mode { MVM_MODE_DEMAND = 1, MVM_MODE_POPULATE = 2 };

/*
 * One measurement, as OSv's benchmark: mmap (map_cycles), write one byte per
 * 4 KiB page (touch_cycles: OSv's timed region), munmap (unmap_cycles). TSC
 * cycles. flat and perm have no mmap or munmap: they touch the direct map
 * (mode MVM_MODE_DEMAND); perm in the order its mvm_rec_order names, one
 * measurement per pass of size_mib MiB per vCPU.
 */
struct mvm_rec_sweep {
	uint32_t workload;  /* enum mvm_workload */
	uint32_t mode;	    /* enum mvm_mode */
	uint32_t iteration; /* from 1 */
	uint32_t size_mib;
	uint32_t vcpu;
	uint32_t pad;
	uint64_t map_cycles;
	uint64_t touch_cycles;
	uint64_t pages;
	uint64_t guest_faults; /* guest #PF taken inside the timed touch loop */
	uint64_t pfn_sum;      /* sum of the physical frames mapped: reuse check */
	uint64_t unmap_cycles; /* munmap afterwards (timed apart, as map_cycles) */
};

/*
 * The touch frontier of one vCPU's first pass (flat, perm): one point at
 * the start (bytes_done 0), one every progress stride (mvm_rec_order's
 * progress_bytes) and one at the end (bytes_done == bytes_total). The guest
 * stores them in its own memory inside the timed loop (a TSC read, no
 * exit) and sends them after its last measurement, so no sweep batch's
 * KVM counters include them. Points of one vCPU come in order: bytes_done
 * and tsc never decrease.
 */
struct mvm_rec_progress {
	uint32_t vcpu;
	uint32_t iteration;   /* the pass, from 1 */
	uint64_t bytes_done;  /* of this vCPU's pass, when tsc was read */
	uint64_t bytes_total; /* the whole pass of this vCPU */
	uint64_t tsc;	      /* guest TSC */
	uint64_t last_gpa;    /* the page written last (0 at bytes_done 0) */
};

/* The order a pass touches its pages in (struct mvm_rec_order.order). */
enum mvm_order {
	MVM_ORDER_SEQUENTIAL = 1, /* first page to last */
	MVM_ORDER_RANDOM = 2,	  /* a permutation of the pages fixed by the seed */
	MVM_ORDER_STRIDE = 3,	  /* pages 0, s, 2s, ..., then 1, 1 + s, ...: each once */
	MVM_ORDER_BLOCKS = 4,	  /* blocks of s pages in a permutation fixed by the seed,
				     each block's pages first to last */
};

/*
 * How one vCPU's pass walks its pages, sent once per vCPU with the progress
 * points. Every pass of a run walks the same pages in the same order.
 */
struct mvm_rec_order {
	uint32_t vcpu;
	uint32_t workload; /* enum mvm_workload */
	uint32_t order;	   /* enum mvm_order */
	uint32_t pad;
	uint64_t seed;		     /* RANDOM, BLOCKS: the permutation's; else 0 */
	uint64_t stride_pages;	     /* STRIDE, BLOCKS: s; SEQUENTIAL: 1; RANDOM: 0 */
	uint64_t start_gpa, end_gpa; /* the pages the pass writes: [start_gpa, end_gpa) */
	uint64_t pages;		     /* written per pass: (end_gpa - start_gpa) / 4 KiB */
	uint64_t progress_bytes;     /* stride of the progress points; 0: none taken */
};
_Static_assert(sizeof(struct mvm_rec_progress) == 40, "mvm_rec_progress: no padding");
_Static_assert(sizeof(struct mvm_rec_order) == 64, "mvm_rec_order: no padding");

/*
 * Slice i of n of [0, total): whole `align` units, as even as they come,
 * covering every byte exactly once. Eager population (one host thread per
 * slice) and the guest's touch pass (one vCPU per slice) both use it.
 */
static inline void mvm_slice(uint64_t total, uint32_t n, uint32_t i, uint64_t align,
			     uint64_t *start, uint64_t *end)
{
	uint64_t units = total / align;

	*start = units * i / n * align;
	*end = i + 1 == n ? total : units * (i + 1) / n * align;
}

#endif /* __ASSEMBLER__ */

#endif /* MINIVMM_ABI_H */
