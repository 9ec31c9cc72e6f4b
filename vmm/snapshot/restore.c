/* Restoring a snapshot's vCPUs (each saved state set on a fresh vCPU before it first runs) and a PC's platform. */
#include "snapshot.h"

#include <errno.h>
#include <stdlib.h>
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

int snapshot_set_platform(struct vm *vm, const struct snapshot *s, struct console *con,
			  struct pc_devices *pc, char *err, size_t errlen)
{
	struct vm_pc_state *st;
	int e;

	if (!s->v.lx)
		return 0;
	st = malloc(sizeof(*st));
	if (!st) {
		snprintf(err, errlen, "out of memory for the PC platform's state");
		return -ENOMEM;
	}
	memcpy(st->chip, s->v.chips, sizeof(st->chip));
	st->pit = *s->v.pit;
	st->clock = *s->v.clock;
	e = vm_pc_state_set(vm, st, err, errlen);
	free(st);
	if (e)
		return e;
	/* After the interrupt controllers: a line saved high goes up again. */
	console_uart_set(con, &s->v.pcdev->com1);
	pc_devices_set(pc, &s->v.pcdev->pc);
	return 0;
}
