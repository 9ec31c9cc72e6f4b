/* KVM binary statistics (KVM_GET_STATS_FD): the VM's and every vCPU's counters. */
#include "measure.h"

#include "kvm_compat.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

/* One stats fd: its single-value descriptors (histograms are skipped). */
struct stats_src {
	int fd;
	struct kvm_stats_header h;
	uint32_t n;	  /* kept descriptors */
	uint32_t *offset; /* byte offset of each kept value in the data block */
	char (*name)[KVM_STATS_NAME_SIZE];
	uint8_t *type;
	uint64_t *data; /* the whole data block, read with one pread */
	size_t data_bytes;
};

static int src_open(int kvm_obj_fd, struct stats_src *s)
{
	size_t dsz;
	char *descs;
	uint32_t max_end = 0;

	memset(s, 0, sizeof(*s));
	s->fd = ioctl(kvm_obj_fd, KVM_GET_STATS_FD, NULL);
	if (s->fd < 0)
		return -errno;
	if (pread(s->fd, &s->h, sizeof(s->h), 0) != sizeof(s->h) || s->h.name_size == 0 ||
	    s->h.name_size > KVM_STATS_NAME_SIZE || s->h.num_desc > 4096)
		return -EINVAL;
	dsz = sizeof(struct kvm_stats_desc) + s->h.name_size;
	descs = malloc(dsz * s->h.num_desc);
	s->offset = calloc(s->h.num_desc, sizeof(*s->offset));
	s->name = calloc(s->h.num_desc, sizeof(*s->name));
	s->type = calloc(s->h.num_desc, sizeof(*s->type));
	if (!descs || !s->offset || !s->name || !s->type) {
		free(descs);
		return -ENOMEM;
	}
	if (pread(s->fd, descs, dsz * s->h.num_desc, s->h.desc_offset) !=
	    (ssize_t)(dsz * s->h.num_desc)) {
		free(descs);
		return -EIO;
	}
	for (uint32_t i = 0; i < s->h.num_desc; i++) {
		const struct kvm_stats_desc *d = (const void *)(descs + i * dsz);
		uint32_t end = d->offset + d->size * (uint32_t)sizeof(uint64_t);

		if (end > max_end)
			max_end = end;
		if (d->size != 1)
			continue;
		s->offset[s->n] = d->offset;
		s->type[s->n] = d->flags & KVM_STATS_TYPE_MASK;
		memcpy(s->name[s->n], d->name, s->h.name_size);
		s->name[s->n][KVM_STATS_NAME_SIZE - 1] = '\0';
		s->n++;
	}
	free(descs);
	s->data_bytes = max_end;
	s->data = malloc(s->data_bytes ? s->data_bytes : 1);
	return s->data ? 0 : -ENOMEM;
}

static void src_close(struct stats_src *s)
{
	if (s->fd > 0)
		close(s->fd);
	s->fd = -1;
}

static void src_free(struct stats_src *s)
{
	src_close(s);
	free(s->offset);
	free(s->name);
	free(s->type);
	free(s->data);
	memset(s, 0, sizeof(*s));
}

static int src_read(struct stats_src *s)
{
	return pread(s->fd, s->data, s->data_bytes, s->h.data_offset) ==
			       (ssize_t)s->data_bytes
		       ? 0
		       : -EIO;
}

static uint64_t src_value(const struct stats_src *s, uint32_t i)
{
	uint64_t v;

	memcpy(&v, (const char *)s->data + s->offset[i], sizeof(v));
	return v;
}

struct kvm_stats {
	struct stats_src vm;
	struct stats_src *vcpu;
	unsigned nvcpu;
	pthread_mutex_t lock; /* pread into shared buffers; last */
	uint64_t *last;	      /* kvmstats_since(): the counters at its previous call */
	int started;	      /* ... which there was */
	int fds[];	      /* the VM's, then the vCPUs': what a sandbox must allow */
};

