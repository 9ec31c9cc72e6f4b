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
	struct io_bus pio, mmio; /* mmio has no devices: every access is unclaimed */
	int strict_io;
	int raw; /* a --raw image: each vCPU also gets a stack (MVM_RAW_STACK_TOP) */
	struct vm_hooks hooks;
	struct numa *numa; /* --numa: the plan (vm_map_ram), NULL without */

	/* How the run ends: written once under lock (vm_finish), read by all threads. */
	pthread_mutex_t lock;
	pthread_t main_thread;
	enum run_end end; /* read without the lock by vm_stopping() */
	int status;	  /* guest's exit status, when end == END_GUEST_EXIT or _USAGE */
	char message[768];
	unsigned running; /* vCPU threads still in their run loop */
	/* vm_start_vcpus: the CPUs vCPU 0's thread takes back once started (loop.c) */
	cpu_set_t cpus;
	int cpus_saved;
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

/*
 * sandbox.c, sandbox_load.c: the seccomp programs are built at compile time
 * (gen/sandbox_gen.c runs sandbox.c's rules through libseccomp) with a
 * placeholder in every comparison with a run-time value; sandbox_load.c
 * patches the values into a copy and loads it. Slots with no value (fewer
 * stats or output fds than slots) get SANDBOX_NO_FD.
 */
#define SANDBOX_MAX_STATS 32 /* KVM stats fds: the VM's and 31 vCPUs' */
#define SANDBOX_MAX_OUT	  4  /* the main thread's output fds (run.c: 2 + 2) */
enum sandbox_slot {
	SLOT_PID,  /* tgkill's target process */
	SLOT_VCPU, /* SANDBOX_VCPU: its vCPU fd */
	SLOT_UFFD, /* SANDBOX_UFFD: its userfaultfd */
	SLOT_STATS,
	SLOT_OUT = SLOT_STATS + SANDBOX_MAX_STATS,
	SLOT_COUNT = SLOT_OUT + SANDBOX_MAX_OUT
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

#endif /* MINIVMM_MACHINE_INTERNAL_H */
