/* The machine room's own state: the VM and its vCPUs. Only machine/ (and unit tests) include this. */
#ifndef MINIVMM_MACHINE_INTERNAL_H
#define MINIVMM_MACHINE_INTERNAL_H

#include "machine.h"

#define SIG_KICK SIGUSR1 /* to a vCPU thread: leave KVM_RUN */
#define SIG_WAKE SIGUSR2 /* to the main thread: something ended */

struct vcpu {
	struct vm *vm;
	unsigned index;
	int fd;
	struct kvm_run *kvm_run;
	size_t run_size;
	pthread_t thread;
	int started;
	double t_run, t_done; /* the thread's run loop (for --trace) */
	char stopped_at[384]; /* a timed-out run: its registers then (vcpu_describe) */
	/* --snapshot: its state, read by its own thread at its pause point (pause.c). */
	struct vcpu_state *saved;
	int saved_ok, saved_err;
	char saved_why[192];
};

struct vm {
	/* Fixed once setup is done. */
	int kvm_fd, vm_fd;
	struct platform plat;
	struct guest_ram ram;
	struct mvm_image_header image;
	struct vcpu *vcpus;
	unsigned nvcpus;
	/* Spare vCPUs (background prefault): never run, hidden from the guest. */
	struct vcpu *spares;
	unsigned nspares;
	struct io_bus pio, mmio; /* mmio has no devices: every access is unclaimed */
	int strict_io;
	int raw; /* a --raw image: each vCPU also gets a stack (MVM_RAW_STACK_TOP) */
	int pc;	 /* a PC guest (vm_set_pc): irqchip, PIT, its entry below */
	struct vm_pc_entry pc_entry;
	struct vm_hooks hooks;
	struct numa *numa; /* --numa: the plan (vm_map_ram), NULL without */

	/* How the run ends: written once under lock (vm_finish), read by all threads. */
	pthread_mutex_t lock;
	pthread_t main_thread;
	enum run_end end; /* read without the lock by vm_stopping() */
	int status;	  /* guest's exit status, when end == END_GUEST_EXIT or _USAGE */
	char message[VM_MESSAGE_BYTES];
	char report
		[VM_REPORT_BYTES]; /* a Linux guest's first oops line (vm_set_report) */
	unsigned running;	   /* vCPU threads still in their run loop */
	uint64_t entry_flags;	   /* every vCPU's RCX at entry: MVM_ENTRY_* */
	int pausing; /* vm_pause: the end is a pause for a snapshot (pause.c) */
	struct {
		int ready;	       /* vm_snapshot_prepare done */
		int hold;	       /* vCPU threads park at their pause points */
		unsigned parked;       /* how many are parked */
		pthread_cond_t resume; /* hold went to 0 */
		int xsave, xcrs; /* KVM_CHECK_EXTENSION's, asked before any filter */
		uint32_t nmsrs;
		uint32_t msrs[VCPU_MSRS_MAX]; /* KVM_GET_MSR_INDEX_LIST's */
		/* A PC guest: its platform, read by vCPU 0's thread at its pause point. */
		struct vm_pc_state *pc;
		int pc_ok;
	} snap;
	/* vm_start_vcpus: the CPUs vCPU 0's thread takes back once started (loop.c) */
	cpu_set_t cpus;
	int cpus_saved;
};

/* kvm.c */
/*
 * Why /dev/kvm could not be opened (errno e), and what to do about it (root,
 * its group; no KVM device, and why: the kernel, the CPU), in err.
 */
void kvm_open_failed(int e, char *err, size_t errlen);

