/* The command line's options against each other, once all are parsed: each combination's message. */
#include "options_internal.h"

#include <string.h>

/*
 * The options that go with --paging, once all are parsed (delay_given:
 * --uffd-delay-us was). Sets the default --uffd-threads. 0, or -EINVAL with
 * err set.
 */
static int check_paging(struct config *cfg, int delay_given, char *err, size_t errlen)
{
	uint64_t slices = paging_slices(&cfg->vm);
	int uffd_mode = 0; /* --compare runs some mode with --paging uffd */

	for (unsigned i = 0;
	     cfg->compare && !cfg->compare_restore && i < cfg->ncompare_modes; i++)
		uffd_mode |=
			cfg->compare_modes[i] == MODE_UFFD ||
			compare_mode_needs_recording(cfg->compare_modes[i], &cfg->vm);
	if (cfg->compare && cfg->vm.record_touch_path) {
		snprintf(
			err, errlen,
			"--record-touch records one run, not a --compare (--compare=...,replay records the order it replays)");
		return -EINVAL;
	}
	if (cfg->vm.paging != PAGING_UFFD) {
		if (uffd_mode)
			return 0; /* the uffd modes take --uffd-threads, --uffd-delay-us */
		if (cfg->vm.uffd_threads || delay_given)
			snprintf(err, errlen,
				 "--uffd-threads and --uffd-delay-us need --paging uffd");
		else if (cfg->vm.record_touch_path)
			snprintf(
				err, errlen,
				"--record-touch needs --paging uffd: only then does every page's first touch reach minivmm (as a userfaultfd fault), in order");
		else
			return 0;
		return -EINVAL;
	}
	if (cfg->compare) {
		snprintf(
			err, errlen,
			"--compare runs its modes under the paging each chooses; it does not take --paging uffd (the uffd mode is lazy with --paging uffd: --compare=lazy,uffd)");
		return -EINVAL;
	}
	if (cfg->vm.eager_background) {
		snprintf(
			err, errlen,
			"--eager=background populates guest RAM beside the guest: with --paging uffd the handlers must see every first touch; use one or the other");
		return -EINVAL;
	}
	if (cfg->vm.eager != EAGER_NONE && cfg->vm.eager != EAGER_TOUCH) {
		snprintf(
			err, errlen,
			"--eager=%s backs guest RAM before the guest runs, so with --paging uffd no page would fault; use --eager=touch (the guest writes every page, each a userfaultfd fault) or no --eager",
			eager_strategy_name(cfg->vm.eager));
		return -EINVAL;
	}
	if (cfg->vm.record_touch_path && (cfg->repeat > 1 || cfg->warmup)) {
		snprintf(err, errlen,
			 "--record-touch records one run: not with --repeat or --warmup");
		return -EINVAL;
	}
	if (!cfg->vm.uffd_threads)
		cfg->vm.uffd_threads = paging_default_threads(&cfg->vm);
	if (cfg->vm.uffd_threads > slices) {
		snprintf(
			err, errlen,
			"--uffd-threads %u: guest RAM has only %llu slices of %llu MiB, one per handler",
			cfg->vm.uffd_threads, (unsigned long long)slices,
			(unsigned long long)(paging_slice_bytes(&cfg->vm) >> 20));
		return -EINVAL;
	}
	return 0;
}

/* --snapshot and --restore against the rest of the command line. 0, or 1 with msg. */
static int check_snapshot(const struct config *cfg, char *msg, size_t len)
{
	const char *other = NULL;

	if (cfg->snapshot_continue && !cfg->snapshot_dir)
		other = "--snapshot-continue is about --snapshot: add --snapshot DIR";
	else if (cfg->restore_mode && !cfg->restore_dir)
		other = "--restore-mode is about --restore: add --restore DIR";
	else if (cfg->snapshot_dir && cfg->restore_dir)
		other = "--snapshot of a restored guest is not built: restore, or snapshot, one at a time";
	else if (cfg->snapshot_dir && (cfg->compare || cfg->repeat > 1))
		other = "--snapshot makes one run: not with --compare or --repeat (--restore DIR --compare=MODES restores one snapshot several ways)";
	else if (cfg->restore_dir && cfg->compare && cfg->restore_mode)
		other = "--compare --restore runs the restore modes it lists: leave out --restore-mode";
	else if (cfg->restore_cache_given &&
		 !(cfg->restore_dir && (cfg->compare || cfg->repeat > 1)))
		other = "--restore-cache is about --restore DIR with --compare or --repeat";
	else if ((cfg->snapshot_dir || cfg->restore_dir) &&
		 cfg->vm.paging != PAGING_KERNEL)
		other = "--snapshot and --restore with --paging uffd are not built (a restore mode pages by userfaultfd instead)";
	else if (cfg->snapshot_continue && cfg->vm.eager != EAGER_NONE)
		other = "--snapshot-continue restarts the vCPUs after the snapshot: not with --eager";
	else if (cfg->restore_dir &&
		 (cfg->vm.eager != EAGER_NONE || cfg->vm.numa || cfg->vm.mem_path ||
		  cfg->vm.reservoir || cfg->vm.raw))
		other = "--restore sets guest RAM from the snapshot: not with --eager, --numa, --mem-path, --reservoir or --raw";
	else if (cfg->clones && !cfg->restore_dir)
		other = "--clones restores one snapshot in N processes at once: add --restore DIR";
	else if (cfg->clones && (cfg->compare || cfg->repeat > 1 || cfg->warmup))
		other = "--clones is one burst of restores in one mode: not with --compare, --repeat or --warmup (run it again per mode, as bench/clones does)";
	else if (cfg->clones && cfg->trace_path)
		other = "--clones: each clone would write the same --trace file; leave it out";
	else if (cfg->clone_handler_given && !cfg->clones && cfg->clone_hold_fd < 0)
		other = "--clone-handler is about --clones: add --clones N";
	else if (cfg->clone_hold_fd >= 0 && (cfg->clones || !cfg->restore_dir))
		other = "--clone-hold is --clones' own channel to each clone it starts";
	if (other)
		snprintf(msg, len, "%s", other);
	return other != NULL;
}

