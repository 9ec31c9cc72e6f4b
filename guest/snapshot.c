/* A workload's snapshot point: its memory's checksum, the snapshot call, and the check after a restore. */
#include "guest.h"
#include "mvm_checksum.h"

#define PAGE	    4096UL
#define SIGN_FACTOR 0x9e3779b97f4a7c15ULL

/* The snapshot this run took: what the restored (or continuing) guest checks. */
static struct {
	const volatile char *region;
	uint64_t bytes;
	uint64_t before; /* the checksum sent with the snapshot */
	uint32_t result; /* MVM_SNAP_* */
} snap;

static uint64_t checksum(const volatile char *p, uint64_t bytes)
{
	return mvm_pages_checksum(p, bytes);
}

int snapshot_plan(const struct ctx *c, uint64_t *after, uint64_t iterations)
{
	/*
	 * snap's page is touched now, before the passes: snapshot_check reads it
	 * at the end, and a first touch there would be the warm pass's fault.
	 */
	snap.result = MVM_SNAP_NONE;
	if (*after == SNAP_AFTER_NONE) {
		*after = c->info->snapshot ? 0 : SNAP_AFTER_NONE;
		return 0;
	}
	if (*after > iterations) {
		printf("guest: %s: --snapshot-after %lu is past its %lu iteration%s\n",
		       c->argv[0], *after, iterations, iterations == 1 ? "" : "s");
		return -1;
	}
	return 0;
}

uint32_t snapshot_take(const struct ctx *c, volatile char *region, uint64_t bytes,
		       uint64_t pass)
{
	/* Pages a pass has written get a word of their own (word 1): a lost or misplaced page shows. */
	if (pass > 0)
		for (uint64_t off = 0; off < bytes; off += PAGE)
			*(volatile uint64_t *)(region + off + sizeof(uint64_t)) =
				((uintptr_t)region + off) * SIGN_FACTOR;
	snap.region = region;
	snap.bytes = bytes;
	snap.before = checksum(region, bytes);
	flush();
	snap.result = (uint32_t)sys3(SYS_SNAPSHOT, (long)snap.before, (long)pass, 0);
	if (snap.result == MVM_SNAP_RESTORED)
		printf("%s: restored after pass %lu\n", c->argv[0], pass);
	else if (snap.result == MVM_SNAP_TAKEN)
		printf("%s: snapshot taken after pass %lu, running on\n", c->argv[0],
		       pass);
	else if (snap.result == MVM_SNAP_REFUSED)
		printf("%s: snapshot refused after pass %lu, running on\n", c->argv[0],
		       pass);
	return snap.result;
}

void snapshot_check(const struct ctx *c)
{
	uint64_t after;

	if (snap.result != MVM_SNAP_RESTORED && snap.result != MVM_SNAP_TAKEN)
		return;
	after = checksum(snap.region, snap.bytes);
	printf("%s: memory checksum 0x%lx before the snapshot, 0x%lx %s: %s\n",
	       c->argv[0], snap.before, after,
	       snap.result == MVM_SNAP_RESTORED ? "after the restore" : "running on",
	       after == snap.before ? "match" : "MISMATCH");
	if (after != snap.before)
		FAIL("memory checksum 0x%lx after the %s differs from 0x%lx before the snapshot",
		     after, snap.result == MVM_SNAP_RESTORED ? "restore" : "snapshot",
		     snap.before);
}

void snapshot_restarted(struct frontier *fr, uint32_t n, uint64_t *useful_at,
			uint64_t pass, uint64_t iterations)
{
	*useful_at = pass + 1;
	for (uint32_t v = 0; v < n; v++)
		frontier_restart(&fr[v], (uint32_t)*useful_at);
	if (pass == iterations)
		mark(MVM_MARK_FIRST_USEFUL_WORK);
}
