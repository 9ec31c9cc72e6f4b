/* The machine: KVM, one VM and its vCPU threads, how a run ends, the loader, the sandbox, eager's mechanism. */
#ifndef MINIVMM_MACHINE_H
#define MINIVMM_MACHINE_H

/*
 * This room runs the VM and prints nothing: what it did is read through the
 * functions below by the rooms above it (measure, report, the application).
 * May include: machine/, devices/, mm/, include/.
 */

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include <linux/kvm.h>

#include "minivmm_abi.h"
#include "devices.h"
#include "numa.h"
#include "paging.h"
#include "ram.h"
#include "roofline.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#define NSEC_PER_SEC  1000000000ULL
#define NSEC_PER_MSEC 1000000ULL
#define NSEC_PER_USEC 1000ULL
#define MSEC_PER_SEC  1000.0
#define BYTES_PER_GIB (1024.0 * 1024.0 * 1024.0)
#define BYTES_PER_MIB (1024.0 * 1024.0)
#define KHZ_PER_MHZ   1000ULL
#define HZ_PER_KHZ    1000ULL

/* Throughput in GiB/s; 0 for a zero or negative time. */
static inline double gib_per_s(double bytes, double s)
{
	return s > 0 ? bytes / BYTES_PER_GIB / s : 0;
}

/*
 * A time in whole ns, rounded to the nearest: the clock's resolution, and
 * what every time in the results file is (so that sums and differences of
 * printed times are exact). Finite arguments only.
 */
static inline int64_t ns_of_s(double s)
{
	return llround(s * (double)NSEC_PER_SEC);
}

static inline int64_t ns_of_ms(double ms)
{
	return llround(ms * (double)NSEC_PER_MSEC);
}

static inline double ms_of_ns(int64_t ns)
{
	return (double)ns / (double)NSEC_PER_MSEC;
}

/* CLOCK_MONOTONIC in seconds: the one clock every phase and span is on. */
static inline double now_s(void)
{
	return mm_now_s();
}

/* ---- end.c: how a run ends. One table row per reason: name, exit status, meaning. */

/* Exit statuses of the minivmm process; exit_statuses[] describes each. */
enum {
	EXIT_GUEST_OK = 0,
	EXIT_GUEST_FAILED = 1,
	EXIT_USAGE = 2,
	EXIT_HOST = 3,
	EXIT_GUEST_CRASH = 4,
	EXIT_TIMEOUT = 5,
	EXIT_INTERRUPTED = 130,
	EXIT_OUTPUT_CLOSED = 141, /* as a process killed by SIGPIPE (128 + 13) */
};

struct exit_status_row {
	int status;
	const char *meaning; /* --help, README and the man page list these */
};
extern const struct exit_status_row exit_statuses[];
extern const unsigned exit_status_count;

/* Why a run ended: the first end reported wins. */
enum run_end {
	END_RUNNING,
	END_GUEST_EXIT,	   /* exit hypercall; the status depends on the guest's */
	END_GUEST_ABORT,   /* abort hypercall: failed assert or unhandled exception */
	END_GUEST_CRASH,   /* triple fault, emulation failure, entry failure, bad exit */
	END_GUEST_HALT,	   /* HLT: nothing ever wakes a minivmm vCPU */
	END_GUEST_PARKED,  /* every vCPU parked without the exit hypercall */
	END_ABI_VIOLATION, /* a hypercall or port access the ABI does not allow */
	END_GUEST_LIMIT,   /* the guest sent more than the VMM keeps (MVM_*_MAX) */
	END_UNCLAIMED_IO,  /* --strict-io */
	END_NOT_A_GUEST,   /* the image is not a minivmm guest for this ABI */
	END_TIMEOUT,
	END_INTERRUPTED,
	END_OUTPUT_CLOSED, /* stdout's reader is gone (| head) */
	END_HOST_ERROR,	   /* an ioctl or allocation failed on the host */
	END_USAGE,	   /* the options or the image do not fit together */
	END_GUEST_USAGE,   /* the guest exited MVM_EXIT_USAGE: its arguments are wrong */
	END_SNAPSHOT,	 /* --snapshot: saved where the guest asked, the run ends there */
	END_GUEST_PANIC, /* a Linux guest reset after "Kernel panic" on its console */
	END_GUEST_RESET, /* a Linux guest reset the machine (i8042) without a panic */
	END_PLATFORM,	 /* this KVM cannot run the guest usefully (--kernel on PVM) */
	END_COUNT
};

struct run_end_row {
	enum run_end end;
	const char *reason; /* exit.reason in the results */
	int status;	    /* the process exit status */
	const char *meaning;
};
extern const struct run_end_row run_ends[];
const struct run_end_row *run_end_row(enum run_end end);

/* ---- eager.c: the strategies (the options and --help list every row but "none") */
enum eager_strategy {
	EAGER_NONE,	/* lazy: everything faults in on first touch */
	EAGER_AUTO,	/* prefault where KVM has it, else populate */
	EAGER_POPULATE, /* MADV_POPULATE_WRITE on each thread's slice */
	EAGER_PREFAULT, /* populate, then KVM_PRE_FAULT_MEMORY (TDP only) */
	EAGER_TOUCH,	/* each vCPU writes its slice in the guest before the workload */
	EAGER_STRATEGY_COUNT
};

