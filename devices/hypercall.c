/* The hypercall port: one table row per hypercall (size, check, handler), from the ABI's list. */
#include "devices.h"

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static int violation(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int violation(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/*
 * Checks: after the copy, before any handler. They see only the copy (never
 * guest memory twice) and guarantee every guest range a handler will touch
 * lies in guest RAM. 0, or -EINVAL with the violation in err.
 */
static const uint32_t rec_size[] = {
	[MVM_REC_SWEEP] = sizeof(struct mvm_rec_sweep),
	[MVM_REC_TOUCH] = sizeof(struct mvm_rec_touch),
	[MVM_REC_PROGRESS] = sizeof(struct mvm_rec_progress),
	[MVM_REC_ORDER] = sizeof(struct mvm_rec_order),
};
_Static_assert(ARRAY_SIZE(rec_size) == MVM_REC_COUNT, "a size for every record kind");

static int check_console(const struct guest_ram *ram, unsigned nvcpus, struct hc_call *c,
			 char *err, size_t errlen)
{
	const struct mvm_hc_console *a = &c->a.console;

	if (a->len > MVM_CONSOLE_MAX_BYTES)
		return violation(err, errlen, "console write of %llu bytes (limit %u)",
				 (unsigned long long)a->len, MVM_CONSOLE_MAX_BYTES);
	if (!mm_gpa_to_hva(ram, a->buf_gpa, a->len))
		return violation(
			err, errlen, "console buffer 0x%llx+%llu is outside guest RAM",
			(unsigned long long)a->buf_gpa, (unsigned long long)a->len);
	return 0;
}

static int check_exit(const struct guest_ram *ram, unsigned nvcpus, struct hc_call *c,
		      char *err, size_t errlen)
{
	return 0; /* any status */
}

static int check_abort(const struct guest_ram *ram, unsigned nvcpus, struct hc_call *c,
		       char *err, size_t errlen)
{
	c->a.abort.file[sizeof(c->a.abort.file) - 1] = '\0';
	c->a.abort.msg[sizeof(c->a.abort.msg) - 1] = '\0';
	return 0;
}

/* What the report would write of a record: each field the schema names is one it knows. */
static int known_workload(uint32_t w)
{
	return w == MVM_WL_SWEEP || w == MVM_WL_FLAT || w == MVM_WL_PERM;
}

static int check_vcpu(uint32_t v, unsigned nvcpus, int all_ok, uint32_t i, char *err,
		      size_t errlen)
{
	if (v < nvcpus || (all_ok && v == MVM_VCPU_ALL))
		return 0;
	return violation(err, errlen, "record %u: vCPU %u, the guest has %u", i, v,
			 nvcpus);
}

/* One measurement (the batch's all-vCPU and per-vCPU records): same workload, iteration, size, mode. */
static int check_rec_sweep(const struct mvm_rec_sweep *r, uint32_t n, unsigned nvcpus,
			   char *err, size_t errlen)
{
	for (uint32_t i = 0; i < n; i++) {
		const struct mvm_rec_sweep *s = &r[i];

		if (!known_workload(s->workload))
			return violation(
				err, errlen,
				"sweep record %u: unknown workload %u (1 sweep, 2 flat, 3 perm)",
				i, s->workload);
		if (s->mode != MVM_MODE_DEMAND &&
		    (s->mode != MVM_MODE_POPULATE || s->workload != MVM_WL_SWEEP))
			return violation(
				err, errlen,
				"sweep record %u: mode %u for workload %u (1 demand; 2 populate, sweep only)",
				i, s->mode, s->workload);
		if (!s->iteration || !s->size_mib)
			return violation(
				err, errlen,
				"sweep record %u: iteration %u, size %u MiB (both count from 1)",
				i, s->iteration, s->size_mib);
		if (check_vcpu(s->vcpu, nvcpus, 1, i, err, errlen))
			return -EINVAL;
		if (s->workload != r[0].workload || s->iteration != r[0].iteration ||
		    s->size_mib != r[0].size_mib || s->mode != r[0].mode)
			return violation(
				err, errlen,
				"sweep record %u is of another measurement than record 0 (a batch is one)",
				i);
	}
	return 0;
}

static int check_rec_touch(const struct mvm_rec_touch *r, uint32_t n, unsigned nvcpus,
			   char *err, size_t errlen)
{
	if (n > nvcpus + 1)
		return violation(
			err, errlen,
			"%u touch records for %u vCPUs (one each and one for all)", n,
			nvcpus);
	for (uint32_t i = 0; i < n; i++) {
		if (check_vcpu(r[i].vcpu, nvcpus, 1, i, err, errlen))
			return -EINVAL;
		if (r[i].start_gpa > r[i].end_gpa)
			return violation(
				err, errlen,
				"touch record %u: its slice ends before it starts", i);
		for (uint32_t k = 0; k < i; k++) /* n <= nvcpus + 1: few */
			if (r[k].vcpu == r[i].vcpu)
				return violation(
					err, errlen,
					"touch record %u: a second one for the same vCPU as record %u (one each and one for all)",
					i, k);
	}
	return 0;
}

static int check_rec_progress(const struct mvm_rec_progress *r, uint32_t n,
			      unsigned nvcpus, char *err, size_t errlen)
{
	for (uint32_t i = 0; i < n; i++) {
		if (check_vcpu(r[i].vcpu, nvcpus, 0, i, err, errlen))
			return -EINVAL;
		if (r[i].bytes_done > r[i].bytes_total)
			return violation(err, errlen,
					 "progress record %u: %llu bytes done of %llu", i,
					 (unsigned long long)r[i].bytes_done,
					 (unsigned long long)r[i].bytes_total);
	}
	return 0;
}

static int check_rec_order(const struct mvm_rec_order *r, uint32_t n, unsigned nvcpus,
			   char *err, size_t errlen)
{
	for (uint32_t i = 0; i < n; i++) {
		if (check_vcpu(r[i].vcpu, nvcpus, 0, i, err, errlen))
			return -EINVAL;
		if (!known_workload(r[i].workload))
			return violation(err, errlen,
					 "order record %u: unknown workload %u", i,
					 r[i].workload);
		if (r[i].order < MVM_ORDER_SEQUENTIAL || r[i].order > MVM_ORDER_BLOCKS)
			return violation(
				err, errlen,
				"order record %u: unknown order %u (1 sequential, 2 random, 3 stride, 4 blocks)",
				i, r[i].order);
		if (r[i].start_gpa > r[i].end_gpa)
			return violation(
				err, errlen,
				"order record %u: its pages end before they start", i);
	}
	return 0;
}

int hc_records_check(uint32_t kind, const void *recs, uint32_t n, unsigned nvcpus,
		     char *err, size_t errlen)
{
	if (kind == 0 || kind >= ARRAY_SIZE(rec_size))
		return violation(err, errlen, "unknown record kind %u", kind);
	if (n > MVM_RECORDS_MAX)
		return violation(err, errlen, "%u records in one call (limit %u)", n,
				 MVM_RECORDS_MAX);
	switch (kind) {
	case MVM_REC_SWEEP:
		return check_rec_sweep(recs, n, nvcpus, err, errlen);
	case MVM_REC_TOUCH:
		return check_rec_touch(recs, n, nvcpus, err, errlen);
	case MVM_REC_PROGRESS:
		return check_rec_progress(recs, n, nvcpus, err, errlen);
	default:
		return check_rec_order(recs, n, nvcpus, err, errlen);
	}
}

/* Copy the records out of the guest once, then check the copy: the handler passes on only it. */
static int check_records(const struct guest_ram *ram, unsigned nvcpus, struct hc_call *c,
			 char *err, size_t errlen)
{
	const struct mvm_hc_records *a = &c->a.records;
	const void *src;
	uint64_t bytes;

	if (a->kind == 0 || a->kind >= ARRAY_SIZE(rec_size))
		return violation(err, errlen, "unknown record kind %u", a->kind);
	if (a->count > MVM_RECORDS_MAX)
		return violation(err, errlen, "%u records in one call (limit %u)",
				 a->count, MVM_RECORDS_MAX);
	bytes = (uint64_t)a->count * rec_size[a->kind];
	src = mm_gpa_to_hva(ram, a->recs_gpa, bytes);
	if (!src)
		return violation(
			err, errlen, "records at 0x%llx+%llu are outside guest RAM",
			(unsigned long long)a->recs_gpa, (unsigned long long)bytes);
	memcpy(&c->recs, src, bytes);
	return hc_records_check(a->kind, &c->recs, a->count, nvcpus, err, errlen);
}

static int check_park(const struct guest_ram *ram, unsigned nvcpus, struct hc_call *c,
		      char *err, size_t errlen)
{
	return 0; /* no arguments */
}

/* Copy the runs out of the guest and check each is page-aligned guest RAM. */
static int check_zero(const struct guest_ram *ram, unsigned nvcpus, struct hc_call *c,
		      char *err, size_t errlen)
{
	const struct mvm_hc_zero *z = &c->a.zero;
	const void *src;

	if (z->count > MVM_ZERO_RUNS_MAX)
		return violation(err, errlen, "%u zero runs in one call (limit %u)",
				 z->count, MVM_ZERO_RUNS_MAX);
	src = mm_gpa_to_hva(ram, z->runs_gpa, (uint64_t)z->count * sizeof(c->runs[0]));
	if (!src)
		return violation(err, errlen, "zero runs at 0x%llx are outside guest RAM",
				 (unsigned long long)z->runs_gpa);
	memcpy(c->runs, src, z->count * sizeof(c->runs[0]));
	for (uint32_t i = 0; i < z->count; i++) {
		uint64_t bytes;

		if ((c->runs[i].gpa & (MVM_PAGE_BYTES - 1)) ||
		    __builtin_mul_overflow(c->runs[i].pages, MVM_PAGE_BYTES, &bytes) ||
		    !mm_gpa_to_hva(ram, c->runs[i].gpa, bytes))
			return violation(
				err, errlen,
				"zero run %u (0x%llx, %llu pages) is not page-aligned guest RAM",
				i, (unsigned long long)c->runs[i].gpa,
				(unsigned long long)c->runs[i].pages);
	}
	return 0;
}

static int check_mark(const struct guest_ram *ram, unsigned nvcpus, struct hc_call *c,
		      char *err, size_t errlen)
{
	if (c->a.mark.mark == 0 || c->a.mark.mark >= MVM_MARK_COUNT)
		return violation(err, errlen, "unknown phase mark %u", c->a.mark.mark);
	return 0;
}

static int check_snapshot(const struct guest_ram *ram, unsigned nvcpus, struct hc_call *c,
			  char *err, size_t errlen)
{
	if (c->a.snapshot.vcpu >= nvcpus)
		return violation(err, errlen,
				 "snapshot asked by vCPU %u, the guest has %u",
				 c->a.snapshot.vcpu, nvcpus);
	return 0;
}

/* Handlers: act on a checked call. DEV_STOP ends this vCPU's run loop. */

static enum dev_action hc_console(const struct dev_host *h, unsigned vcpu,
				  const struct hc_call *c)
{
	const struct mvm_hc_console *a = &c->a.console;

	console_write(h->console, mm_gpa_to_hva(h->ram, a->buf_gpa, a->len), a->len);
	return DEV_CONTINUE;
}

static enum dev_action hc_exit(const struct dev_host *h, unsigned vcpu,
			       const struct hc_call *c)
{
	h->exit(h->cookie, vcpu, c->a.exit.status);
	return DEV_STOP;
}

static enum dev_action hc_abort(const struct dev_host *h, unsigned vcpu,
				const struct hc_call *c)
{
	const struct mvm_hc_abort *a = &c->a.abort;
	char what[sizeof(a->msg) + sizeof(a->file) + 128];
	char where[96] = "", fault[40] = "";

	if (a->vector == 14) /* #PF: CR2 too */
		snprintf(fault, sizeof(fault), ", fault address 0x%llx",
			 (unsigned long long)a->cr2);
	if (a->vector != MVM_ABORT_NO_VECTOR)
		snprintf(where, sizeof(where), " (vector %u, error 0x%llx, rip 0x%llx%s)",
			 a->vector, (unsigned long long)a->error_code,
			 (unsigned long long)a->rip, fault);
	snprintf(what, sizeof(what), "%s%s at %s:%u", a->msg, where, a->file, a->line);
	h->abort(h->cookie, vcpu, what);
	return DEV_STOP;
}

static enum dev_action hc_records(const struct dev_host *h, unsigned vcpu,
				  const struct hc_call *c)
{
	const struct mvm_hc_records *a = &c->a.records;

	return h->records(h->cookie, vcpu, a->kind, &c->recs, a->count) ? DEV_STOP
									: DEV_CONTINUE;
}

static enum dev_action hc_park(const struct dev_host *h, unsigned vcpu,
			       const struct hc_call *c)
{
	return DEV_STOP; /* this vCPU's thread ends; the VM runs on */
}

/*
 * One call may name all of guest RAM 256 times over: it is cleared a chunk
 * at a time, and once the run is ending (--timeout, a signal, another vCPU)
 * the rest is left undone, so a call never holds up the end of the run.
 */
#define ZERO_CHUNK_BYTES (2ULL << 20)

static enum dev_action hc_zero(const struct dev_host *h, unsigned vcpu,
			       const struct hc_call *c)
{
	for (uint32_t i = 0; i < c->a.zero.count; i++) {
		uint64_t bytes = c->runs[i].pages * MVM_PAGE_BYTES;
		char *p = mm_gpa_to_hva(h->ram, c->runs[i].gpa, bytes);

		for (uint64_t off = 0; off < bytes; off += ZERO_CHUNK_BYTES) {
			if (h->stopping(h->cookie))
				return DEV_STOP;
			memset(p + off, 0,
			       bytes - off < ZERO_CHUNK_BYTES ? bytes - off
							      : ZERO_CHUNK_BYTES);
		}
	}
	return DEV_CONTINUE;
}

static enum dev_action hc_mark(const struct dev_host *h, unsigned vcpu,
			       const struct hc_call *c)
{
	h->mark(h->cookie, vcpu, c->a.mark.mark, c->a.mark.tsc);
	return DEV_CONTINUE;
}

/* The result goes into the guest's own struct: hc_decode checked it is guest RAM. */
static enum dev_action hc_snapshot(const struct dev_host *h, unsigned vcpu,
				   const struct hc_call *c)
{
	uint64_t at = c->gpa + offsetof(struct mvm_hc_snapshot, result);
	int stop = 0;
	uint32_t result = h->snapshot(h->cookie, vcpu, &c->a.snapshot, at, &stop);

	memcpy(mm_gpa_to_hva(h->ram, at, sizeof(result)), &result, sizeof(result));
	return stop ? DEV_STOP : DEV_CONTINUE;
}

struct hc_row {
	const char *name;
	uint32_t size;
	int (*check)(const struct guest_ram *ram, unsigned nvcpus, struct hc_call *c,
		     char *err, size_t errlen);
	enum dev_action (*handle)(const struct dev_host *h, unsigned vcpu,
				  const struct hc_call *c);
};

/*
 * One row per entry of MVM_HC_LIST, indexed by number: a listed hypercall
 * without check_NAME and hc_NAME does not compile, and neither does a number
 * left out of the list or an argument struct the copy cannot hold.
 */
#define HC_ROW(name, nr, type) [nr] = { #name, sizeof(type), check_##name, hc_##name },
static const struct hc_row rows[] = { MVM_HC_LIST(HC_ROW) };
#define HC_ONE(name, nr, type) +1
_Static_assert(0 MVM_HC_LIST(HC_ONE) == MVM_HC_COUNT - 1,
	       "every hypercall number 1..MVM_HC_COUNT-1 is in MVM_HC_LIST");
_Static_assert(ARRAY_SIZE(rows) == MVM_HC_COUNT, "MVM_HC_LIST ends at MVM_HC_COUNT - 1");
_Static_assert(sizeof(union hc_args) == MVM_HC_ARGS_MAX,
	       "an argument struct is larger than MVM_HC_ARGS_MAX");

const char *hc_name(uint32_t nr)
{
	return nr > 0 && nr < ARRAY_SIZE(rows) ? rows[nr].name : NULL;
}

int hc_decode(const struct guest_ram *ram, unsigned nvcpus, uint64_t gpa,
	      struct hc_call *out, char *err, size_t errlen)
{
	const void *p = mm_gpa_to_hva(ram, gpa, sizeof(struct mvm_hc_hdr));
	const struct hc_row *row;

	if (!p) {
		violation(err, errlen,
			  "hypercall arguments at 0x%llx are outside guest RAM",
			  (unsigned long long)gpa);
		return -EFAULT;
	}
	memcpy(&out->a.hdr, p, sizeof(out->a.hdr));
	if (!hc_name(out->a.hdr.nr))
		return violation(err, errlen, "unknown hypercall number %u",
				 out->a.hdr.nr);
	row = &rows[out->a.hdr.nr];
	if (out->a.hdr.size != row->size)
		return violation(err, errlen, "hypercall %u (%s): size %u, expected %u",
				 out->a.hdr.nr, row->name, out->a.hdr.size, row->size);
	p = mm_gpa_to_hva(ram, gpa, row->size);
	if (!p) {
		violation(err, errlen,
			  "hypercall %u (%s): arguments at 0x%llx run past guest RAM",
			  out->a.hdr.nr, row->name, (unsigned long long)gpa);
		return -EFAULT;
	}
	/* One copy: later checks cannot be raced by another vCPU changing the struct. */
	memcpy(&out->a, p, row->size);
	out->gpa = gpa;
	return row->check(ram, nvcpus, out, err, errlen);
}

/* The port: one 32-bit OUT of the argument struct's guest-physical address. */
static enum dev_action hc_io(void *cookie, unsigned vcpu, uint64_t port, int is_write,
			     uint8_t *data, unsigned size)
{
	const struct dev_host *h = cookie;
	struct hc_call c;
	char err[256], what[320];
	uint32_t gpa;

	if (!is_write || size != 4) {
		snprintf(what, sizeof(what),
			 "hypercall port %s of size %u (expected a 32-bit write)",
			 is_write ? "write" : "read", size);
		h->violation(h->cookie, vcpu, what);
		return DEV_STOP;
	}
	memcpy(&gpa, data, sizeof(gpa));
	if (hc_decode(h->ram, h->nvcpus, gpa, &c, err, sizeof(err))) {
		h->violation(h->cookie, vcpu, err);
		return DEV_STOP;
	}
	return rows[c.a.hdr.nr].handle(h, vcpu, &c);
}

int hypercalls_register(const struct dev_host *host, struct io_bus *pio)
{
	const struct io_dev dev = { "hypercall", MVM_HC_PORT, 4, hc_io, (void *)host };

	return io_bus_register(pio, &dev);
}
