/* The Linux guest's user-space client of minivmm's ABI: marks, records, console, exit. */
#ifndef MVM_H
#define MVM_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

#include "minivmm_abi.h"

/* The boot-timer device (linux-vmm adds these to minivmm_abi.h; the same values). */
#ifndef MVM_BOOT_TIMER_PORT
#define MVM_BOOT_TIMER_PORT 0x0514
#endif
#ifndef MVM_BOOT_TIMER_MAGIC
#define MVM_BOOT_TIMER_MAGIC 123
#endif

/*
 * /init sets this in the workloads' environment: a program that finds it
 * reports through minivmm's ports, one that does not is an ordinary Linux
 * program (bench/sweep-host on the host). Port I/O on a host's real ports
 * is never tried on a guess.
 */
#define MVM_ENV_GUEST "MINIVMM_GUEST"

/*
 * One page of locked memory holds a hypercall's argument struct (at its
 * start) and what the struct points to (after MVM_HC_ARGS_MAX bytes), so
 * that everything the VMM reads lies in one guest page: user-space pages
 * that are neighbours virtually are rarely neighbours physically.
 */
#define MVM_LX_PAGE_BYTES 4096u
#define MVM_LX_DATA_BYTES (MVM_LX_PAGE_BYTES - MVM_HC_ARGS_MAX)

/*
 * A guest-physical address from /proc/self/pagemap (PFN * 4 KiB plus the
 * offset), for a page that is present: 0 and *gpa set, or -errno (-ENOENT
 * when the page is not present or the PFN reads 0, as it does without
 * CAP_SYS_ADMIN). The caller keeps the page resident (mlock).
 */
int mvm_pagemap_gpa(int pagemap_fd, const void *va, uint64_t *gpa);

/*
 * Under minivmm (MVM_ENV_GUEST set): ioperm for the hypercall, exit and
 * boot-timer ports, the locked hypercall page, /proc/self/pagemap open.
 * Returns 1 when reporting works, 0 when the program does not run under
 * minivmm, -errno (with a message on stderr) when it does but cannot
 * report. Every mvm_* call below does nothing unless this returned 1.
 */
int mvm_open(void);
int mvm_active(void);

/*
 * The boot-timer write: /init's first act (init_start on minivmm's
 * timeline). For /init alone, which runs only as a guest's PID 1.
 */
void mvm_boot_timer(void);

void mvm_mark(uint32_t mark); /* MVM_MARK_*, with this CPU's TSC now */

/*
 * A batch of `count` records of `kind`, each rec_bytes long, copied into the
 * hypercall page: at most mvm_records_max(rec_bytes) in one batch (one
 * measurement). 0, or -EINVAL for a batch that does not fit.
 */
int mvm_records(uint32_t kind, const void *recs, uint32_t count, size_t rec_bytes);
uint32_t mvm_records_max(size_t rec_bytes);

void mvm_console(const char *buf, size_t len); /* in pieces of the page's data area */

/*
 * A stdio stream whose writes go to minivmm's console by hypercall (one
 * exit per flush, not per byte as through the UART); NULL unless active.
 */
FILE *mvm_console_file(void);

/*
 * Ask minivmm to save the VM here (MVM_HC_SNAPSHOT): checksum is the
 * workload's own of its memory, pass the passes done. Returns MVM_SNAP_*:
 * RESTORED when this process runs on in a restored VM, TAKEN when the VM
 * was saved and runs on (--snapshot-continue), NONE without --snapshot or
 * minivmm, REFUSED for a second ask.
 */
uint32_t mvm_snapshot(uint64_t checksum, uint64_t pass);

/*
 * Ends the VM with `status` (minivmm's exit status follows it); falls back
 * to the exit port, then returns only when neither ended the run.
 */
void mvm_exit(int status);

/* The guest's TSC, as the minivmm guest reads it (records are in TSC cycles). */
static inline uint64_t mvm_rdtsc(void)
{
	uint32_t lo, hi;

	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return (uint64_t)hi << 32 | lo;
}

#endif /* MVM_H */