struct eager_strategy_row {
	enum eager_strategy id;
	const char *name;
	const char *help[2]; /* --help lines (the second may be NULL) */
};
extern const struct eager_strategy_row eager_strategies[];
const char *eager_strategy_name(enum eager_strategy s);

/* The orders eager populates in (--eager-order); a value naming none of them is a FILE. */
enum eager_order {
	EAGER_ORDER_FRONT,    /* each thread's slice, first chunk to last */
	EAGER_ORDER_BACK,     /* each thread's slice, last chunk to first */
	EAGER_ORDER_FRONTIER, /* background: ahead of the guest's frontier in the slice */
	EAGER_ORDER_FILE, /* a --record-touch file's pages first, in order, then the rest */
	EAGER_ORDER_COUNT
};
struct eager_order_row {
	enum eager_order id;
	const char *name;    /* what --eager-order takes ("file": any other value) */
	const char *help[2]; /* --help lines (the second may be NULL) */
};
extern const struct eager_order_row eager_orders[];
const char *eager_order_name(enum eager_order o);
/* The order --eager-order ARG asks for: NULL is front, a row's name that row, else a FILE. */
enum eager_order eager_order_of(const char *arg);

/* ---- numa.c: the policies --numa-policy takes (--help lists the rows) ---- */
enum numa_policy { NUMA_BIND, NUMA_PREFERRED, NUMA_FIRST_TOUCH, NUMA_POLICY_COUNT };
struct numa_policy_row {
	enum numa_policy id;
	const char *name;
	const char *help[2]; /* --help lines (the second may be NULL) */
};
extern const struct numa_policy_row numa_policies[];
const char *numa_policy_name(unsigned p);

/* ---- what one VM is asked to be: the options that shape the machine ------ */
struct vm_config {
	uint64_t mem_bytes;
	unsigned vcpus;
	const struct mm_backend *backing;
	int backing_set;       /* --backing given (else a file's file system decides) */
	const char *mem_path;  /* --mem-path: guest RAM in this file (or directory) */
	const char *reservoir; /* --reservoir: leased from the pool at this directory */
	int mem_grow;	       /* --mem-grow */
	int mem_any_fs;	       /* --mem-any-fs */
	const char *roofline_path; /* --roofline: ceilings for the eager report */
	unsigned paging;	   /* enum paging_kind: --paging (PAGING_KERNEL) */
	unsigned uffd_threads;	   /* --uffd-threads (0 until options_parse sets it) */
	unsigned uffd_delay_us;	   /* --uffd-delay-us */
	const char *record_touch_path; /* --record-touch FILE */
	int uffd_external_fd; /* > 0: a restore's faults go to --clones' shared handler there */
	int numa;	      /* --numa: guest RAM in one range per host node */
	int numa_auto;	      /* --numa or --numa=auto: the host's nodes */
	cpu_set_t numa_nodes;	   /* --numa=LIST: these host nodes, in id order */
	const char *numa_arg;	   /* as given: "auto", "0,1" */
	unsigned numa_policy;	   /* enum numa_policy: --numa-policy (NUMA_BIND) */
	enum eager_strategy eager; /* EAGER_NONE unless --eager */
	unsigned
		eager_threads; /* 0: the vCPU threads do it (background: the idle CPUs') */
	int eager_background; /* --eager=background[:HOW]: populate while the guest runs */
	const char *
		eager_order; /* --eager-order: front (NULL), back, frontier, or a --record-touch FILE */
	double timeout_s; /* 0: none */
	int strict_io;	  /* --strict-io: unclaimed port or MMIO access ends the run */
	int raw;	  /* --raw: a flat binary without the minivmm header */
	const char *guest_path;
	/* --kernel: a Linux guest (a PC: vm_set_pc), with --initrd and --cmdline. */
	const char *kernel_path, *initrd_path, *cmdline;
	int kernel_anyway; /* --kernel-anyway: boot it on PVM too */
	int guest_argc;
	char **guest_argv;
};

/* ---- check.c: can a vm_config run on this machine, without making a VM ----- */
/*
 * What setup would refuse for want of this machine's support, found before
 * any run (--compare checks every mode's config first): KVM_PRE_FAULT_MEMORY
 * for --eager=prefault, a userfaultfd for --paging uffd (and the backing's
 * mode of it), host memory for an up-front --eager, a background eager in
 * this build, a --eager-order FILE that fits the RAM. Opens /dev/kvm and a
 * userfaultfd, and closes them; creates no VM. 0, or -errno with err set:
 * -EINVAL when the config is a usage error (a bad order file), any other
 * when this machine cannot run it (-EOPNOTSUPP, -EPERM, -ENOMEM, ...).
 */
int vm_config_check(const struct vm_config *cfg, char *err, size_t errlen);

#define MVM_MIN_MEM_BYTES   (8ULL << 20)
#define MVM_IMAGE_MAX_BYTES (64ULL << 20)

