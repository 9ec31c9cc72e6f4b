/* --paging: who resolves guest RAM's first touches (the kernel, or minivmm's userfaultfd handlers), and what each cost. */
#include "vmm.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "json.h"

#define PAGING_MAX_PHASES 32 /* the timeline's limit */
#define USEC_PER_NSEC	  1e-3
#define SLICE_BYTES	  (2ULL << 20)

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

/* The handlers share guest RAM out in slices of this many bytes. */
static uint64_t slice_bytes(const struct config *cfg)
{
	uint64_t page = cfg->backing->page_bytes;

	return page > SLICE_BYTES ? page : SLICE_BYTES;
}

unsigned paging_default_threads(const struct config *cfg)
{
	uint64_t slices = cfg->mem_bytes / slice_bytes(cfg);

	return cfg->vcpus < slices ? cfg->vcpus : (unsigned)slices;
}

int paging_check_options(struct config *cfg, int delay_given, char *err, size_t errlen)
{
	uint64_t slices = cfg->mem_bytes / slice_bytes(cfg);

	if (cfg->paging != PAGING_UFFD) {
		if (cfg->uffd_threads || delay_given)
			snprintf(err, errlen,
				 "--uffd-threads and --uffd-delay-us need --paging uffd");
		else if (cfg->record_touch_path)
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
			"--compare runs the guest lazily and with --eager under the kernel's paging; it does not take --paging uffd");
		return -EINVAL;
	}
	if (cfg->eager != EAGER_NONE && cfg->eager != EAGER_TOUCH) {
		snprintf(
			err, errlen,
			"--eager=%s backs guest RAM before the guest runs, so with --paging uffd no page would fault; use --eager=touch (the guest writes every page, each a userfaultfd fault) or no --eager",
			eager_strategy_name(cfg->eager));
		return -EINVAL;
	}
	if (cfg->record_touch_path && (cfg->repeat > 1 || cfg->warmup)) {
		snprintf(err, errlen,
			 "--record-touch records one run: not with --repeat or --warmup");
		return -EINVAL;
	}
	if (!cfg->uffd_threads)
		cfg->uffd_threads = paging_default_threads(cfg);
	if (cfg->uffd_threads > slices) {
		snprintf(
			err, errlen,
			"--uffd-threads %u: guest RAM has only %llu slices of %llu MiB, one per handler",
			cfg->uffd_threads, (unsigned long long)slices,
			(unsigned long long)(slice_bytes(cfg) >> 20));
		return -EINVAL;
	}
	return 0;
}