/* nokvm.c (pure) and nokvm_read.c: why this machine has no /dev/kvm to open. */
struct kvm_facts {
	int open_errno;	 /* open("/dev/kvm")'s */
	char group[64];	 /* EACCES: the group that may open the node, "" when none */
	int module;	 /* /sys/module/kvm: the kernel has KVM */
	char vendor[16]; /* kvm_intel, kvm_amd or kvm_pvm when loaded, else "" */
	int misc;	 /* /sys/class/misc/kvm: the kernel made the device */
	char devno[16];	 /* its dev file, "10:232" ("" unread) */
	int cpu_known;	 /* /proc/cpuinfo's flags were read: */
	int vmx, svm, hypervisor;
	char kmsg[224]; /* the kernel's last line from KVM (/dev/kmsg), "" when none */
};
enum kvm_absence {
	KVM_ABSENT_PERMISSION, /* (d) the node is there; this user may not open it */
	KVM_ABSENT_NODE,       /* the kernel made the device; this /dev has no node */
	KVM_ABSENT_KERNEL,     /* (a) no KVM in the kernel (no /sys/module/kvm) */
	KVM_ABSENT_UNBOUND,    /* (b) KVM in the kernel, no device: the kernel's reason */
	KVM_ABSENT_CPU,	       /* (c) no vmx/svm, and no kvm_pvm to do without */
	KVM_ABSENT_OTHER,      /* another open(2) error: its strerror only */
};
/* Which it is, and one message (no newline) saying so and what to do, in buf. */
enum kvm_absence kvm_absence_explain(const struct kvm_facts *f, char *buf, size_t len);
/*
 * A /dev/kmsg record rec[0..n) ("PRI,SEQ,TS,FLAGS;TEXT\n..."): 1 with its
 * text in out when KVM's modules printed it (kvm:, kvm_amd:, kvm-pvm: ...), else 0.
 */
int kmsg_kvm_line(const char *rec, size_t n, char *out, size_t len);
/* A /proc/cpuinfo line: 1 when it was the flags line (vmx, svm, hypervisor set in f), else 0. */
int cpuinfo_flags_parse(const char *line, struct kvm_facts *f);
/* f filled from sysfs, /proc/cpuinfo and /dev/kmsg (non-blocking, bounded); what fails stays empty. */
void kvm_facts_read(int open_errno, struct kvm_facts *f);
/* Which KVM this is (pvm, vmx, svm) and whether it pages with EPT/NPT, from the modules. */
void platform_kind(struct platform *p);

/* pause.c: a vCPU thread whose loop ended: 1 to run on (released from a pause), 0 to end. */
int vcpu_pause_point(struct vcpu *v);
/* vcpu_state.c: v's state, on its own thread (after vm_snapshot_prepare). 0, or -errno with err. */
int vcpu_state_read(struct vm *vm, struct vcpu *v, struct vcpu_state *s, char *err,
		    size_t errlen);

/* vcpu.c */
int vcpu_create(struct vm *vm, struct vcpu *v, unsigned index); /* 0 or -errno */
int vcpu_set_entry(struct vcpu *v, const struct kvm_cpuid2 *cpuid);
/* A PC guest's vCPU: its CPUID, and vCPU 0's long-mode entry (vm->pc_entry). */
int vcpu_set_pc_entry(struct vcpu *v, const struct kvm_cpuid2 *cpuid);
void vcpu_destroy(struct vcpu *v);
void vcpu_describe(struct vcpu *v, char *buf, size_t len);

/*
 * vm.c: n spare vCPUs, indexes nvcpus .. nvcpus + n - 1, with the guest's
 * CPUID (their TDP roots are the running vCPUs': the role depends on it),
 * never run, not in the boot info: KVM_PRE_FAULT_MEMORY goes through them
 * while the guest's vCPUs are in KVM_RUN. 0 or -errno with err set;
 * vm_teardown closes them.
 */
int vm_create_spare_vcpus(struct vm *vm, unsigned n, char *err, size_t errlen);

/* numa.c: the machine's side of --numa. */
/*
 * Read the host's nodes, choose the VM's, split guest RAM into one range
 * per node and check each node can hold its range, before anything is
 * mapped. 0 with *out, or -errno with err set: -EINVAL (the options do not
 * fit this host: exit 2), -ENOMEM (a node cannot hold its range: exit 3),
 * another (the host).
 */
int numa_plan(const struct vm_config *cfg, uint64_t page_bytes, struct numa **out,
	      char *err, size_t errlen);
/* mbind each range to its node (policy bind or preferred), before any touch. 0 or -errno with err. */
int numa_bind_ram(struct numa *n, const struct guest_ram *ram, char *err, size_t errlen);
/* Worker i of nworkers (eager threads): its share of RAM and the node it runs on. */
void numa_share(const struct numa *n, unsigned nworkers, unsigned i,
		struct mm_numa_share *s);
unsigned numa_vcpu_node(const struct numa *n, unsigned vcpu);
/* The first vCPU of guest node k, and how many it has. */
void numa_node_vcpus(const struct numa *n, unsigned k, unsigned *vcpu0, unsigned *nvcpus);
/* attr pins a thread created with it to guest node k's CPUs. 0 or -errno (attr destroyed). */
int numa_thread_attr(const struct numa *n, unsigned k, pthread_attr_t *attr);
/* On vCPU thread i: where it runs, at its start (start = 1: also its affinity) and end. */
void numa_note_vcpu(struct numa *n, unsigned i, int start);
/* Where the pages of each range are (move_pages), once: the first call's when wins. */
void numa_audit(struct numa *n, const struct guest_ram *ram, enum numa_audit_when when);
void numa_free(struct numa *n);

