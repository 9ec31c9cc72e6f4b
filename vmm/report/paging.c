/* --paging uffd: what the handlers measured, for people and in the results file. */
#include "report.h"

#include <string.h>

#define USEC_PER_NSEC 1e-3

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

/* The histogram in whole octaves [2^k, 2^(k+1)) ns (octave 0: [0, 2)). */
static void octaves(const struct lat_hist *h, uint64_t octave[64])
{
	memset(octave, 0, 64 * sizeof(*octave));
	for (unsigned i = 0; i < LAT_BUCKETS; i++) {
		uint64_t lo = lat_bucket_lo(i);

		octave[lo ? 63 - __builtin_clzll(lo) : 0] += h->b[i];
	}
}

#define BAR_WIDTH 40

/* The octaves from the first non-empty one to the last, a bar each. */
static void histogram_print(const struct lat_hist *h, FILE *f)
{
	uint64_t octave[64], total = 0, most = 0;
	int first = -1, last = -1;

	octaves(h, octave);
	for (int k = 0; k < 64; k++) {
		total += octave[k];
		most = octave[k] > most ? octave[k] : most;
		if (octave[k]) {
			first = first < 0 ? k : first;
			last = k;
		}
	}
	if (!total)
		return;
	fprintf(f,
		"paging: latency of each fault, event read to page installed (octaves):\n");
	fprintf(f, "%21s %10s %7s\n", "us", "faults", "share");
	for (int k = first; k <= last; k++) {
		double lo = k ? us(1ULL << k) : 0, hi = us(2ULL << k);
		int bar = (int)((octave[k] * BAR_WIDTH + most - 1) / most);

		fprintf(f, "  [%8.3g, %8.3g) %10llu %6.2f%% %.*s\n", lo, hi,
			(unsigned long long)octave[k],
			100.0 * (double)octave[k] / (double)total, bar,
			"########################################");
	}
}

/* A restore's memory file: what the handlers copied it from, and the fillers' work. */
static void fill_report(const struct paging_facts *pg, FILE *f)
{
	struct uffd_fill_stats fs;
	char a[FMT_BYTES], b[FMT_BYTES], c[FMT_BYTES];

	if (!*uffd_file_fs(pg->uffd))
		return;
	uffd_fill_stats(pg->uffd, &fs);
	fprintf(f,
		"paging: pages from the memory file (%s MiB of data, the rest holes: zeros)",
		fmt_value(a, (double)uffd_file_data_bytes(pg->uffd) / (1 << 20), 1));
	if (fs.reads || fs.pages || fs.failed)
		fprintf(f,
			"; fillers installed %llu pages (%llu of the recorded working set) in %llu reads of %s MiB, %llu found installed already; working set in %s ms, all in %s",
			(unsigned long long)fs.pages, (unsigned long long)fs.first_pages,
			(unsigned long long)fs.reads,
			fmt_value(b, (double)fs.read_bytes / (1 << 20), 1),
			(unsigned long long)fs.raced,
			fmt_value(c, fs.first_s * MSEC_PER_SEC, 1),
			fs.all_s > 0 ? fmt_duration(a, fs.all_s) : "- (not finished)");
	if (fs.failed)
		fprintf(f, "; %s", fs.what);
	fprintf(f, "\n");
}

