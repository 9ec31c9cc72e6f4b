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

/* exits.c: KVM exit dispatch, a pure function of the exit (unit-tested with fabricated ones). */
enum vcpu_action { VCPU_CONTINUE, VCPU_STOP };
enum vcpu_action exit_dispatch(struct vm *vm, struct vcpu *v);

#endif /* MINIVMM_MACHINE_INTERNAL_H */