int kvmstats_open(const struct vm *vm, struct kvm_stats **out)
{
	struct kvm_stats *st;
	int r;

	*out = NULL;
	if (!vm_platform(vm)->stats_fd)
		return -EOPNOTSUPP;
	st = calloc(1, sizeof(*st) + (1 + (size_t)vm_nvcpus(vm)) * sizeof(st->fds[0]));
	if (!st)
		return -ENOMEM;
	pthread_mutex_init(&st->lock, NULL);
	st->vcpu = calloc(vm_nvcpus(vm), sizeof(*st->vcpu));
	r = st->vcpu ? src_open(vm_fd(vm), &st->vm) : -ENOMEM;
	for (unsigned i = 0; !r && i < vm_nvcpus(vm); i++, st->nvcpu++)
		r = src_open(vm_vcpu_fd(vm, i), &st->vcpu[i]);
	if (!r && !(st->last = calloc(kvmstats_count(st), sizeof(*st->last))))
		r = -ENOMEM;
	if (r) {
		kvmstats_free(st);
		return r;
	}
	st->fds[0] = st->vm.fd;
	for (unsigned i = 0; i < st->nvcpu; i++)
		st->fds[1 + i] = st->vcpu[i].fd;
	*out = st;
	return 0;
}

void kvmstats_close(struct kvm_stats *st)
{
	if (!st)
		return;
	src_close(&st->vm);
	for (unsigned i = 0; i < st->nvcpu; i++)
		src_close(&st->vcpu[i]);
}

void kvmstats_free(struct kvm_stats *st)
{
	if (!st)
		return;
	src_free(&st->vm);
	for (unsigned i = 0; i < st->nvcpu; i++)
		src_free(&st->vcpu[i]);
	free(st->vcpu);
	free(st->last);
	free(st);
}

const int *kvmstats_fds(const struct kvm_stats *st, unsigned *n)
{
	*n = st ? 1 + st->nvcpu : 0;
	return st ? st->fds : NULL;
}

unsigned kvmstats_count(const struct kvm_stats *st)
{
	return st ? st->vm.n + (st->nvcpu ? st->vcpu[0].n : 0) : 0;
}

/* Stat i: the VM's first, then the vCPUs' (summed over vCPUs). */
const char *kvmstats_name(const struct kvm_stats *st, unsigned i, int *cumulative)
{
	const struct stats_src *s = i < st->vm.n ? &st->vm : &st->vcpu[0];
	unsigned k = i < st->vm.n ? i : i - st->vm.n;

	*cumulative = s->type[k] == KVM_STATS_TYPE_CUMULATIVE;
	return s->name[k];
}

int kvmstats_index(const struct kvm_stats *st, const char *name)
{
	int cum;

	for (unsigned i = 0; i < kvmstats_count(st); i++)
		if (!strcmp(kvmstats_name(st, i, &cum), name))
			return (int)i;
	return -1;
}

/* Every counter now, summed over the vCPUs; the caller holds st->lock. */
static int sample_locked(struct kvm_stats *st, uint64_t *out)
{
	int r = src_read(&st->vm);

	for (uint32_t i = 0; !r && i < st->vm.n; i++)
		out[i] = src_value(&st->vm, i);
	for (uint32_t i = 0; st->nvcpu && i < st->vcpu[0].n; i++)
		out[st->vm.n + i] = 0;
	for (unsigned c = 0; !r && c < st->nvcpu; c++) {
		r = src_read(&st->vcpu[c]);
		for (uint32_t i = 0; !r && i < st->vcpu[c].n && i < st->vcpu[0].n; i++)
			out[st->vm.n + i] += src_value(&st->vcpu[c], i);
	}
	return r;
}

int kvmstats_sample(struct kvm_stats *st, uint64_t *out)
{
	int r;

	if (!st)
		return -EOPNOTSUPP;
	pthread_mutex_lock(&st->lock);
	r = sample_locked(st, out);
	pthread_mutex_unlock(&st->lock);
	return r;
}

/*
 * Sampled and compared under one lock: a sample read outside it could be
 * older than the one another thread has just stored as `last`.
 */
int kvmstats_since(struct kvm_stats *st, uint64_t *out)
{
	unsigned n = kvmstats_count(st);
	int r, cum, first;

	if (!st)
		return -EOPNOTSUPP;
	pthread_mutex_lock(&st->lock);
	r = sample_locked(st, out);
	first = !st->started;
	for (unsigned k = 0; !r && k < n; k++) {
		uint64_t v = out[k];

		if (kvmstats_name(st, k, &cum) && cum)
			out[k] -= st->last[k];
		st->last[k] = v;
	}
	if (!r)
		st->started = 1;
	pthread_mutex_unlock(&st->lock);
	return r ? r : first;
}