/* ---- kvm.c: what /dev/kvm is ---------------------------------------------- */
struct platform {
	char kvm[8];	  /* "pvm", "vmx", "svm" or "unknown" */
	int tdp;	  /* two-dimensional paging (EPT/NPT) in use */
	int pre_fault;	  /* KVM_CAP_PRE_FAULT_MEMORY */
	int stats_fd;	  /* KVM_CAP_BINARY_STATS_FD */
	int max_vcpus;	  /* KVM_CAP_MAX_VCPUS */
	uint32_t tsc_khz; /* KVM_GET_TSC_KHZ */
	int emulated; /* the host itself is emulated (QEMU TCG, scripts/emu-host): times are emulation */
};

/* ---- vm.c, vcpu.c, loop.c, exits.c, end.c, wait.c: the VM ---------------- */
struct vm; /* opaque: machine/internal.h */

/*
 * What the owner of a VM does on each vCPU thread around its run loop
 * (eager population, the timeline's anchor, the sandbox, console flush).
 */
struct vm_hooks {
	void *cookie;
	void (*vcpu_enter)(void *cookie, unsigned vcpu,
			   int vcpu_fd);		 /* before the first KVM_RUN */
	void (*vcpu_leave)(void *cookie, unsigned vcpu); /* after the last */
	void (*vcpu_ran)(void *cookie, unsigned vcpu);	 /* its first KVM_RUN returned */
	/* A PC guest shut down (triple fault): the owner ends the run (NULL: a crash). */
	void (*shutdown)(void *cookie, unsigned vcpu, const char *regs);
};

/*
 * A guest that is a PC (a Linux kernel), set before the vCPUs are made:
 * KVM's in-kernel interrupt controllers (PIC, IOAPIC, local APICs) and PIT,
 * the CPUID hypervisor bit (the KVM leaves: kvmclock), vCPU 0 entered in
 * long mode here with this GDT and RSI, the others waiting for the INIT
 * and SIPI that Linux sends them. The page tables are the entry tables at
 * MVM_ENTRY_PT_GPA.
 */
struct vm_pc_entry {
	uint64_t rip, rsi;
	uint64_t gdt_base;
	uint16_t gdt_limit;
};
void vm_set_pc(struct vm *vm, const struct vm_pc_entry *e);
int vm_is_pc(const struct vm *vm);
/* Raise (1) or lower (0) ISA interrupt line irq of a PC guest. 0 or -errno. */
int vm_irq_line(struct vm *vm, unsigned irq, int level);

/*
 * A VM with no KVM behind it yet: fds closed, buses and lock ready, the
 * caller's thread its main thread. NULL when out of memory; vm_free() it.
 */
struct vm *vm_new(int strict_io, int raw, const struct vm_hooks *hooks);
/*
 * Open /dev/kvm (and check its API) / create the VM. 0 or -errno with err set
 * (KVM_ERR_BYTES holds any of kvm_open's: why there is no /dev/kvm is long).
 */
#define KVM_ERR_BYTES 1024
int kvm_open(struct vm *vm, char *err, size_t errlen);
/* kvm_open's (or vm_config_check's) e: this machine has no KVM device to open, permissions aside. */
static inline int kvm_missing(int e)
{
	return e == -ENOENT || e == -ENXIO || e == -ENODEV;
}
int kvm_create_vm(struct vm *vm, char *err, size_t errlen);
void platform_detect(struct vm *vm);
/*
 * Map guest RAM as cfg asks (fresh memory, a --mem-path file, a reservoir
 * lease; a file's file system decides the backing unless --backing was
 * given) and register it as memslot 0. 0, or -errno with err set: -EINVAL
 * when the options do not fit the file.
 */
int vm_map_ram(struct vm *vm, const struct vm_config *cfg, char *err, size_t errlen);
/* The image's header: its entry point and limits, set before the vCPUs are made. */
void vm_set_image(struct vm *vm, const struct mvm_image_header *hdr);
uint32_t
vm_image_abi(const struct vm *vm); /* the image's ABI version; 0 before vm_set_image */
/* Create nvcpus vCPUs in their entry state. 0 or -errno with err set. */
int vm_create_vcpus(struct vm *vm, unsigned nvcpus, char *err, size_t errlen);

/* fds.c: a KVM that allows more vCPUs than RLIMIT_NOFILE allows fds. */
/*
 * A vCPU holds two fds (KVM_CREATE_VCPU's and its KVM_GET_STATS_FD; one
 * without KVM_CAP_BINARY_STATS_FD), a spare vCPU of background prefault
 * one. VM_FDS_RESERVE covers what the run opens after its vCPUs: the VM's
 * stats fd, guest RAM's (a memfd, a file, a reservoir's pool, state and
 * pipe), a userfaultfd with its eventfd and memory file, a snapshot's or a
 * restore's files.
 */
#define VM_FDS_PER_VCPU	 2
#define VM_FDS_PER_SPARE 1
#define VM_FDS_RESERVE	 32
/* Pure: the RLIMIT_NOFILE soft limit a run needs, with open_now fds open already. */
uint64_t vm_fds_needed(unsigned vcpus, unsigned spares, int stats_fd, uint64_t open_now);
/*
 * Pure: whether a soft limit of soft (hard limit hard) holds the run's fds.
 * 0: as it is; 1: once soft is raised to hard; -EMFILE: not even then, err
 * saying how many to ask for (ulimit -n N).
 */