/* exits.c: KVM exit dispatch, a pure function of the exit (unit-tested with fabricated ones). */
enum vcpu_action { VCPU_CONTINUE, VCPU_STOP };
enum vcpu_action exit_dispatch(struct vm *vm, struct vcpu *v);

/* ---- eager_order.c: the range each eager thread populates next (--eager-order) ---- */

/*
 * Resident 4 KiB pages of [gpa, gpa + len) and the end of the highest in
 * *top (mincore: the frontier order's eyes; injectable for the unit tests).
 */
typedef uint64_t (*residency_fn)(void *cookie, uint64_t gpa, uint64_t len, uint64_t *top);

#define ORDER_CHUNK_BYTES (2ULL << 20) /* the unit of work, unless pages are larger */
#define ORDER_FRONTIER_LEAD \
	0 /* whole chunks the frontier order leaves the guest past its own */
#define ORDER_FRONTIER_WINDOW \
	(16ULL << 20) /* of chunks not its own, a look goes this far past the guest */
#define ORDER_FRONTIER_QUIET \
	16 /* looks without a sighting before one over the whole slice */
#define ORDER_FRONTIER_GAP 1 /* chunks between the last sighting and where it grows */

/*
 * What every thread's cursor shares: guest RAM in chunks and when each was
 * populated whole; for the file order its pieces and who claimed each page.
 * Threads touch it with atomics only.
 */
struct order_plan {
	enum eager_order kind;
	uint64_t ram_bytes, chunk, page, nchunks;
	unsigned nthreads;
	uint64_t *
		chunk_ns; /* per chunk: when its last page was populated (ns), 0 before */
	uint32_t *chunk_pages; /* per chunk: pages populated so far */
	uint8_t *taken;	       /* frontier: per chunk, handed out */
	uint32_t *seen;	       /* frontier: per chunk, resident pages when last counted */
	uint64_t *claimed; /* file: one bit per page, set by the thread populating it */
	struct gpa_range
		*pieces; /* file: its ranges in order, in pages, none across a chunk */
	size_t npieces;
	uint64_t file_pages, file_bytes; /* file: what it names, in the backing's pages */
	uint64_t file_ram_bytes; /* file: the RAM it was recorded with (<= ram_bytes) */
	uint64_t next_piece, next_rest; /* file: the shared cursors */
	residency_fn residency;		/* frontier */
	void *resident_cookie;
};

/* One thread's place in the plan. */
struct order_cursor {
	uint64_t lo, hi;      /* its slice (front, back, frontier), chunk-aligned */
	uint64_t front, back; /* front: next from lo; back: what is left ends here */
	uint64_t guest;	      /* frontier: the guest's frontier as last seen */
	unsigned quiet;	      /* frontier: looks since the guest was last seen */
	uint64_t left;	      /* frontier: chunks of the slice not handed out */
	uint64_t at, end;     /* file: the piece or chunk being worked through */
	int have, in_rest, from_file;
};

/*
 * Plan RAM of ram_bytes (backing pages of page bytes) for nthreads threads
 * in order kind; file: the --eager-order file's ranges (kept by the plan).
 * 0 or -ENOMEM; order_plan_free() in both cases.
 */
int order_plan_init(struct order_plan *p, enum eager_order kind, uint64_t ram_bytes,
		    uint64_t page, unsigned nthreads, const struct touch_order *file);
void order_plan_free(struct order_plan *p);
/* Thread i's cursor: its slice (a share of whole chunks) for the slice orders. */
void order_cursor_init(const struct order_plan *p, unsigned i, struct order_cursor *c);
/*
 * The next range thread c populates: 1 with [*gpa, *gpa + *len), page-aligned
 * and inside one chunk, now its own (*from_file: one of the file's); 0 when
 * it has nothing left.
 */
int order_next(struct order_plan *p, struct order_cursor *c, uint64_t *gpa, uint64_t *len,
	       int *from_file);
/* The range order_next gave is populated, at t_ns (CLOCK_MONOTONIC). */
void order_done(struct order_plan *p, uint64_t gpa, uint64_t len, uint64_t t_ns);

