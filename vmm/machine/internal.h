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
	struct vm_hooks hooks;

	/* How the run ends: written once under lock (vm_finish), read by all threads. */
	pthread_mutex_t lock;
	pthread_t main_thread;
	enum run_end end; /* read without the lock by vm_stopping() */
	int status;	  /* guest's exit status, when end == END_GUEST_EXIT or _USAGE */
	char message[768];
	unsigned running; /* vCPU threads still in their run loop */
};

/* kvm.c */
/* Why /dev/kvm could not be opened (errno e), and what to do about it (root, its group). */
void kvm_open_failed(int e, char *err, size_t errlen);
/* Which KVM this is (pvm, vmx, svm) and whether it pages with EPT/NPT, from the modules. */
void platform_kind(struct platform *p);

/* vcpu.c */
int vcpu_create(struct vm *vm, struct vcpu *v, unsigned index); /* 0 or -errno */
int vcpu_set_entry(struct vcpu *v, const struct kvm_cpuid2 *cpuid);
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
	uint64_t next_piece, next_rest;	 /* file: the shared cursors */
	residency_fn residency;		 /* frontier */
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

#endif /* MINIVMM_MACHINE_INTERNAL_H */
