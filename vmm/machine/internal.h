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

#endif /* MINIVMM_MACHINE_INTERNAL_H */
