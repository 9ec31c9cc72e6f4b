/* --paging: who resolves guest RAM's first touches, the kernel or minivmm's userfaultfd handlers (the mechanism). */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SLICE_BYTES	  (2ULL << 20)
#define PAGING_MAX_PHASES 32 /* the timeline's limit */

/* In enum order; --help and the option's errors list them. */
const struct paging_kind_row paging_kinds[] = {
	{ PAGING_KERNEL, "kernel", { "the kernel backs it (the default)", NULL } },
	{ PAGING_UFFD,
	  "uffd",
	  { "userfaultfd: minivmm's handler threads back it",
	    "and time every fault (anon, memfd, hugetlb)" } },
};
_Static_assert(ARRAY_SIZE(paging_kinds) == PAGING_KIND_COUNT,
	       "one row per enum paging_kind, in order");

const char *paging_kind_name(unsigned k)
{
	return k < PAGING_KIND_COUNT ? paging_kinds[k].name : "?";
}

/* The handlers share guest RAM out in slices of 2 MiB, or of a page when pages are bigger. */
uint64_t paging_slice_bytes(const struct vm_config *cfg)
{
	uint64_t page = cfg->backing->page_bytes;

	return page > SLICE_BYTES ? page : SLICE_BYTES;
}

uint64_t paging_slices(const struct vm_config *cfg)
{
	return cfg->mem_bytes / paging_slice_bytes(cfg);
}

unsigned paging_default_threads(const struct vm_config *cfg)
{
	uint64_t slices = paging_slices(cfg);

	return cfg->vcpus < slices ? cfg->vcpus : (unsigned)slices;
}

struct paging {
	const struct vm_config *cfg;
	struct vm_config own; /* paging_plan_restore's: cfg points here */
	struct vm *vm;
	struct uffd_pager *uffd;
	int sandbox;
	struct mm_outfile record; /* --record-touch, opened at plan time (fd -1: none) */
	int started;		  /* the handlers ran (uffd_start succeeded) */
	int record_err;		  /* -errno of writing the record */
	size_t recorded;	  /* pages written to the record */
	double t_started;	  /* registration and handlers ready */
	struct uffd_stats total;
	int have_total;
	/* The handlers' histogram summed at each timeline mark (phase i's end). */
	struct lat_hist snap[PAGING_MAX_PHASES];
	uint8_t snapped[PAGING_MAX_PHASES];
};

/*
 * At every timeline mark, under the timeline's lock, on any thread: no
 * locks, no syscalls. The faults resolved by the mark's time t: a guest's
 * mark arrives after its TSC said it happened, and another vCPU's faults in
 * between belong to the next phase.
 */
void paging_sample(void *cookie, unsigned phase, double t)
{
	struct paging *pg = cookie;

	if (phase >= PAGING_MAX_PHASES || !pg->uffd)
		return;
	lat_init(&pg->snap[phase]);
	uffd_sample(pg->uffd, (uint64_t)(t * NSEC_PER_SEC), &pg->snap[phase]);
	pg->snapped[phase] = 1;
}

/* paging_plan's work, with pg allocated and pg->cfg set; shared: MINOR. */
static int plan(struct paging *pg, int shared, char *err, size_t errlen)
{
	const struct vm_config *cfg = pg->cfg;
	struct uffd_config uc = { .threads = cfg->uffd_threads,
				  .delay_us = cfg->uffd_delay_us,
				  .record = cfg->record_touch_path != NULL };
	int r;

	pg->record = (struct mm_outfile){ .fd = -1, .dirfd = -1 };
	if (!uc.threads)
		uc.threads = paging_default_threads(cfg);
	r = uffd_open(cfg->backing, cfg->mem_bytes, shared, &uc, &pg->uffd, err, errlen);
	if (r)
		goto fail;
	if (cfg->record_touch_path) {
		/*
		 * Now: the sandbox allows no open(2) when the run ends. A
		 * temporary beside the file (through a symlink), renamed over it
		 * once complete: a killed run leaves an earlier record as it was.
		 */
		r = mm_outfile_open(&pg->record, "--record-touch", cfg->record_touch_path,
				    err, errlen);
		if (r) {
			r = -EINVAL; /* a usage error, not the host's */
			goto fail;
		}
	}
	return 0;
fail:
	return r;
}