int vm_fds_fit(unsigned vcpus, unsigned spares, int stats_fd, uint64_t open_now,
	       uint64_t soft, uint64_t hard, char *err, size_t errlen);
/*
 * After platform_detect, before vm_create_vcpus: RLIMIT_NOFILE checked
 * against the fds open now and those cfg's vCPUs (and eager's spares at
 * most) will hold; the soft limit raised to the hard one when only that holds
 * them. 0; -EMFILE with err set when even the hard limit is short (a
 * usage error: the user raises it); another -errno with err set when
 * getrlimit or setrlimit fail.
 */
int vm_fds_reserve(const struct vm *vm, const struct vm_config *cfg, char *err,
		   size_t errlen);
/* Close every KVM fd and unmap guest RAM; what the run measured stays readable. */
void vm_teardown(struct vm *vm);
void vm_free(struct vm *vm);

/* What the rooms above read of a VM. */
const struct platform *vm_platform(const struct vm *vm);
struct guest_ram *vm_ram(struct vm *vm);
const struct guest_ram *vm_ram_const(const struct vm *vm);  /* for readers */
struct io_bus *vm_pio(struct vm *vm);			    /* to register devices on */
const struct io_bus *vm_bus(const struct vm *vm, int mmio); /* port I/O (0) or MMIO (1) */
int vm_fd(const struct vm *vm);
unsigned vm_nvcpus(const struct vm *vm);
int vm_vcpu_fd(const struct vm *vm, unsigned i);
/* A timed-out run: vCPU i's registers when it stopped, or NULL. */
const char *vm_vcpu_stopped_at(const struct vm *vm, unsigned i);
/* vCPU i's run loop on its thread (CLOCK_MONOTONIC s): 0 when it never ran. */
int vm_vcpu_span(const struct vm *vm, unsigned i, double *t_run, double *t_done);

/* end.c: the end of a run, shared by every thread. */
/* The longest end message kept (longer ones end cut short): a KVM_ERR_BYTES error and a command line. */
#define VM_MESSAGE_BYTES 2048
/* End the run (the first call wins): wake the main thread, kick every vCPU out of KVM_RUN. */
void vm_finish(struct vm *vm, enum run_end end, int status, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* Before any thread runs: the run ends here (setup failed), with this message. */
void vm_set_end(struct vm *vm, enum run_end end, const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));
int vm_stopping(struct vm *vm);
enum run_end vm_end(const struct vm *vm);
int vm_exit_status(const struct vm *vm);
int vm_guest_status(const struct vm *vm); /* when vm_end() is END_GUEST_EXIT or _USAGE */
const char *vm_end_reason(const struct vm *vm); /* "not-started" before setup ran */
const char *vm_end_message(const struct vm *vm);
#define VM_REPORT_BYTES 240
/* What the guest said went wrong first (a Linux oops' first line): "" when nothing. */
void vm_set_report(struct vm *vm, const char *report);
const char *vm_report(const struct vm *vm);
void vm_wake_main(struct vm *vm); /* from any thread */

/* wait.c: the main thread's one wait. */
/*
 * Main thread: sleep until done(done_cookie), calling tick(tick_cookie)
 * every tick_s (if tick is set; without one, done is looked at every
 * second and at every wake-up). SIGINT/SIGTERM end the run as interrupted
 * (a second SIGINT exits at once); deadline (CLOCK_MONOTONIC seconds, 0:
 * none) ends it as timed out. Either way the wait goes on until done.
 */
void vm_wait_main(struct vm *vm, int (*done)(void *), void *done_cookie,
		  void (*tick)(void *), void *tick_cookie, double tick_s, double deadline,
		  double timeout_s);
/*
 * fn runs (async-signal-safe, on the main thread) just before the second
 * SIGINT's immediate exit: the application removes its temporaries. Two at
 * most (the results', the snapshot's); the same fn twice is one.
 */
void vm_set_exit_hook(void (*fn)(void));
/*
 * Main thread, signals blocked (a long save): a SIGINT or SIGTERM pending is
 * taken as vm_wait_main takes it (the run ends as interrupted, a second one
 * exits at once). The signal, or 0.
 */
int vm_interrupt_pending(struct vm *vm);
/* Block the signals vm_wait_main takes; install the kick handler. old: to restore. */
void vm_signals_block(struct vm *vm, sigset_t *old);

/* Before vm_create_vcpus: the MVM_ENTRY_* flags every vCPU's RCX holds at entry. */
void vm_set_entry_flags(struct vm *vm, uint64_t flags);

/* ---- pause.c: every vCPU stopped at a consistent point (a snapshot) ---- */
/*
 * --snapshot, setup (vCPUs created, no thread yet): what each vCPU thread
 * needs to read its own state at its pause point (the MSR list, KVM's
 * capabilities, room). 0, or -errno with err.
 */