void paging_report(const struct run_view *v, FILE *f)
{
	const struct vm_config *cfg = v->cfg;
	struct paging_facts pg;
	char a[FMT_BYTES], b[FMT_BYTES], c[FMT_BYTES], e[FMT_BYTES];
	const struct uffd_stats *s;
	const struct lat_hist *h;
	double span;
	unsigned n;

	if (paging_facts(v->paging, &pg) || !pg.total)
		return;
	cfg = pg.cfg;
	s = pg.total;
	h = &s->lat;
	span = fault_span_s(s);
	n = uffd_threads(pg.uffd);
	fprintf(f, "paging: uffd %s, %s (%s), %u handler thread%s",
		uffd_mode_name(uffd_mode(pg.uffd)), uffd_resolve_name(pg.uffd),
		uffd_source(pg.uffd), n, n == 1 ? "" : "s");
	if (cfg->uffd_delay_us)
		fprintf(f, ", each fault delayed %u us (%s)", cfg->uffd_delay_us,
			uffd_delay_method(pg.uffd));
	fprintf(f, ": %llu fault%s (%s MiB)", (unsigned long long)s->faults,
		s->faults == 1 ? "" : "s",
		fmt_value(a, (double)(s->faults * uffd_page_bytes(pg.uffd)) / (1 << 20),
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
	histogram_print(h, f);
	fill_report(&pg, f);
	if (cfg->record_touch_path)
		fprintf(f, "paging: %s: %s %zu pages in first-touch order\n",
			cfg->record_touch_path,
			pg.record_err ? "failed to write" : "wrote", pg.recorded);
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
	uint64_t octave[64];

	octaves(h, octave);
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
static void phases_json(const struct paging_facts *pg, const struct timeline *tl,
			struct json *j)
{
	struct lat_hist zero, d;
	const struct lat_hist *prev = &zero;
	unsigned n = timeline_count(tl);

	lat_init(&zero);
	json_begin_array(j, "per_phase");
	for (unsigned i = 0; i < n && i < pg->nsnap; i++) {
		double t, t0 = 0;
		enum phase name = timeline_phase(tl, i, &t, NULL);
		uint64_t pf, faults;

		if (i)
			timeline_phase(tl, i - 1, &t0, NULL);
		if (!pg->snapped[i])
			continue;
		lat_sub(&d, &pg->snap[i], prev);
		prev = &pg->snap[i];
		if (!lat_bucket_total(&d))
			continue;
		if (d.max_ns > pg->total->lat.max_ns)
			d.max_ns = pg->total->lat.max_ns;
		faults = lat_bucket_total(&d);
		json_begin_object(j, NULL);
		json_string(j, "phase", phase_name(name));
		json_ns(j, "dur_ms", timeline_ns(tl, t) - timeline_ns(tl, t0),
			NSEC_PER_MSEC);
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

static void fill_json(const struct paging_facts *pg, struct json *j)
{
	struct uffd_fill_stats fs;

	if (!*uffd_file_fs(pg->uffd))
		return;
	uffd_fill_stats(pg->uffd, &fs);
	json_begin_object(j, "memory_file");
	json_string(j, "file_system", uffd_file_fs(pg->uffd));
	json_u64(j, "data_bytes", uffd_file_data_bytes(pg->uffd));
	json_u64(j, "fill_reads", fs.reads);
	json_u64(j, "fill_read_bytes", fs.read_bytes);
	json_u64(j, "fill_pages", fs.pages);
	json_u64(j, "fill_working_set_pages", fs.first_pages);
	json_u64(j, "fill_raced", fs.raced);
	json_ms_signed(j, "fill_working_set_ms", fs.first_s * MSEC_PER_SEC);
	json_ms_signed(j, "fill_all_ms", fs.all_s * MSEC_PER_SEC);
	if (fs.failed)
		json_string(j, "fill_error", fs.what);
	json_end_object(j);
}

void paging_write_json(const struct run_view *v, struct json *j)
{
	const struct vm_config *cfg = v->cfg;
	const struct uffd_stats *s;
	struct paging_facts f, *pg = &f;
	int64_t exec_ns = ns_of_s(timeline_time(v->tl, PHASE_EXEC));
	double span;
	static const struct uffd_stats none;

	json_begin_object(j, "paging");
	if (paging_facts(v->paging, pg)) {
		json_string(j, "mode", paging_kind_name(cfg->paging));
		json_end_object(j);
		return;
	}
	cfg = pg->cfg;
	json_string(j, "mode", paging_kind_name(cfg->paging));
	s = pg->total ? pg->total : &none;
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
		json_seconds(j, "page_cache_fill_s", uffd_fill_seconds(pg->uffd));
	json_u64(j, "faults", s->faults);
	json_u64(j, "bytes", s->faults * uffd_page_bytes(pg->uffd));
	json_u64(j, "pages_touched", s->pages);
	json_u64(j, "write_faults", s->write_faults);
	json_u64(j, "duplicates", s->duplicates);
	json_u64(j, "retries", s->retries);
	json_double(j, "wake_mean_ns",
		    s->faults ? (double)s->wake_ns / (double)s->faults : 0);
	if (s->faults) {
		json_ns(j, "first_fault_ms", (int64_t)s->first_ns - exec_ns,
			NSEC_PER_MSEC);
		json_ns(j, "last_fault_ms", (int64_t)s->last_ns - exec_ns, NSEC_PER_MSEC);
		json_double(j, "faults_per_s", span > 0 ? (double)s->faults / span : 0);
	}
	latency_json(j, "latency_ns", &s->lat);
	histogram_json(j, &s->lat);
	if (pg->total)
		phases_json(pg, v->tl, j);
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
	fill_json(pg, j);
	if (cfg->record_touch_path) {
		json_begin_object(j, "record_touch");
		json_bytes(j, "path", cfg->record_touch_path);
		json_u64(j, "pages", pg->recorded);
		if (pg->record_err)
			json_string(j, "error", strerror(-pg->record_err));
		json_end_object(j);
	}
	json_end_object(j);
}
