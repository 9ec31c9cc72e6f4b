/* A Linux workload's snapshot point: its memory's checksum, the snapshot call, the check at its end. */
#include "snappoint.h"

#include <stdio.h>
#include <time.h>

#include "mvm.h"
#include "mvm_checksum.h"

#define PAGE	    4096UL
#define SIGN_FACTOR 0x9e3779b97f4a7c15ULL
#define NS_PER_S    1e9

static double monotonic_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / NS_PER_S;
}

static uint64_t checksum(const volatile char *p, uint64_t bytes)
{
	return mvm_pages_checksum(p, bytes);
}

uint32_t snappoint_take(struct snappoint *s, const char *name, volatile char *region,
			size_t bytes, uint64_t pass)
{
	double t0, t1;

	/* Pages a pass has written get a word of their own (word 1): a lost or misplaced page shows. */
	if (pass > 0)
		for (size_t off = 0; off < bytes; off += PAGE)
			*(volatile uint64_t *)(region + off + sizeof(uint64_t)) =
				((uintptr_t)region + off) * SIGN_FACTOR;
	s->region = region;
	s->bytes = bytes;
	s->pass = pass;
	s->before = checksum(region, bytes);
	t0 = monotonic_s();
	s->result = mvm_snapshot(s->before, pass);
	t1 = monotonic_s();
	/* The guest's clock across the call: a restored one must neither go back nor stand still. */
	if (s->result == MVM_SNAP_RESTORED)
		printf("%s: restored after pass %lu; CLOCK_MONOTONIC moved %+.6f s across the snapshot\n",
		       name, (unsigned long)pass, t1 - t0);
	else if (s->result == MVM_SNAP_TAKEN)
		printf("%s: snapshot taken after pass %lu, running on\n", name,
		       (unsigned long)pass);
	else if (s->result == MVM_SNAP_REFUSED)
		printf("%s: snapshot refused after pass %lu, running on\n", name,
		       (unsigned long)pass);
	return s->result;
}

int snappoint_check(const struct snappoint *s, const char *name)
{
	uint64_t after;

	if (s->result != MVM_SNAP_RESTORED && s->result != MVM_SNAP_TAKEN)
		return 0;
	after = checksum(s->region, s->bytes);
	printf("%s: memory checksum 0x%llx before the snapshot, 0x%llx %s: %s\n", name,
	       (unsigned long long)s->before, (unsigned long long)after,
	       s->result == MVM_SNAP_RESTORED ? "after the restore" : "running on",
	       after == s->before ? "match" : "MISMATCH");
	if (after == s->before)
		return 0;
	fprintf(stderr,
		"%s: memory checksum 0x%llx after the %s differs from 0x%llx before the snapshot\n",
		name, (unsigned long long)after,
		s->result == MVM_SNAP_RESTORED ? "restore" : "snapshot",
		(unsigned long long)s->before);
	return -1;
}
