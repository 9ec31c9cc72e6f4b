/* The restore modes userfaultfd pages (uffd, background, replay, minor) and populate: guest RAM from the memory file on demand, or all before resuming. */
#include "snapshot.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define FILL_CHUNK (1ULL << 20) /* bytes per read of the fillers */

/* The run's pager for this restore, from the memory file, started: 0 or -errno with ctx->err. */
static int start_pager(struct restore_ctx *ctx, int minor, const char *record,
		       struct paging **out)
{
	struct paging *pg;
	int r = paging_plan_restore(ctx->cfg, minor, record, ctx->mem_fd, &pg, ctx->err,
				    ctx->errlen);

	if (r)
		return r;
	*ctx->paging = pg; /* the run's: sampled at each mark, stopped, reported */
	timeline_set_sampler(ctx->tl, paging_sample, pg);
	*out = pg;
	return paging_start(pg, ctx->vm, ctx->sandbox, ctx->err, ctx->errlen);
}

int restore_uffd(struct restore_ctx *ctx)
{
	struct paging *pg;

	return start_pager(ctx, 0, NULL, &pg);
}

/* background: the fillers start once the vCPUs run, from address 0 up, racing their faults. */
int restore_background_resumed(struct restore_ctx *ctx)
{
	const struct uffd_fill_plan plan = { .rest = 1,
					     .threads = 1,
					     .chunk_bytes = FILL_CHUNK };

	return paging_fill(*ctx->paging, &plan, 0, ctx->err, ctx->errlen);
}

int snap_recording(const char *dir, char *path, size_t len)
{
	struct stat st;

	snprintf(path, len, "%s/%s", dir, SNAP_TOUCH_FILE);
	return fstatat(AT_FDCWD, path, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

/*
 * The recording opened as the snapshot's own files are: not through a
 * link, a regular file (a FIFO would hang the restore). fd, or -errno with
 * ctx->err set.
 */
static int open_recording(struct restore_ctx *ctx, const char *path)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC), e;
	struct stat st;

	if (fd < 0) {
		e = -errno;
		snprintf(
			ctx->err, ctx->errlen, "replay's recording %s: %s", path,
			e == -ELOOP
				? "a symbolic link; a snapshot's files are read only as they are"
				: strerror(-e));
		return e == -ELOOP ? -EINVAL : e;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		snprintf(
			ctx->err, ctx->errlen,
			"replay's recording %s: not a regular file; a snapshot's files are read only as they are",
			path);
		return -EINVAL;
	}
	return fd;
}

/*
 * replay: with a recording, its pages fetched in large reads before the
 * vCPUs resume (REAP), the rest on demand; without one, a uffd restore
 * recording its first touches into the snapshot directory for the next.
 */
int restore_replay(struct restore_ctx *ctx)
{
	struct touch_order o = { 0 };
	struct uffd_fill_plan plan = { .threads = 2, .chunk_bytes = FILL_CHUNK };
	struct paging *pg;
	char path[PATH_MAX], why[768];
	int r;

	if (!snap_recording(ctx->dir, path, sizeof(path))) {
		if (!ctx->quiet)
			printf("restore: replay: no recording in %s yet: this run is a uffd restore that records its first touches to %s (the next replay fetches them first)\n",
			       ctx->dir, path);
		/* The pager writes the record at the run's end and the report names it: the run's copy. */
		snprintf(ctx->recording, sizeof(ctx->recording), "%s", path);
		return start_pager(ctx, 0, ctx->recording, &pg);
	}
	r = open_recording(ctx, path);
	if (r < 0)
		return r;
	r = touch_order_read_fd(r, path, ctx->ram->size, &o, why, sizeof(why));
	if (r) {
		snprintf(ctx->err, ctx->errlen, "replay's recording %s: %s", path, why);
		return r;
	}
	r = start_pager(ctx, 0, NULL, &pg);
	plan.first = o.ranges;
	plan.nfirst = o.nranges;
	if (!r)
		r = paging_fill(pg, &plan, 1, ctx->err, ctx->errlen);
	if (!r && !ctx->quiet)
		printf("restore: replay: %llu recorded pages (%zu ranges, %s) fetched before resuming; the rest on demand\n",
		       (unsigned long long)o.pages, o.nranges, path);
	touch_order_free(&o);
	return r;
}

/* minor: the file mapped private (as the private mode maps it), first touches as minor faults. */
int restore_minor(struct restore_ctx *ctx)
{
	struct paging *pg;
	int r = mm_memfile_map_private(ctx->ram, ctx->mem_fd, ctx->err, ctx->errlen);

	return r ? r : start_pager(ctx, 1, NULL, &pg);
}

/*
 * populate: private, then every page written in (MADV_POPULATE_WRITE: copy
 * on write from the page cache) and, where KVM has it, the second-level
 * entries built (KVM_PRE_FAULT_MEMORY) through vCPU 0. Prefault after
 * populate: over memory never written it maps the zero page, and every
 * first write would fault twice (PLATFORM.md).
 */
int restore_populate(struct restore_ctx *ctx)
{
	const struct platform *plat = vm_platform(ctx->vm);
	struct prefault_stats st = { 0 };
	struct guest_ram *ram = ctx->ram;
	int fell_back = 0,
	    r = mm_memfile_map_private(ram, ctx->mem_fd, ctx->err, ctx->errlen);
	double t0 = now_s(), t1;

	if (r)
		return r;
	r = mm_populate_range(ram->hva, ram->size, ram->backend->page_bytes, &fell_back);
	if (r) {
		snprintf(ctx->err, ctx->errlen,
			 "--restore-mode populate: MADV_POPULATE_WRITE: %s",
			 strerror(-r));
		return r;
	}
	t1 = now_s();
	if (plat->pre_fault) {
		r = mm_prefault_range(vm_vcpu_fd(ctx->vm, 0), 0, ram->size,
				      mm_prefault_ioctl, &st);
		if (r) {
			snprintf(ctx->err, ctx->errlen,
				 "--restore-mode populate: KVM_PRE_FAULT_MEMORY: %s",
				 strerror(-r));
			return r;
		}
	}
	if (!ctx->quiet) {
		printf("restore: populate: %s of %llu MiB in %.1f ms; ",
		       fell_back ? "a write per page (no MADV_POPULATE_WRITE here)"
				 : "MADV_POPULATE_WRITE",
		       (unsigned long long)(ram->size >> 20), (t1 - t0) * 1e3);
		if (plat->pre_fault)
			printf("KVM_PRE_FAULT_MEMORY of %llu MiB in %u calls, %.1f ms\n",
			       (unsigned long long)(st.bytes >> 20), st.calls,
			       (now_s() - t1) * 1e3);
		else
			printf("no KVM_PRE_FAULT_MEMORY on this KVM (%s, %s paging): populate only, the guest's first touches still take second-level faults\n",
			       plat->kvm, plat->tdp ? "tdp" : "shadow");
	}
	return 0;
}