int paging_plan(const struct vm_config *cfg, struct paging **out, char *err,
		size_t errlen)
{
	struct paging *pg;
	int r;

	*out = NULL;
	if (cfg->paging != PAGING_UFFD)
		return 0;
	pg = calloc(1, sizeof(*pg));
	if (!pg) {
		snprintf(err, errlen, "--paging uffd: out of memory");
		return -ENOMEM;
	}
	pg->cfg = cfg;
	r = plan(pg, cfg->backing->id == MM_MEMFD, err, errlen);
	if (r) {
		paging_free(pg);
		return r;
	}
	*out = pg;
	return 0;
}

int paging_plan_restore(const struct vm_config *cfg, int minor, const char *record_path,
			int fd, struct paging **out, char *err, size_t errlen)
{
	struct paging *pg = calloc(1, sizeof(*pg));
	int r;

	*out = NULL;
	if (!pg) {
		snprintf(err, errlen, "--restore: out of memory");
		return -ENOMEM;
	}
	pg->own = *cfg;
	pg->own.paging = PAGING_UFFD;
	pg->own.record_touch_path = record_path;
	pg->cfg = &pg->own;
	r = plan(pg, minor, err, errlen);
	if (!r)
		r = uffd_set_file(pg->uffd, fd, err, errlen);
	if (!r && cfg->uffd_external_fd > 0 && !minor)
		r = uffd_set_external(pg->uffd, cfg->uffd_external_fd, err, errlen);
	if (r) {
		paging_free(pg);
		return r;
	}
	*out = pg;
	return 0;
}

int paging_fill(struct paging *pg, const struct uffd_fill_plan *plan, int wait_first,
		char *err, size_t errlen)
{
	int r = uffd_fill_start(pg->uffd, plan, err, errlen);

	return r || !wait_first ? r : uffd_fill_wait_first(pg->uffd, err, errlen);
}

/* --- the handler threads' hooks -------------------------------------------- */

static int handler_enter(void *cookie, unsigned index, int uffd, int stop_fd)
{
	struct paging *pg = cookie;
	struct sandbox_fds f = { .vcpu_fd = -1, .uffd_fd = uffd, .stop_fd = stop_fd };

	(void)index;
	return pg->sandbox ? sandbox_enter(SANDBOX_UFFD, &f) : 0;
}

static int filler_enter(void *cookie, int file_fd, const int *uffds, unsigned n)
{
	struct paging *pg = cookie;
	struct sandbox_fds f = { .vcpu_fd = -1,
				 .uffd_fd = -1,
				 .stop_fd = -1,
				 .prefault_fd = -1,
				 .irq_vm_fd = -1,
				 .file_fd = file_fd,
				 .fill_uffds = uffds,
				 .nfill_uffds = n };

	return pg->sandbox ? sandbox_enter(SANDBOX_FILL, &f) : 0;
}

static void handler_failed(void *cookie, const char *msg)
{
	struct paging *pg = cookie;

	vm_finish(pg->vm, END_HOST_ERROR, 0, "userfaultfd %s", msg);
}

int paging_start(struct paging *pg, struct vm *vm, int sandbox, char *err, size_t errlen)
{
	const struct uffd_hooks h = { pg, handler_enter, handler_failed, filler_enter };
	int r;

	if (!pg || pg->started)
		return 0; /* a restore mode started it already */
	pg->vm = vm;
	pg->sandbox = sandbox;
	r = uffd_start(pg->uffd, &vm->ram, &h, err, errlen);
	pg->started = !r;
	pg->t_started = now_s();
	return r;
}

