/* A Linux workload's snapshot point (--snapshot-after N): the guest chooses it, as the minivmm guest's do. */
#ifndef SNAPPOINT_H
#define SNAPPOINT_H

#include <stddef.h>
#include <stdint.h>

struct snappoint {
	const volatile char *region;
	size_t bytes;
	uint64_t pass;	 /* passes done before it */
	uint64_t before; /* the checksum sent with the snapshot */
	uint32_t result; /* MVM_SNAP_* */
};

/*
 * After `pass` passes over [region, region + bytes): sign each page's word
 * 1 (a pass has written them), checksum the region and ask minivmm for a
 * snapshot (mvm_snapshot); says what came of it on stdout. Returns MVM_SNAP_*.
 */
uint32_t snappoint_take(struct snappoint *s, const char *name, volatile char *region,
			size_t bytes, uint64_t pass);
/*
 * At the workload's end, after a snapshot was taken or restored: the
 * region's checksum again, printed against the one sent. 0 when they match
 * (or there was no snapshot), -1 when they differ (said on stderr too).
 */
int snappoint_check(const struct snappoint *s, const char *name);

#endif /* SNAPPOINT_H */