int options_check(struct config *cfg)
{
	char msg[1024];
	int delay_given;

	if (cfg->vm.eager_threads && cfg->vm.eager == EAGER_TOUCH)
		return bad(
			"--eager-threads sets host threads for populate and prefault; --eager=touch runs in the guest, one vCPU per slice (use --vcpus)");
	if (cfg->vm.eager_threads && cfg->vm.eager == EAGER_NONE)
		return bad("--eager-threads needs --eager (auto, populate or prefault)");
	if (cfg->vm.eager_order && cfg->vm.eager == EAGER_NONE)
		return bad(
			"--eager-order orders eager population: add --eager (or --eager=background)");
	if (cfg->vm.eager_order && cfg->vm.eager == EAGER_TOUCH)
		return bad(
			"--eager-order orders the host's populate; --eager=touch writes from inside the guest, each vCPU its slice");
	if (eager_order_of(cfg->vm.eager_order) == EAGER_ORDER_FRONTIER &&
	    !cfg->vm.eager_background)
		return bad(
			"--eager-order frontier follows the running guest: it needs --eager=background");
	if (cfg->vm.mem_path && cfg->vm.reservoir)
		return bad(
			"--mem-path and --reservoir both say where guest RAM is: use one");
	if (cfg->vm.numa_policy != NUMA_POLICY_UNSET && !cfg->vm.numa)
		return bad("--numa-policy is about --numa's ranges: add --numa");
	if (cfg->vm.numa_policy == NUMA_POLICY_UNSET)
		cfg->vm.numa_policy = NUMA_BIND;
	if (cfg->vm.numa && (cfg->vm.mem_path || cfg->vm.reservoir))
		return bad(
			"--numa places fresh memory; a --%s file's pages are placed where it was allocated",
			cfg->vm.mem_path ? "mem-path" : "reservoir");
	if ((cfg->vm.mem_grow || cfg->vm.mem_any_fs) && !cfg->vm.mem_path)
		return bad("--%s is about a --mem-path file: add --mem-path",
			   cfg->vm.mem_grow ? "mem-grow" : "mem-any-fs");
	if (cfg->vm.roofline_path && cfg->vm.eager == EAGER_NONE)
		return bad(
			"--roofline rates eager population: add --eager (or --compare)");
	if (cfg->vm.roofline_path && cfg->vm.eager == EAGER_TOUCH)
		return bad(
			"--roofline rates the host's populate; --eager=touch writes from inside the guest");
	if (cfg->vm.roofline_path) {
		/* Read now too: a bad file is refused before any run (--compare's lazy one). */
		struct mm_roofline *roof;
		char why[MM_PATH_BYTES + 256];

		if (mm_roofline_load(cfg->vm.roofline_path, &roof, why, sizeof(why)))
			return bad("%s", why);
		mm_roofline_free(roof);
	}
	if (cfg->vm.mem_bytes % cfg->vm.backing->page_bytes) {
		uint64_t page = cfg->vm.backing->page_bytes;
		char below[24], above[24];

		mem_arg(below, sizeof(below), cfg->vm.mem_bytes, page, 0);
		mem_arg(above, sizeof(above), cfg->vm.mem_bytes, page, 1);
		return bad(
			"--backing %s: --mem must be a multiple of its %llu %s pages; write --mem %s%s%s",
			cfg->vm.backing->name,
			(unsigned long long)(page >= (1ULL << 30) ? page >> 30
								  : page >> 20),
			page >= (1ULL << 30) ? "GiB" : "MiB",
			strcmp(below, above) && cfg->vm.mem_bytes > page ? below : above,
			strcmp(below, above) && cfg->vm.mem_bytes > page ? " or --mem "
									 : "",
			strcmp(below, above) && cfg->vm.mem_bytes > page ? above : "");
	}
	if (check_snapshot(cfg, msg, sizeof(msg)))
		return bad("%s", msg);
	/* A --restore may be of a Linux guest: --kernel-anyway applies to it (run_linux_refused). */
	if ((cfg->vm.initrd_path || cfg->vm.cmdline ||
	     (cfg->vm.kernel_anyway && !cfg->restore_dir)) &&
	    !cfg->vm.kernel_path)
		return bad("--%s is about a Linux guest: add --kernel FILE",
			   cfg->vm.initrd_path ? "initrd"
			   : cfg->vm.cmdline   ? "cmdline"
					       : "kernel-anyway");
	if (cfg->vm.kernel_path && cfg->vm.eager == EAGER_TOUCH)
		return bad(
			"--eager=touch is the minivmm guest's (its firmware writes each vCPU's slice); a Linux guest takes --eager, --eager=populate, --eager=prefault or --eager=background");
	if (cfg->vm.kernel_path && cfg->vm.raw)
		return bad(
			"--raw is about a guest image; --kernel boots a Linux bzImage");
	delay_given = cfg->vm.uffd_delay_us != UFFD_DELAY_UNSET;
	if (!delay_given)
		cfg->vm.uffd_delay_us = 0;
	if (check_paging(cfg, delay_given, msg, sizeof(msg)))
		return bad("%s", msg);
	return 0;
}
