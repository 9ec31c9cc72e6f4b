/* The touch frontier of a first pass: points taken in the timed loop, sent after it. */
#include "guest.h"

#define MIB	       (1UL << 20)
#define PAGE	       4096UL
#define BOOKEND_POINTS 2 /* the start (0 bytes) and the end (all of them) */

uint64_t progress_stride(uint64_t total, uint64_t asked_mib)
{
	uint64_t s = MIB;

	if (asked_mib != PROGRESS_AUTO)
		return asked_mib * MIB;
	while ((total + s - 1) / s > PROGRESS_AUTO_POINTS)
		s *= 2;
	return s;
}

uint64_t frontier_room(uint64_t total, uint64_t stride)
{
	return stride ? total / stride + BOOKEND_POINTS : 0;
}

struct mvm_rec_progress *progress_buffer(uint32_t n, uint64_t room)
{
	uint64_t bytes = n * room * sizeof(struct mvm_rec_progress);
	struct mvm_rec_progress *buf = bytes ? phys_region(bytes) : NULL;

	if (buf)
		memset(buf, 0, bytes);
	return buf;
}

void frontier_init(struct frontier *f, struct mvm_rec_progress *buf, uint32_t vcpu,
		   uint64_t total, uint64_t stride)
{
	*f = (struct frontier){
		.pt = buf, .vcpu = vcpu, .stride = stride, .total = total, .iteration = 1
	};
	f->next = stride;
}

void frontier_restart(struct frontier *f, uint32_t iteration)
{
	frontier_init(f, f->pt, f->vcpu, f->total, f->stride);
	f->iteration = iteration;
}

/* Write 0xfe (as OSv does) or read one byte per 4 KiB page: the loop the tables time. */
void pages_touch(volatile char *p, uint64_t bytes, int v)
{
	char sink = 0;

	if (v == TOUCH_READ) {
		for (uint64_t off = 0; off < bytes; off += PAGE)
			sink ^= p[off];
		__asm__ volatile("" : : "r"(sink));
		return;
	}
	for (uint64_t off = 0; off < bytes; off += PAGE)
		p[off] = (char)v;
}

/*
 * The inner loop is pages_touch's: between two points it runs
 * untouched; a point costs one TSC read and one store to guest memory. The
 * first call takes the start point, the call that completes the pass the
 * end point (unless a stride point fell there).
 */
void frontier_touch(struct frontier *f, volatile char *p, uint64_t bytes, int v)
{
	uint64_t off = 0;

	if (!f->stride) {
		pages_touch(p, bytes, v);
		return;
	}
	if (!f->n)
		frontier_mark(f, 0, 0);
	while (off < bytes) {
		uint64_t end = f->next - f->done < bytes - off ? off + (f->next - f->done)
							       : bytes;
		uint64_t done = f->done + (end - off);

		pages_touch(p + off, end - off, v);
		off = end;
		f->done = done;
		if (done == f->next) {
			frontier_mark(f, done, (uintptr_t)(p + end - PAGE));
			f->next += f->stride;
		}
	}
	if (f->done == f->total && f->pt[f->n - 1].bytes_done != f->total)
		frontier_mark(f, f->total, (uintptr_t)(p + bytes - PAGE));
}

/* In batches of at most MVM_RECORDS_MAX: one exit each, after every timed region. */
void progress_send(const struct mvm_rec_order *orders, const struct frontier *fs,
		   uint32_t n)
{
	send_records(MVM_REC_ORDER, orders, n);
	for (uint32_t v = 0; v < n; v++)
		for (uint32_t i = 0; i < fs[v].n; i += MVM_RECORDS_MAX) {
			uint32_t k = fs[v].n - i < MVM_RECORDS_MAX ? fs[v].n - i
								   : MVM_RECORDS_MAX;

			send_records(MVM_REC_PROGRESS, &fs[v].pt[i], k);
		}
}
