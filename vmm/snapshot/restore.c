/* Restoring a snapshot's vCPUs: each saved state set on a fresh vCPU before it first runs. */
#include "snapshot.h"

#include <errno.h>
#include <string.h>

int snapshot_set_vcpus(struct vm *vm, const struct snapshot *s, struct restore_facts *f,
		       char *err, size_t errlen)
{
	uint32_t skipped[VCPU_MSRS_MAX], n;
	double t0 = now_s();

	for (unsigned i = 0; i < vm_nvcpus(vm); i++) {
		int e = vm_vcpu_state_set(vm, i, s->v.vcpu[i], skipped, &n, err, errlen);

		if (e)
			return e;
		if (i == 0) {
			f->msrs_set = s->v.vcpu[0]->nmsrs - n;
			f->msrs_skipped = n;
			memcpy(f->skipped, skipped,
			       (n < ARRAY_SIZE(f->skipped) ? n : ARRAY_SIZE(f->skipped)) *
				       sizeof(skipped[0]));
		}
	}
	f->pass = s->v.cfg->guest_pass;
	f->guest_checksum = s->v.cfg->guest_checksum;
	f->state_s = now_s() - t0;
	return 0;
}