/* Put a complete record in place (fsync, rename), or leave the earlier file as it was. */
static void close_record(struct paging *pg)
{
	char err[MM_PATH_BYTES + 256];

	if (pg->record.fd < 0)
		return;
	if (pg->record_err || !pg->started) {
		mm_outfile_discard(&pg->record);
		return;
	}
	pg->record_err = mm_outfile_commit(&pg->record, err, sizeof(err));
	if (pg->record_err)
		fprintf(stderr, "minivmm: %s\n", err);
}

/* The guest's file name for the record's header ("snapshot": a restore has none). */
static const char *guest_name(const char *path)
{
	if (!path)
		return "snapshot";
	return strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
}

void paging_stop(struct paging *pg, double t_exec, double guest_entry)
{
	struct uffd_touch *t = NULL;
	size_t n = 0;
	char extra[192];
	int at;

	if (!pg || !pg->uffd)
		return;
	uffd_stop(pg->uffd);
	uffd_stats(pg->uffd, UINT32_MAX, &pg->total);
	pg->have_total = pg->started;
	if (pg->record.fd < 0 || !pg->started) {
		close_record(pg);
		return;
	}
	pg->record_err = uffd_touches(pg->uffd, &t, &n);
	at = guest_entry > 0 ? snprintf(extra, sizeof(extra), " guest_entry_ns=%.0f",
					(guest_entry - t_exec) * NSEC_PER_SEC)
			     : 0;
	snprintf(extra + at, sizeof(extra) - (size_t)at,
		 " paging=uffd-%s vcpus=%u guest=%s", uffd_mode_name(uffd_mode(pg->uffd)),
		 pg->cfg->vcpus, guest_name(pg->cfg->guest_path));
	/* Spaces or control bytes in the guest's name would break the header's words. */
	for (char *c = strstr(extra, "guest="); c && *c; c++)
		if (*c <= ' ' || *c > '~')
			*c = '_';
	if (!pg->record_err)
		pg->record_err = touch_order_write(
			pg->record.fd, pg->cfg->mem_bytes, uffd_page_bytes(pg->uffd), t,
			n, (uint64_t)(t_exec * NSEC_PER_SEC), extra);
	pg->recorded = pg->record_err ? 0 : n;
	if (pg->record_err)
		fprintf(stderr, "minivmm: --record-touch %s: writing %zu pages: %s\n",
			pg->cfg->record_touch_path, n, strerror(-pg->record_err));
	free(t);
	close_record(pg);
}

int paging_record_error(const struct paging *pg)
{
	return pg ? pg->record_err : 0;
}

int paging_main_fds(const struct paging *pg, int *fds, int max)
{
	int n = 0;

	if (!pg || !pg->uffd)
		return 0;
	if (n < max)
		fds[n++] = uffd_stop_fd(pg->uffd); /* paging_stop writes it */
	if (pg->record.fd >= 0 && n < max)
		fds[n++] = pg->record.fd;
	return n;
}

int paging_main_dirfd(const struct paging *pg)
{
	return pg ? pg->record.dirfd : -1;
}

void paging_free(struct paging *pg)
{
	if (!pg)
		return;
	uffd_free(pg->uffd);
	mm_outfile_discard(&pg->record); /* the run never got to paging_stop */
	free(pg);
}

int paging_facts(const struct paging *pg, struct paging_facts *f)
{
	if (!pg || !pg->uffd)
		return -ENOENT;
	*f = (struct paging_facts){ .cfg = pg->cfg,
				    .uffd = pg->uffd,
				    .total = pg->have_total ? &pg->total : NULL,
				    .started = pg->started,
				    .recorded = pg->recorded,
				    .record_err = pg->record_err,
				    .snap = pg->snap,
				    .snapped = pg->snapped,
				    .nsnap = PAGING_MAX_PHASES };
	return 0;
}
