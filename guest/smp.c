/* CPL3 multiprocessor helpers: barriers and the --eager=touch pass. */
#include "guest.h"

void barrier_wait(struct barrier *b, uint32_t n)
{
	uint32_t gen = __atomic_load_n(&b->gen, __ATOMIC_ACQUIRE);

	if (__atomic_add_fetch(&b->count, 1, __ATOMIC_ACQ_REL) == n) {
		__atomic_store_n(&b->count, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&b->gen, gen + 1, __ATOMIC_RELEASE);
		return;
	}
	/* Native at CPL3: spinning costs a host CPU, not an exit. */
	while (__atomic_load_n(&b->gen, __ATOMIC_ACQUIRE) == gen)
		__builtin_ia32_pause();
}

static struct barrier touch_barrier;
static struct mvm_rec_touch touch_recs[FW_MAX_VCPUS + 1];

/*
 * vCPU cpu's slice of RAM: with --numa the slice of its node's range that
 * the boot info gives it (the node's i-th vCPU, the i-th mvm_slice), else
 * the cpu-th mvm_slice of all of RAM. 2 MiB units.
 */
static void own_slice(const struct fw_info *info, uint32_t cpu, uint64_t *start,
		      uint64_t *end)
{
	for (uint32_t k = 0; k < info->numa_nodes; k++) {
		const struct fw_numa_node *n = &info->numa[k];

		if (cpu >= n->vcpu0 && cpu - n->vcpu0 < n->nvcpus) {
			mvm_slice(n->bytes, n->nvcpus, cpu - n->vcpu0, 2ULL << 20, start,
				  end);
			*start += n->gpa;
			*end += n->gpa;
			return;
		}
	}
	mvm_slice(info->mem_bytes, info->vcpus, cpu, 2ULL << 20, start, end);
}

/*
 * --eager=touch: every vCPU writes one byte of every page of its slice of
 * guest RAM (with --numa, on its own node) through the firmware's direct
 * map, at CPL3 (native on PVM), before the workload starts. Under shadow paging this is the only way to
 * build the hypervisor's entries ahead of time. The write is an atomic
 * no-op (LOCK OR 0), so live data in the slice is left as it was. Page 0 is
 * never mapped (NULL stays a fault) and is skipped. vCPU 0 reports.
 */
void eager_touch(const struct ctx *c)
{
	uint32_t n = c->info->vcpus;
	struct mvm_rec_touch *r = &touch_recs[c->cpu];
	uint64_t start, end, t0, t1, all0 = 0;

	own_slice(c->info, c->cpu, &start, &end);
	barrier_wait(&touch_barrier, n);
	if (c->cpu == 0)
		all0 = rdtsc();
	t0 = rdtsc();
	*r = (struct mvm_rec_touch){ .vcpu = c->cpu, .start_gpa = start, .end_gpa = end };
	for (uint64_t pa = start ? start : 4096; pa < end; pa += 4096) {
		__asm__ volatile("lock orb $0, (%0)" : : "r"(pa) : "memory");
		r->pages++;
	}
	t1 = rdtsc();
	r->cycles = t1 - t0;
	barrier_wait(&touch_barrier, n);
	if (c->cpu != 0)
		return;
	touch_recs[n] = (struct mvm_rec_touch){ .vcpu = MVM_VCPU_ALL,
						.end_gpa = c->info->mem_bytes,
						.cycles = rdtsc() - all0 };
	for (uint32_t i = 0; i < n; i++)
		touch_recs[n].pages += touch_recs[i].pages;
	send_records(MVM_REC_TOUCH, touch_recs, n + 1);
}
