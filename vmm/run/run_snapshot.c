/* One run's --snapshot and --restore: the guest's ask, the save, the restored guest's steps. */
#include "run_internal.h"

#include <errno.h>
#include <string.h>

/*
 * The guest asks for a snapshot (vCPU thread). The first is honoured: the
 * VM pauses (the run ends as a snapshot, every vCPU out of KVM_RUN) and the
 * main thread saves it; the saved guest reads MVM_SNAP_RESTORED. Later ones
 * are refused, and past MVM_SNAPSHOT_ASKS_MAX the guest's run ends.
 */
uint32_t run_on_snapshot(void *cookie, unsigned vcpu, const struct mvm_hc_snapshot *a,
			 uint64_t result_gpa, int *stop)
{
	struct run *r = cookie;
	uint32_t asks = __atomic_add_fetch(&r->snap_asks, 1, __ATOMIC_ACQ_REL);

	if (asks > MVM_SNAPSHOT_ASKS_MAX) {
		vm_finish(
			r->vm, END_GUEST_LIMIT, 0,
			"guest asked for a snapshot %u times (at most %d a run; the first is honoured)",
			asks, MVM_SNAPSHOT_ASKS_MAX);
		*stop = 1;
		return MVM_SNAP_REFUSED;
	}
	if (!r->cfg->snapshot_dir)
		return MVM_SNAP_NONE;
	if (__atomic_exchange_n(&r->snap_claimed, 1, __ATOMIC_ACQ_REL))
		return MVM_SNAP_REFUSED;
	r->snap_req = *a;
	r->snap_result_gpa = result_gpa;
	if (vm_pause(r->vm, vcpu))
		return MVM_SNAP_REFUSED; /* the run was ending anyway */
	*stop = 1;
	return MVM_SNAP_RESTORED;
}

/* --restore: no image is read; the VM is the snapshot's guest, of its ABI. */
void run_restore_image(struct run *r)
{
	const struct snap_header *h = r->cfg->restore->v.hdr;
	struct mvm_image_header hdr = { .magic = MVM_IMAGE_MAGIC,
					.abi_version = h->abi_version,
					.max_vcpus = h->nvcpus,
					.load_gpa = MVM_LOAD_GPA };

	vm_set_image(r->vm, &hdr);
}

/* The run whose snapshot directory a second SIGINT removes (one run at a time has one). */
static struct snap_dir *live_dir;

static void unlink_now(void)
{
	if (live_dir)
		snap_dir_unlink_now(live_dir);
}

void run_forget_snapshot(struct run *r)
{
	if (live_dir == &r->dir)
		live_dir = NULL;
}

/*
 * --snapshot: the image can ask (ABI 5; a Linux guest's programs are built
 * against this minivmm's header), and the directory can be written, before KVM.
 */
int run_begin_snapshot(struct run *r)
{
	char err[2 * MM_PATH_BYTES];
	int e;

	if (r->lx && run_linux_identity(r, &r->lx_id))
		return -1;
	if (!r->lx && vm_image_abi(r->vm) < SNAP_MIN_ABI)
		return setup_fail(
			r, END_USAGE,
			"--snapshot: %s is built for ABI %u, whose guest cannot ask for a snapshot (ABI %d): rebuild it against this minivmm's include/minivmm_abi.h",
			r->cfg->vm.guest_path, vm_image_abi(r->vm), SNAP_MIN_ABI);
	e = snap_dir_begin(&r->dir, r->cfg->snapshot_dir, err, sizeof(err));
	if (e)
		return setup_fail(r, END_USAGE, "%s", err);
	live_dir = &r->dir;
	vm_set_exit_hook(unlink_now);
	return 0;
}

/* The save's stop flag: a SIGINT or SIGTERM pending (the run then ends as interrupted). */
static int save_interrupted(void *cookie)
{
	struct run *r = cookie;

	return vm_end(r->vm) == END_INTERRUPTED || vm_interrupt_pending(r->vm);
}

/*
 * --snapshot: the run paused where the guest asked (every vCPU thread
 * joined). Save it; --snapshot-continue: the guest reads MVM_SNAP_TAKEN
 * and runs on, on new vCPU threads, until its end. A failed snapshot ends
 * the run (exit 3; 2 for a place that cannot be written or a NAME that
 * appeared while the guest ran), leaving nothing
 * that looks like one. 1 when the guest runs on: run_to_end runs it.
 */