/*
 * sandbox.c, sandbox_load.c: the seccomp programs are built at compile time
 * (gen/sandbox_gen.c runs sandbox.c's rules through libseccomp) with a
 * placeholder in every comparison with a run-time value; sandbox_load.c
 * patches the values into a copy and loads it. Slots with no value (fewer
 * stats or output fds than slots) get SANDBOX_NO_FD.
 */
#define SANDBOX_MAX_STATS 32 /* KVM stats fds: the VM's and 31 vCPUs' */
#define SANDBOX_MAX_OUT \
	4 /* the main thread's output fds (run.c: 2 + 2; a clone: 1 + 2 + 1) */
#define SANDBOX_MAX_DIRS \
	3 /* their directories: the results', the trace's, the record's */
#define SANDBOX_MAX_FILL_UFFDS 16 /* SANDBOX_FILL: the handlers' uffds (one per thread) */
enum sandbox_slot {
	SLOT_PID,	 /* tgkill's target process */
	SLOT_VCPU,	 /* SANDBOX_VCPU: its vCPU fd */
	SLOT_UFFD,	 /* SANDBOX_UFFD: its userfaultfd */
	SLOT_SPARE,	 /* SANDBOX_EAGER: the spare vCPU it prefaults through */
	SLOT_VM,	 /* SANDBOX_VCPU of a PC guest: the VM fd, for KVM_IRQ_LINE */
	SLOT_FILE,	 /* SANDBOX_FILL: the memory file */
	SLOT_SNAP_STATE, /* SANDBOX_SAVER: the snapshot's files and directories */
	SLOT_SNAP_MEM,
	SLOT_SNAP_TMP,
	SLOT_SNAP_PARENT,
	SLOT_SNAP_PAGEMAP, /* the save reads anonymous RAM's pagemap, */
	SLOT_SNAP_RAM,	   /* and RAM's own file (memfd, --mem-path) */
	SLOT_FILL_UFFDS,
	SLOT_STATS = SLOT_FILL_UFFDS + SANDBOX_MAX_FILL_UFFDS,
	SLOT_OUT = SLOT_STATS + SANDBOX_MAX_STATS,
	SLOT_DIR = SLOT_OUT + SANDBOX_MAX_OUT, /* SANDBOX_MAIN: the final rename's */
	SLOT_COUNT = SLOT_DIR + SANDBOX_MAX_DIRS
};
/* Above any pid (PID_MAX_LIMIT is 2^22) or fd a run has; no syscall, ioctl or flag value here. */
#define SANDBOX_PLACEHOLDER_BASE  0x5ecc0000u
#define SANDBOX_PLACEHOLDER(slot) (SANDBOX_PLACEHOLDER_BASE + (unsigned)(slot))
/* Never an open fd: the kernel's fs.nr_open is at most INT_MAX & -64. */
#define SANDBOX_NO_FD 0x7fffffff
/* make SAN=1 (and fuzz builds) allow what the sanitizers' runtime does (sandbox.c). */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_UNDEFINED__) || \
	defined(MINIVMM_SANITIZE)
#define SANDBOX_SANITIZER_RULES 1
#else
#define SANDBOX_SANITIZER_RULES 0
#endif

struct sandbox_patch {
	uint16_t insn; /* the JEQ whose k is the slot's 32-bit value */
	uint16_t slot;
};
struct sandbox_template {
	const struct sock_filter *insns;
	unsigned len;
	const struct sandbox_patch *patches;
	unsigned npatches;
};
/* build/host/gen/sandbox_bpf.c, indexed by role; built with or without the sanitizer rules. */
extern const struct sandbox_template sandbox_templates[SANDBOX_ROLES];
extern const int sandbox_templates_sanitizer_rules;

/* A role's rules for these values (libseccomp context; seccomp_release it). 0 or -errno. */
int sandbox_rules(enum sandbox_role role, const struct sandbox_fds *f, long pid,
		  void **ctx);
/* Slot values for f and pid: -E2BIG when f has more fds than slots. */
int sandbox_slot_values(enum sandbox_role role, const struct sandbox_fds *f, long pid,
			uint32_t values[SLOT_COUNT]);

/* sandbox_probe.c: MINIVMM_TEST_SECCOMP_PROBE names this role (said on stderr): 1. */
int sandbox_probe_wanted(enum sandbox_role role);
void sandbox_probe_run(void); /* a call no filter allows: SIGSYS */

#endif /* MINIVMM_MACHINE_INTERNAL_H */