int vm_snapshot_prepare(struct vm *vm, char *err, size_t errlen);
/* From a vCPU thread (the snapshot hypercall): end the run as a pause. 0, or -EBUSY (it is ending already). */
int vm_pause(struct vm *vm, unsigned vcpu);
int vm_paused(const struct vm *vm); /* the run ended as vm_pause's */
/* The vCPU threads are to park at their pause points (vm_pause, until released or abandoned). */
int vm_pause_holding(struct vm *vm);
/* A device operation in progress must stop: the run is ending, and not as a pause. */
int vm_device_stop(struct vm *vm);
/* Every vCPU parked or ended: each completed its exit and read its state. 0 or -errno with err. */
int vm_pause_settle(struct vm *vm, char *err, size_t errlen);
/* vCPU i's state as its thread read it (after vm_pause_settle), or NULL. */
const struct vcpu_state *vm_vcpu_saved(const struct vm *vm, unsigned i);
/* After the save: the parked vCPU threads run on (--snapshot-continue) or end (vm_run_to_end joins). */
void vm_pause_release(struct vm *vm, int run_on);
/*
 * A pause that cannot complete (a signal, a failed save): the run ends as end
 * with the message, device operations stop, parked threads end. 1, or 0 when
 * there was no pause to abandon.
 */