int run_save_snapshot(struct run *r)
{
	struct guest_ram *ram = vm_ram(r->vm);
	struct snap_save_in in = { .log = r->log,
				   .console = r->console,
				   .req = &r->snap_req,
				   .result_gpa = r->snap_result_gpa,
				   .backing = r->cfg->vm.backing->name,
				   .page_bytes = r->cfg->vm.backing->page_bytes,
				   .guest_argc = r->cfg->vm.guest_argc,
				   .guest_argv = r->cfg->vm.guest_argv,
				   .image = r->cfg->vm.guest_path,
				   .stop = save_interrupted,
				   .stop_cookie = r,
				   .abi = r->lx ? MVM_ABI_VERSION : vm_image_abi(r->vm),
				   .lx = r->lx ? &r->lx_id : NULL,
				   .pc = &r->pc };
	uint32_t taken = MVM_SNAP_TAKEN;
	char err[1024];
	int e;

	for (unsigned i = 0; i < vm_nvcpus(r->vm); i++)
		console_flush(r->console, i);
	e = snapshot_save(r->vm, &in, &r->dir, &r->snap, err, sizeof(err));
	r->snap.asks = __atomic_load_n(&r->snap_asks, __ATOMIC_ACQUIRE);
	if (e) {
		/* Interrupted: the run ends so already (vm_interrupt_pending), its message said. */
		if (vm_end(r->vm) != END_INTERRUPTED)
			/* Something put at NAME while the guest ran is the user's: a usage error. */
			vm_pause_abandon(
				r->vm, e == -EEXIST ? END_USAGE : END_HOST_ERROR, "%s%s",
				err,
				e == -ENOSPC
					? " (the file system is full: no snapshot was left)"
					: "");
		vm_pause_release(r->vm, 0);
		return 0;
	}
	timeline_mark(r->tl, PHASE_SNAPSHOT_SAVED);
	if (!r->cfg->quiet)
		snapshot_print(&r->snap, stdout);
	if (!r->cfg->snapshot_continue) {
		vm_pause_release(r->vm, 0); /* the parked vCPU threads end */
		return 0;
	}
	memcpy(mm_gpa_to_hva(ram, r->snap_result_gpa, sizeof(taken)), &taken,
	       sizeof(taken));
	vm_pause_release(r->vm, 1); /* the same threads run on, filtered as before */
	return 1;
}

/*
 * --restore: the vCPUs exist; each gets its saved state, then a Linux
 * guest's platform gets its own (run.c then puts the records the guest had
 * sent in again), the restore mode makes RAM hold the
 * memory file's content (now, or on demand), and the guest resumes where it
 * asked for the snapshot.
 */
int run_restore_vcpus(struct run *r)
{
	const struct snapshot *s = r->cfg->restore;
	int e;

	r->rf.mode = r->cfg->restore_mode->name;
	r->rf.dir = s->dir;
	e = snapshot_set_vcpus(r->vm, s, &r->rf, r->restore_err, sizeof(r->restore_err));
	e = e
		    ?: snapshot_set_platform(r->vm, s, r->console, &r->pc, r->restore_err,
					     sizeof(r->restore_err));
	if (e) {
		vm_finish(r->vm, END_HOST_ERROR, 0, "--restore %s: %s", s->dir,
			  r->restore_err);
		return -1;
	}
	return 0;
}

int run_restore_memory(struct run *r)
{
	const struct snapshot *s = r->cfg->restore;
	const struct restore_mode *m = r->cfg->restore_mode;
	char *err = r->restore_err;
	size_t n = 0;
	double t0;
	int e;

	timeline_mark(r->tl, PHASE_STATE_LOADED);
	t0 = now_s();
	e = mm_memfile_extents(s->mem_fd, s->mem_bytes, &r->extents, &n, err,
			       sizeof(r->restore_err));
	r->rc = (struct restore_ctx){ .vm = r->vm,
				      .ram = vm_ram(r->vm),
				      .mem_fd = s->mem_fd,
				      .dir = s->dir,
				      .file_bytes = s->mem_bytes,
				      .extents = r->extents,
				      .nextents = n,
				      .tl = r->tl,
				      .sandbox = !r->cfg->no_sandbox,
				      .cfg = &r->cfg->vm,
				      .paging = &r->paging,
				      .quiet = r->cfg->quiet,
				      .err = err,
				      .errlen = sizeof(r->restore_err) };
	for (size_t i = 0; i < n; i++)
		r->rc.data_bytes += r->extents[i].bytes;
	r->rf.data_bytes = r->rc.data_bytes;
	r->rf.extents = n;
	e = e ?: m->prepare(&r->rc);
	r->rf.memory_s = now_s() - t0;
	if (e) {
		/* -EINVAL: the snapshot's files or the options (exit 2); else this host (exit 3). */
		vm_finish(r->vm, e == -EINVAL ? END_USAGE : END_HOST_ERROR, 0,
			  "--restore %s (mode %s): %s", s->dir, m->name, err);
		return -1;
	}
	timeline_mark(r->tl, PHASE_MEMORY_READY);
	return 0;
}

/* The vCPU threads exist: the mode's own start (uffd: its handler). */
void run_restore_resumed(struct run *r)
{
	const struct restore_mode *m = r->cfg->restore_mode;
	int e;

	if (m->resumed && (e = m->resumed(&r->rc)))
		vm_finish(r->vm, END_HOST_ERROR, 0, "--restore %s (mode %s): %s",
			  r->cfg->restore->dir, m->name, r->restore_err);
}

void run_restore_finish(struct run *r)
{
	const struct restore_mode *m = r->cfg->restore_mode;

	if (m->finish)
		m->finish(&r->rc);
}
