/*
 * One run's own state, private to vmm/run/run*.c: run.c wires the run from setup
 * to teardown and calls the two files beside it, run_snapshot.c (--snapshot,
 * --restore) and run_linux.c (a Linux guest, a PC); they call nothing in run.c.
 */
#ifndef MINIVMM_RUN_INTERNAL_H
#define MINIVMM_RUN_INTERNAL_H

#include "run.h"

#include <stdarg.h>

struct run {
	const struct config *cfg;
	struct run_opts o;
	struct vm *vm;
	struct console *console;
	struct dev_host hc;    /* the hypercall port's view of this run */
	struct eager *eager;   /* NULL when lazy */
	struct paging *paging; /* NULL with --paging kernel */
	struct kvm_stats *stats;
	struct timeline *tl;
	struct records *rec;
	pthread_mutex_t
		print_lock; /* a batch's records are stored and printed together */
	pthread_mutex_t entry_lock; /* the first vCPU marks guest_entry under it */
	int entered;		    /* a vCPU marked guest_entry (atomic) */
	int guest_ran;		    /* a vCPU's first KVM_RUN returned (atomic) */
	int progress_bar; /* eager's bar on stderr (a terminal, a big population) */
	uint8_t *image;	  /* the guest image, read and checked before KVM is opened */
	uint64_t image_len;
	int replaying; /* --restore: the snapshot's records go in again (no counters) */
	/* --snapshot: the directory being written, the records so far, the guest's call. */
	struct snap_log *log;
	struct snap_dir dir;
	uint32_t snap_asks; /* atomic */
	int snap_claimed;   /* atomic: the first call took the snapshot */
	struct mvm_hc_snapshot snap_req;
	uint64_t snap_result_gpa;
	struct snapshot_facts snap;
	struct snap_linux lx_id; /* --snapshot of a Linux guest: what it booted */
	/* --restore */
	struct restore_ctx rc;
	struct restore_facts rf;
	char restore_err[1024]; /* the restore mode's message (rc.err) */
	struct gpa_range *extents;
	int restored;
	struct linux_boot *lx; /* --kernel: the Linux guest, read and checked likewise */
	struct pc_devices pc;  /* --kernel: its CMOS clock, i8042, boot timer */
	struct pc_counts pc_counts; /* ... what they counted, once the vCPUs stopped */
};

/* Setup failed: record why (the results file still says so) and stop. */
static inline int setup_fail(struct run *r, enum run_end end, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static inline int setup_fail(struct run *r, enum run_end end, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vm_set_end(r->vm, end, fmt, ap);
	va_end(ap);
	return -1;
}

/* ---- run_snapshot.c: --snapshot and --restore ----------------------------- */

/* The devices' host: the guest asks for a snapshot (vCPU thread). */
uint32_t run_on_snapshot(void *cookie, unsigned vcpu, const struct mvm_hc_snapshot *a,
			 uint64_t result_gpa, int *stop);
/* --restore: the VM is the snapshot's guest (no image is read). */
void run_restore_image(struct run *r);
/* --snapshot: the image can ask and the directory can be written. 0, or -1 (setup_fail). */
int run_begin_snapshot(struct run *r);
void run_forget_snapshot(
	struct run *r); /* run_free: no second SIGINT removes its directory */
/* --snapshot: save the paused run. 1 when its guest runs on (--snapshot-continue). */
int run_save_snapshot(struct run *r);
/* --restore's steps: the vCPUs' state, then RAM (0, or -1: the run ends), then the mode's hooks. */
int run_restore_vcpus(struct run *r);
int run_restore_memory(struct run *r);
void run_restore_resumed(struct run *r);
void run_restore_finish(struct run *r);

/* ---- run_linux.c: a Linux guest (--kernel), its PC devices ---------------- */

void run_on_init_start(void *cookie, unsigned vcpu);
void run_on_irq(void *cookie, unsigned line, int level);
void run_on_reset(void *cookie, unsigned vcpu, const char *why);
/* The guest reset the machine or triple-faulted (crashed): how its run ends. */
void run_guest_reset(struct run *r, unsigned vcpu, const char *why, int crashed);
/* --kernel: the kernel and initrd read and checked, the VM made a PC. 0, or -1. */
int run_read_linux(struct run *r);
/* --snapshot: what the Linux guest booted (sizes, digests, paths). 0, or -1 (setup_fail). */
int run_linux_identity(struct run *r, struct snap_linux *id);
/* --restore: the kernel, initrd and command line are the snapshot's. 0, or -1 (setup_fail). */
int run_linux_check_restore(struct run *r);
/* --kernel on PVM without --kernel-anyway: refused (1, setup_fail). */
int run_linux_refused(struct run *r, const struct platform *plat);

#endif