int vm_pause_abandon(struct vm *vm, enum run_end end, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* ---- vcpu_state.c: a vCPU's whole state, as KVM gives and takes it ---- */
#define VCPU_MSRS_MAX	 256
#define VCPU_HAVE_XSAVE	 (1u << 0)
#define VCPU_HAVE_XCRS	 (1u << 1)
#define VCPU_HAVE_EVENTS (1u << 2)
#define VCPU_HAVE_LAPIC	 (1u << 3) /* an in-kernel irqchip only */
#define VCPU_HAVE_MP_STATE \
	(1u << 4) /* an in-kernel irqchip only: runnable, halted, waiting for SIPI */
/* Fixed layout (the snapshot stores it whole; the format's version covers it). */
struct vcpu_state {
	uint32_t index;
	uint32_t have; /* VCPU_HAVE_* */
	uint32_t nmsrs;
	uint32_t mp_state; /* KVM_MP_STATE_*, with VCPU_HAVE_MP_STATE (was padding: 0) */
	struct kvm_regs regs;
	struct kvm_sregs sregs;
	struct kvm_fpu fpu;
	uint32_t xsave[1024]; /* struct kvm_xsave's region: KVM_GET_XSAVE's 4 KiB */
	struct kvm_xcrs xcrs;
	struct kvm_vcpu_events events;
	struct kvm_lapic_state lapic;
	struct kvm_msr_entry
		msrs[VCPU_MSRS_MAX]; /* those KVM_GET_MSR_INDEX_LIST lists that read */
};
/*
 * Set vCPU i to s (before it ever runs). MSRs KVM refuses are skipped, their
 * indexes in skipped[0 .. *nskipped) (room for VCPU_MSRS_MAX). 0, or -errno with err.
 */
int vm_vcpu_state_set(struct vm *vm, unsigned i, const struct vcpu_state *s,
		      uint32_t *skipped, uint32_t *nskipped, char *err, size_t errlen);

/* ---- pc_state.c: a PC guest's in-kernel platform (vm_set_pc) ---- */
#define VM_PC_CHIPS \
	3 /* KVM_IRQCHIP_PIC_MASTER, KVM_IRQCHIP_PIC_SLAVE, KVM_IRQCHIP_IOAPIC */
/* Fixed layout (the snapshot stores it whole). */
struct vm_pc_state {
	struct kvm_irqchip chip[VM_PC_CHIPS]; /* indexed by chip_id */
	struct kvm_pit_state2 pit;
	struct kvm_clock_data clock; /* kvmclock, KVM_GET_CLOCK's */
};
/* The PICs, the IOAPIC, the PIT and kvmclock of a paused PC guest. 0, or -errno with err. */
int vm_pc_state_get(struct vm *vm, struct vm_pc_state *s, char *err, size_t errlen);
/* The platform as vCPU 0's thread read it at the last pause; NULL if it did not. */
const struct vm_pc_state *vm_pc_saved(const struct vm *vm);
/*
 * Set them on a PC guest whose vCPUs hold their saved state (their TSCs
 * included) and have not run: kvmclock continues from its saved value.
 * 0, or -errno with err.
 */
int vm_pc_state_set(struct vm *vm, const struct vm_pc_state *s, char *err, size_t errlen);

/* loop.c: the vCPU threads. */
/* Start one thread per vCPU (each runs hooks.vcpu_enter, KVM_RUN, hooks.vcpu_leave). */
void vm_start_vcpus(struct vm *vm);
/*
 * Wait for the guest's end (or deadline), calling tick(cookie) every tick_s
 * if set, then stop and join every vCPU thread.
 */
void vm_run_to_end(struct vm *vm, double deadline, double timeout_s, void (*tick)(void *),
		   void *cookie, double tick_s);

/* exits.c: the exit names (the dispatch itself is internal). */
const char *exit_reason_name(uint32_t reason);

/* A --raw image (vmm/boot/image.c): its vCPUs and their stacks. */
#define MVM_RAW_MAX_VCPUS 8
#define MVM_RAW_STACK_TOP MVM_BOOTINFO_GPA /* vCPU i: RSP = top - i * 4 KiB */

/* ---- eager.c: --eager, before the guest runs or (background) beside it ---- */
struct eager;
/*
 * Resolve the strategy for this platform, read an --eager-order FILE, plan
 * the threads' work and (background prefault) create their spare vCPUs. 0
 * with *out (NULL when lazy), or -errno with err set: -EINVAL for what the
 * options ask wrongly (a bad order file, too many vCPUs), others for the host
 * (a missing capability, RAM the host cannot back).
 */
int eager_plan(const struct vm_config *cfg, struct vm *vm, struct eager **out, char *err,
	       size_t errlen);
enum eager_strategy eager_strategy(const struct eager *e); /* EAGER_NONE for NULL */
enum eager_strategy eager_requested(const struct eager *e);
int eager_host_side(const struct eager *e); /* populate or prefault work to do */
int eager_on_vcpu_threads(const struct eager *e);
int eager_in_background(const struct eager *e); /* --eager=background: beside the guest */
/* Before any thread populates (not in the background): what is resident already. */
void eager_begin(struct eager *e, struct vm *vm);
/* Every populating thread exists: they start together, and the clock with them. */
void eager_release(struct eager *e);
/*
 * Main thread: run dedicated threads (--eager-threads) and wait for them,
 * calling tick(cookie) every tick_s while they work (NULL: none).
 */
void eager_run_dedicated(struct eager *e, struct vm *vm, void (*tick)(void *),
			 void *cookie, double tick_s);
/* vCPU thread: populate this vCPU's slice, then wait until the main thread says go. */
void eager_vcpu_gate(struct eager *e, struct vm *vm, unsigned vcpu);
/* Main thread: wait for the vCPU threads' slices (tick as above), check them. */
void eager_wait(struct eager *e, struct vm *vm, void (*tick)(void *), void *cookie,
		double tick_s);
void eager_go(struct eager *e); /* let the vCPU threads into the guest */
/*
 * Background, main thread, with the guest placed in RAM and before the
 * vCPUs and its own sandbox: create the eager threads. Each enters its own
 * sandbox (with sandbox set) and waits for eager_release(). A failure ends
 * the run (vm_finish).
 */
void eager_background_start(struct eager *e, struct vm *vm, int sandbox);
/*
 * Background, main thread, once the run has ended (vm_run_to_end): the
 * threads stop at their next range (a chunk at most); join them.
 */
void eager_background_join(struct eager *e);
double eager_seconds(const struct eager *e); /* host side; 0 before it ran */
#define EAGER_THREADS_MAX 1024		     /* --eager-threads' bound */
/*
 * Background eager's threads without --eager-threads: one per CPU this
 * process may run on that the vcpus leave idle, at least one, at most one
 * per chunk of guest RAM (chunks) and EAGER_THREADS_MAX.
 */
unsigned eager_background_default_threads(unsigned vcpus, uint64_t chunks);
/* After platform_detect: the spare vCPUs eager_plan may make (background prefault), at most. */
unsigned eager_spare_vcpus_at_most(const struct vm_config *cfg, const struct vm *vm);
double eager_end_time(const struct eager *e);
/* Host bytes populated so far, of all it will do: for a progress display. */
void eager_progress(const struct eager *e, uint64_t *done, uint64_t *total);

/* One point of an eager thread's populate frontier: after `bytes` of its work, at t. */
struct eager_point {
	double t;	/* CLOCK_MONOTONIC s */
	uint64_t bytes; /* populated by the thread so far */
	uint64_t gpa;	/* where its last range began (0 for the first point) */
};
#define EAGER_POINTS_MAX 256 /* per thread: the stride doubles to stay within it */

/* What eager did, for the report: the whole, and each thread. */
struct eager_facts {
	enum eager_strategy requested, strategy;
	int pre_fault_here; /* KVM_PRE_FAULT_MEMORY on this KVM */
	int background;	    /* beside the guest (--eager=background) */
	enum eager_order order;
	const char *order_file;	       /* EAGER_ORDER_FILE: its path */
	uint64_t order_file_pages;     /* ... the pages it names, */
	uint64_t order_file_bytes;     /* ... and their bytes, in the backing's pages */
	uint64_t order_file_ram_bytes; /* ... the guest RAM it was recorded with */
	uint64_t from_file_bytes; /* populated from the file's list, before the rest */
	unsigned nthreads;
	int threads_default; /* no --eager-threads (background: the idle CPUs') */
	int on_vcpu_threads;
	unsigned
		spare_vcpus; /* background prefault: vCPUs vm_nvcpus() .. + n - 1, never run */
	uint64_t total_bytes;
	uint64_t done_bytes; /* populated by the threads */
	uint64_t
		chunk_bytes; /* the unit of work: 2 MiB, or the backing's page if larger */
	double t_start, t_end,
		seconds; /* CLOCK_MONOTONIC s; t_end: the last thread's end */
	int finished; /* every thread did all its work (not stopped by the run's end) */
	int64_t resident_before,
		resident_after; /* mincore; -1 unknown (background: not taken) */
	int64_t populated;	/* after - before, or -1 */
	int fell_back;		/* some thread wrote pages: no MADV_POPULATE_WRITE */
	const char *backing;	/* the backing it populated */
	const struct mm_ceiling
		*ceiling; /* --roofline: the ceiling it is held to, or NULL */
	/* When each chunk of guest RAM was populated whole (CLOCK_MONOTONIC ns; 0: not). */
	const uint64_t *chunk_ns;
	uint64_t nchunks;
};
struct eager_thread_facts {
	unsigned
		vcpu; /* whose fd KVM_PRE_FAULT_MEMORY went through (in the background a spare's) */
	uint64_t gpa, bytes; /* its slice (the file order shares all of RAM: 0, 0) */
	uint64_t done; /* populated: all of bytes unless the run was stopped first */
	double t0, t1;
	int fell_back;
	int stopped; /* the run ended before its work did */
	struct prefault_stats pf;
	const struct eager_point *points; /* its frontier, in order: bytes never down */
	unsigned npoints;
	/* --numa: the guest node it runs on, how many ranges it covers, where it ran. */
	int node;		  /* -1 without --numa */
	int host_node;		  /* the host node it is pinned to */
	unsigned nodes;		  /* 1 unless there are fewer threads than nodes */
	int cpu;		  /* host CPU when it finished; -1 unknown */
	const cpu_set_t *allowed; /* its affinity as it started (NULL: not read) */
};
/* 0 and *f when e did host-side work (populate, prefault), else -ENOENT. */
int eager_facts(const struct eager *e, struct eager_facts *f);
int eager_thread(const struct eager *e, unsigned i, struct eager_thread_facts *t);
void eager_free(struct eager *e);

/* ---- numa.c: --numa, guest RAM in per-node ranges, what ran where -------- */
struct numa;					 /* opaque: numa.c */
const struct numa *vm_numa(const struct vm *vm); /* NULL without --numa */

/* When the placement was audited: after a host-side eager, else before teardown. */
enum numa_audit_when { NUMA_AUDIT_NONE, NUMA_AUDIT_AFTER_EAGER, NUMA_AUDIT_AT_EXIT };

struct numa_facts {
	const char *requested; /* --numa's argument: "auto", "0,1" */
	enum numa_policy policy;
	unsigned nodes;	     /* the VM's (guest node k is the k-th) */
	unsigned host_nodes; /* online on the host (1 without NUMA in the kernel) */
	unsigned left_out;   /* auto: usable host nodes beyond one per vCPU */
	int kernel_numa;     /* the host kernel has NUMA (sysfs nodes, mbind) */
	int balancing;	     /* /proc/sys/kernel/numa_balancing; -1 unknown */
	int bound;	     /* every range was mbind'ed before anything touched it */
	enum numa_audit_when audited;
	int audit_err; /* -errno of move_pages (-ENOSYS: no NUMA), 0 */
	uint64_t
		page_bytes; /* the backing's: an audit stride of it asks about every page */
};
struct numa_node_facts {
	int host;			   /* host node id */
	uint64_t gpa, bytes;		   /* its range of guest RAM */
	const cpu_set_t *cpus;		   /* where its vCPUs and eager workers run */
	unsigned vcpu0, nvcpus;		   /* its vCPUs: [vcpu0, vcpu0 + nvcpus) */
	uint64_t mem_free;		   /* MemFree when planned */
	uint64_t stride;		   /* audit: one page in every stride bytes */
	const struct mm_numa_count *count; /* audit: where the sampled pages were */
};
struct numa_vcpu_facts {
	unsigned node;		  /* guest node */
	int cpu_start, cpu_end;	  /* host CPU at its thread's start and end; -1 unknown */
	const cpu_set_t *allowed; /* its thread's affinity as it started */
	int started;
};
int numa_facts(const struct numa *n, struct numa_facts *f); /* -ENOENT: no --numa */
int numa_node_facts(const struct numa *n, unsigned k, struct numa_node_facts *f);
int numa_vcpu_facts(const struct numa *n, unsigned i, struct numa_vcpu_facts *f);

/* ---- paging.c: --paging kernel|uffd: who backs a page on first touch ------ */
enum paging_kind { PAGING_KERNEL, PAGING_UFFD, PAGING_KIND_COUNT };
struct paging_kind_row {
	enum paging_kind id;
	const char *name;
	const char *help[2]; /* --help lines (the second may be NULL) */
};
extern const struct paging_kind_row paging_kinds[];
const char *paging_kind_name(unsigned k);
/* Guest RAM is shared out to the handlers in slices: their size, their number. */
uint64_t paging_slice_bytes(const struct vm_config *cfg);
uint64_t paging_slices(const struct vm_config *cfg);
/* One handler per vCPU, as far as guest RAM has slices for them. */
unsigned paging_default_threads(const struct vm_config *cfg);

struct paging;
/*
 * --paging uffd, before KVM is opened: the userfaultfds (one per handler),
 * the backing's mode, --record-touch's file. *out NULL for --paging kernel.
 * 0, or -errno with err set: -EINVAL for a usage error (the record file),
 * any other for the host (exit 3).
 */
int paging_plan(const struct vm_config *cfg, struct paging **out, char *err,
		size_t errlen);
/*
 * The handlers' histogram at a timeline mark (phase i ends at t): the
 * timeline's sampler, called under its lock on any thread; no locks, no
 * system calls. cookie: the struct paging.
 */
void paging_sample(void *cookie, unsigned phase, double t);
/* After the loader placed the guest (its pages never fault), before any vCPU runs. 0 or -errno with err. */
/*
 * A restore's pager (--restore-mode uffd, background, replay, minor): as
 * paging_plan for cfg with --paging uffd, MINOR when minor, recording to
 * record_path (NULL: none), each fault's page from the memory file fd
 * (uffd_set_file). Called before the vCPUs run; paging_start as usual.
 */
int paging_plan_restore(const struct vm_config *cfg, int minor, const char *record_path,
			int fd, struct paging **out, char *err, size_t errlen);
/* After paging_start: filler threads (uffd_fill_start); wait_first: until the first ranges are in. */
int paging_fill(struct paging *pg, const struct uffd_fill_plan *plan, int wait_first,
		char *err, size_t errlen);
int paging_start(struct paging *pg, struct vm *vm, int sandbox, char *err, size_t errlen);
/* After the vCPUs are joined: stop the handlers, sum them up, write --record-touch. */
void paging_stop(struct paging *pg, double t_exec, double guest_entry);
int paging_record_error(const struct paging *pg); /* -errno of writing the record, or 0 */
/* The fds the main thread writes after its sandbox is on (stop eventfd, record). Count. */
int paging_main_fds(const struct paging *pg, int *fds, int max);
/* The directory the record is renamed into at the end (the sandbox allows it), or -1. */
int paging_main_dirfd(const struct paging *pg);
/* What the handlers did, for the report. */
struct paging_facts {
	const struct vm_config *cfg; /* the pager's (a restore's has its own) */
	const struct uffd_pager *uffd;
	const struct uffd_stats *total; /* NULL when the handlers never ran */
	int started;
	size_t recorded; /* pages written to --record-touch */
	int record_err;
	const struct lat_hist *snap; /* the histogram at the end of timeline phase i */
	const uint8_t *snapped;	     /* ... which was taken */
	unsigned nsnap;
};
int paging_facts(const struct paging *pg, struct paging_facts *f); /* -ENOENT: kernel */
void paging_free(struct paging *pg);

/* ---- sandbox.c: seccomp allowlists (libseccomp), one per thread role ------ */
struct sock_filter;
enum sandbox_role {
	SANDBOX_MAIN,
	SANDBOX_VCPU,
	SANDBOX_UFFD,
	SANDBOX_EAGER,
	SANDBOX_FILL,
	SANDBOX_SAVER,
	SANDBOX_ROLES
};
struct sandbox_fds {
	int vcpu_fd;	      /* SANDBOX_VCPU: the one vCPU this thread runs */
	int uffd_fd, stop_fd; /* SANDBOX_UFFD: its userfaultfd, the stop eventfd */
	int prefault_fd; /* SANDBOX_EAGER: the spare vCPU it prefaults through, or -1 */
	int irq_vm_fd; /* SANDBOX_VCPU of a PC guest: the VM fd (KVM_IRQ_LINE only), or -1 */
	const int *stats_fds; /* KVM stats fds the timeline samples */
	unsigned nstats;
	const int *out_fds; /* SANDBOX_MAIN: results and trace files, opened already */
	int nout;
	const int *dir_fds; /* SANDBOX_MAIN: their directories (the final rename) */
	int ndirs;
	/* SANDBOX_SAVER: the snapshot's state and memory files, its temporary and parent directories */
	int snap_state_fd, snap_mem_fd, snap_tmp_fd, snap_parent_fd;
	int snap_pagemap_fd, snap_ram_fd; /* what the save reads: -1 when none */
	int file_fd;			  /* SANDBOX_FILL: the memory file it reads */
	const int *fill_uffds; /* SANDBOX_FILL: the handlers' uffds it copies through */
	unsigned nfill_uffds;
};
/* A role's filter built by libseccomp at run time (tests; libseccomp context). 0 or -errno. */
int sandbox_build(enum sandbox_role role, const struct sandbox_fds *f, void **ctx);
/*
 * Load a role's filter on this thread: the program built at compile time with
 * f's values patched in (sandbox_load.c: no libseccomp, no allocation), or, for
 * more fds than it has slots for, one built now. 0 or -errno.
 */
int sandbox_enter(enum sandbox_role role, const struct sandbox_fds *f);
/* The program sandbox_enter would load from the compile-time build: its length, or -errno. */
int sandbox_program(enum sandbox_role role, const struct sandbox_fds *f,
		    struct sock_filter *prog, unsigned cap);
/* The role's short name ("main", "vcpu", "uffd", "eager", "fill", "saver"), or NULL. */
const char *sandbox_role_name(enum sandbox_role role);

#endif /* MINIVMM_MACHINE_H */