struct paging {
	const struct config *cfg;
	struct vm *vm;
	struct uffd_pager *uffd;
	const struct timeline *tl;
	int sandbox;
	int record_fd;	  /* --record-touch, opened at plan time; -1 */
	int started;	  /* the handlers ran (uffd_start succeeded) */
	int record_err;	  /* -errno of writing the record */
	size_t recorded;  /* pages written to the record */
	double t_started; /* registration and handlers ready */
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
static void sample(void *cookie, unsigned phase, double t)
{
	struct paging *pg = cookie;

	if (phase >= PAGING_MAX_PHASES || !pg->uffd)
		return;
	lat_init(&pg->snap[phase]);
	uffd_sample(pg->uffd, (uint64_t)(t * NSEC_PER_SEC), &pg->snap[phase]);
	pg->snapped[phase] = 1;
}

int paging_plan(const struct config *cfg, struct timeline *tl, struct paging **out,
		char *err, size_t errlen)
{
	struct uffd_config uc = { .threads = cfg->uffd_threads,
				  .delay_us = cfg->uffd_delay_us,
				  .record = cfg->record_touch_path != NULL };
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
	pg->record_fd = -1;
	if (!uc.threads)
		uc.threads = paging_default_threads(cfg);
	r = uffd_open(cfg->backing, cfg->mem_bytes, cfg->backing->id == MM_MEMFD, &uc,
		      &pg->uffd, err, errlen);
	if (r)
		goto fail;
	if (cfg->record_touch_path) {
		/* Now: the sandbox allows no open(2) when the run ends. */
		pg->record_fd = open(cfg->record_touch_path,
				     O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
		if (pg->record_fd < 0) {
			r = -errno;
			snprintf(err, errlen, "--record-touch %s: %s",
				 cfg->record_touch_path, strerror(-r));
			r = -EINVAL; /* a usage error, not the host's */
			goto fail;
		}
	}
	timeline_set_sampler(tl, sample, pg);
	pg->tl = tl;
	*out = pg;
	return 0;
fail:
	paging_free(pg);
	return r;
}

/* --- the handler threads' hooks -------------------------------------------- */

static int handler_enter(void *cookie, unsigned index, int uffd, int stop_fd)
{
	struct paging *pg = cookie;
	struct sandbox_fds f = { .vcpu_fd = -1, .uffd_fd = uffd, .stop_fd = stop_fd };

	(void)index;
	return pg->sandbox ? sandbox_enter(SANDBOX_UFFD, &f) : 0;
}

static void handler_failed(void *cookie, const char *msg)
{
	struct paging *pg = cookie;

	vm_finish(pg->vm, END_HOST_ERROR, 0, "userfaultfd %s", msg);
}

int paging_start(struct paging *pg, struct vm *vm, int sandbox, char *err, size_t errlen)
{
	const struct uffd_hooks h = { pg, handler_enter, handler_failed };
	int r;

	if (!pg)
		return 0;
	pg->vm = vm;
	pg->sandbox = sandbox;
	r = uffd_start(pg->uffd, &vm->ram, &h, err, errlen);
	pg->started = !r;
	pg->t_started = now_s();
	return r;
}

/* close(2) is where some file systems report a failed write. */
static void close_record(struct paging *pg)
{
	if (pg->record_fd >= 0 && close(pg->record_fd) && !pg->record_err) {
		pg->record_err = -errno;
		fprintf(stderr, "minivmm: --record-touch %s: %s\n",
			pg->cfg->record_touch_path, strerror(errno));
	}
	pg->record_fd = -1;
}

void paging_stop(struct paging *pg, double t_exec)
{
	struct uffd_touch *t = NULL;
	size_t n = 0;
	char extra[192];
	double entry;
	int at;

	if (!pg || !pg->uffd)
		return;
	uffd_stop(pg->uffd);
	uffd_stats(pg->uffd, UINT32_MAX, &pg->total);
	pg->have_total = pg->started;
	if (pg->record_fd < 0 || !pg->started) {
		close_record(pg);
		return;
	}
	pg->record_err = uffd_touches(pg->uffd, &t, &n);
	entry = timeline_time(pg->tl, "guest_entry");
	at = entry > 0 ? snprintf(extra, sizeof(extra), " guest_entry_ns=%.0f",
				  (entry - t_exec) * NSEC_PER_SEC)
		       : 0;
	snprintf(extra + at, sizeof(extra) - (size_t)at,
		 " paging=uffd-%s vcpus=%u guest=%s", uffd_mode_name(uffd_mode(pg->uffd)),
		 pg->cfg->vcpus,
		 strrchr(pg->cfg->guest_path, '/') ? strrchr(pg->cfg->guest_path, '/') + 1
						   : pg->cfg->guest_path);
	/* Spaces or control bytes in the guest's name would break the header's words. */
	for (char *c = strstr(extra, "guest="); c && *c; c++)
		if (*c <= ' ' || *c > '~')
			*c = '_';
	if (!pg->record_err)
		pg->record_err = touch_order_write(
			pg->record_fd, pg->cfg->mem_bytes, uffd_page_bytes(pg->uffd), t,
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
	if (pg->record_fd >= 0 && n < max)
		fds[n++] = pg->record_fd;
	return n;
}

void paging_free(struct paging *pg)
{
	if (!pg)
		return;
	uffd_free(pg->uffd);
	if (pg->record_fd >= 0)
		close(pg->record_fd); /* the run never got to paging_stop */
	free(pg);
}

/* --- what it measured ------------------------------------------------------ */

static double us(uint64_t ns)
{
	return (double)ns * USEC_PER_NSEC;
}

static double fault_span_s(const struct uffd_stats *s)
{
	return s->last_ns > s->first_ns
		       ? (double)(s->last_ns - s->first_ns) / NSEC_PER_SEC
		       : 0;
}

void paging_report(const struct paging *pg, FILE *f)
{
	char a[FMT_BYTES], b[FMT_BYTES], c[FMT_BYTES], e[FMT_BYTES];
	const struct uffd_stats *s;
	const struct lat_hist *h;
	double span;
	unsigned n;

	if (!pg || !pg->have_total)
		return;
	s = &pg->total;
	h = &s->lat;
	span = fault_span_s(s);
	n = uffd_threads(pg->uffd);
	fprintf(f, "paging: uffd %s, %s (%s), %u handler thread%s",
		uffd_mode_name(uffd_mode(pg->uffd)), uffd_resolve_name(pg->uffd),
		uffd_source(pg->uffd), n, n == 1 ? "" : "s");
	if (pg->cfg->uffd_delay_us)
		fprintf(f, ", each fault delayed %u us (%s)", pg->cfg->uffd_delay_us,
			uffd_delay_method(pg->uffd));
	fprintf(f, ": %llu faults (%s MiB)", (unsigned long long)s->faults,
		fmt_value(a, (double)(s->faults * uffd_page_bytes(pg->uffd)) / (1 << 20),
			  1));
	if (s->faults)
		fprintf(f,
			", latency p50 %s us, p99 %s us, max %s us; %.0f faults/s over %s ms from first fault to last",
			fmt_value(a, us(lat_percentile(h, 50)), 1),
			fmt_value(b, us(lat_percentile(h, 99)), 1),
			fmt_value(c, us(h->max_ns), 1),
			span > 0 ? (double)s->faults / span : 0,
			fmt_value(e, span * MSEC_PER_SEC, 1));
	fprintf(f, "\n");
	if (pg->cfg->record_touch_path)
		fprintf(f, "paging: %s: %s %zu pages in first-touch order\n",
			pg->cfg->record_touch_path,
			pg->record_err ? "failed to write" : "wrote", pg->recorded);
}

static void latency_json(struct json *j, const char *key, const struct lat_hist *h)
{
	json_begin_object(j, key);
	json_u64(j, "p50", lat_percentile(h, 50));
	json_u64(j, "p90", lat_percentile(h, 90));
	json_u64(j, "p99", lat_percentile(h, 99));
	json_u64(j, "max", h->max_ns);
	if (h->min_ns != UINT64_MAX)
		json_u64(j, "min", h->min_ns);
	json_double(j, "mean", h->count ? (double)h->sum_ns / (double)h->count : 0);
	json_end_object(j);
}

/* The histogram in whole octaves [2^k, 2^(k+1)) ns, non-empty buckets only. */
static void histogram_json(struct json *j, const struct lat_hist *h)
{
	uint64_t octave[64] = { 0 };

	for (unsigned i = 0; i < LAT_BUCKETS; i++) {
		uint64_t lo = lat_bucket_lo(i);

		octave[lo ? 63 - __builtin_clzll(lo) : 0] += h->b[i];
	}
	json_begin_object(j, "histogram");
	json_string(j, "unit", "ns");
	json_string(j, "buckets_are", "[lo, hi): powers of two");
	json_begin_array(j, "buckets");
	for (unsigned k = 0; k < 64; k++) {
		if (!octave[k])
			continue;
		json_begin_object(j, NULL);
		json_u64(j, "lo", k ? 1ULL << k : 0);
		json_u64(j, "hi", 2ULL << k);
		json_u64(j, "count", octave[k]);
		json_end_object(j);
	}
	json_end_array(j);
	json_end_object(j);
}

/* Phase by phase: the faults resolved between its marks and KVM's pf_taken beside them. */
static void phases_json(const struct paging *pg, const struct timeline *tl,
			struct json *j)
{
	struct lat_hist zero, d;
	const struct lat_hist *prev = &zero;
	unsigned n = timeline_count(tl);

	lat_init(&zero);
	json_begin_array(j, "per_phase");
	for (unsigned i = 0; i < n && i < PAGING_MAX_PHASES; i++) {
		double t, t0 = 0;
		const char *name = timeline_phase(tl, i, &t, NULL);
		uint64_t pf, faults;

		if (i)
			timeline_phase(tl, i - 1, &t0, NULL);
		if (!pg->snapped[i])
			continue;
		lat_sub(&d, &pg->snap[i], prev);
		prev = &pg->snap[i];
		if (!lat_bucket_total(&d))
			continue;
		if (d.max_ns > pg->total.lat.max_ns)
			d.max_ns = pg->total.lat.max_ns;
		faults = lat_bucket_total(&d);
		json_begin_object(j, NULL);
		json_string(j, "phase", name);
		json_double(j, "dur_ms", (t - t0) * MSEC_PER_SEC);
		json_u64(j, "faults", faults);
		/* An upper bound on what a fault cost the guest: the phase's own work is in it. */
		json_double(j, "phase_us_per_fault", (t - t0) * 1e6 / (double)faults);
		json_u64(j, "p50_ns", lat_percentile(&d, 50));
		json_u64(j, "p90_ns", lat_percentile(&d, 90));
		json_u64(j, "p99_ns", lat_percentile(&d, 99));
		if (timeline_delta(tl, i, "pf_taken", &pf))
			json_u64(j, "kvm_pf_taken", pf);
		json_end_object(j);
	}
	json_end_array(j);
}

void paging_write_json(const struct paging *pg, const struct config *cfg,
		       const struct timeline *tl, double t_exec, struct json *j)
{
	const struct uffd_stats *s;
	double exec_ns = t_exec * NSEC_PER_SEC, span;

	json_begin_object(j, "paging");
	json_string(j, "mode", paging_kind_name(cfg->paging));
	if (!pg || !pg->uffd) {
		json_end_object(j);
		return;
	}
	s = &pg->total;
	span = fault_span_s(s);
	json_string(j, "uffd_mode", uffd_mode_name(uffd_mode(pg->uffd)));
	json_string(j, "resolve_ioctl", uffd_resolve_name(pg->uffd));
	json_string(j, "source", uffd_source(pg->uffd));
	json_u64(j, "page_bytes", uffd_page_bytes(pg->uffd));
	json_u64(j, "threads", uffd_threads(pg->uffd));
	json_u64(j, "delay_us", cfg->uffd_delay_us);
	json_string(j, "delay_method", uffd_delay_method(pg->uffd));
	json_bool(j, "started", pg->started);
	json_i64(j, "resident_at_start_bytes", uffd_resident_at_start(pg->uffd));
	if (uffd_mode(pg->uffd) == UFFD_MINOR)
		json_double(j, "page_cache_fill_s", uffd_fill_seconds(pg->uffd));
	json_u64(j, "faults", s->faults);
	json_u64(j, "bytes", s->faults * uffd_page_bytes(pg->uffd));
	json_u64(j, "pages_touched", s->pages);
	json_u64(j, "write_faults", s->write_faults);
	json_u64(j, "duplicates", s->duplicates);
	json_u64(j, "retries", s->retries);
	json_double(j, "wake_mean_ns",
		    s->faults ? (double)s->wake_ns / (double)s->faults : 0);
	if (s->faults) {
		json_double(j, "first_fault_ms",
			    ((double)s->first_ns - exec_ns) / NSEC_PER_MSEC);
		json_double(j, "last_fault_ms",
			    ((double)s->last_ns - exec_ns) / NSEC_PER_MSEC);
		json_double(j, "faults_per_s", span > 0 ? (double)s->faults / span : 0);
	}
	latency_json(j, "latency_ns", &s->lat);
	histogram_json(j, &s->lat);
	phases_json(pg, tl, j);
	json_begin_array(j, "per_thread");
	for (unsigned i = 0; i < uffd_threads(pg->uffd); i++) {
		struct uffd_stats t;

		uffd_stats(pg->uffd, i, &t);
		json_begin_object(j, NULL);
		json_u64(j, "thread", i);
		json_u64(j, "gpa", t.gpa);
		json_u64(j, "bytes", t.bytes);
		json_u64(j, "faults", t.faults);
		json_u64(j, "p50_ns", lat_percentile(&t.lat, 50));
		json_u64(j, "max_ns", t.lat.max_ns);
		json_end_object(j);
	}
	json_end_array(j);
	if (cfg->record_touch_path) {
		json_begin_object(j, "record_touch");
		json_string(j, "path", cfg->record_touch_path);
		json_u64(j, "pages", pg->recorded);
		if (pg->record_err)
			json_string(j, "error", strerror(-pg->record_err));
		json_end_object(j);
	}
	json_end_object(j);
}

/* --- --check-touch --------------------------------------------------------- */

int paging_check_touch(const struct config *cfg)
{
	struct touch_order o;
	char err[512];
	int r = touch_order_read(cfg->check_touch_path, cfg->mem_bytes, &o, err,
				 sizeof(err));

	if (r) {
		fprintf(stderr, "minivmm: --check-touch %s\n", err);
		return r == -ENOMEM ? EXIT_HOST : EXIT_USAGE;
	}
	printf("%s: %llu pages of %llu KiB in %zu ranges of first-touch order, for %llu MiB of guest RAM: ok\n",
	       cfg->check_touch_path, (unsigned long long)o.pages,
	       (unsigned long long)(o.page_bytes >> 10), o.nranges,
	       (unsigned long long)(o.ram_bytes >> 20));
	touch_order_free(&o);
	return EXIT_GUEST_OK;
}
