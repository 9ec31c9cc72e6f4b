/* The snapshot's state file: a header, then sections (config, vCPUs, records, console, a PC's), checksummed. */
#include "snapshot.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FNV64_BASIS   0xcbf29ce484222325ULL
#define FNV64_PRIME   0x100000001b3ULL
#define SECTION_ALIGN 8
#define BUF_START     (64 * 1024)

static uint64_t fnv(uint64_t h, const void *p, size_t len)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < len; i++)
		h = (h ^ b[i]) * FNV64_PRIME;
	return h;
}

uint64_t snap_state_checksum(const uint8_t *buf, size_t len)
{
	const size_t at = offsetof(struct snap_header, checksum);
	const uint64_t zero = 0;
	uint64_t h = fnv(FNV64_BASIS, buf, at);

	h = fnv(h, &zero, sizeof(zero));
	return fnv(h, buf + at + sizeof(zero), len - at - sizeof(zero));
}

uint32_t snap_record_size(uint32_t kind)
{
	switch (kind) {
	case MVM_REC_SWEEP:
		return sizeof(struct mvm_rec_sweep);
	case MVM_REC_TOUCH:
		return sizeof(struct mvm_rec_touch);
	case MVM_REC_PROGRESS:
		return sizeof(struct mvm_rec_progress);
	case MVM_REC_ORDER:
		return sizeof(struct mvm_rec_order);
	default:
		return 0;
	}
}

static size_t aligned(size_t n)
{
	return (n + SECTION_ALIGN - 1) & ~(size_t)(SECTION_ALIGN - 1);
}

static int reserve(struct snap_buf *b, size_t more)
{
	size_t cap = b->cap ? b->cap : BUF_START;
	uint8_t *p;

	while (cap - b->len < more)
		cap *= 2;
	if (cap == b->cap)
		return 0;
	p = realloc(b->p, cap);
	if (!p)
		return -ENOMEM;
	memset(p + b->cap, 0, cap - b->cap);
	b->p = p;
	b->cap = cap;
	return 0;
}

int snap_buf_init(struct snap_buf *b)
{
	*b = (struct snap_buf){ 0 };
	if (reserve(b, sizeof(struct snap_header)))
		return -ENOMEM;
	b->len = sizeof(struct snap_header);
	return 0;
}

int snap_buf_section(struct snap_buf *b, uint32_t type, const void *a, size_t alen,
		     const void *c, size_t clen)
{
	struct snap_section s = { .type = type, .bytes = alen + clen };

	if (reserve(b, sizeof(s) + aligned(alen + clen)))
		return -ENOMEM;
	memcpy(b->p + b->len, &s, sizeof(s));
	b->len += sizeof(s);
	if (alen)
		memcpy(b->p + b->len, a, alen);
	if (clen)
		memcpy(b->p + b->len + alen, c, clen);
	b->len += aligned(alen + clen);
	return 0;
}

int snap_buf_reserve_copy(struct snap_buf *b, const void *p, size_t len)
{
	if (reserve(b, len))
		return -ENOMEM;
	memcpy(b->p + b->len, p, len);
	b->len += len;
	return 0;
}

void snap_buf_finish(struct snap_buf *b, const struct snap_header *h)
{
	struct snap_header out = *h;

	memset(out.magic, 0, sizeof(out.magic));
	memcpy(out.magic, SNAP_MAGIC, strlen(SNAP_MAGIC));
	out.format_version = SNAP_FORMAT_VERSION;
	out.vcpu_state_bytes = sizeof(struct vcpu_state);
	out.body_bytes = b->len - sizeof(out);
	out.checksum = 0;
	memcpy(b->p, &out, sizeof(out));
	out.checksum = snap_state_checksum(b->p, b->len);
	memcpy(b->p, &out, sizeof(out));
}

void snap_buf_free(struct snap_buf *b)
{
	free(b->p);
	*b = (struct snap_buf){ 0 };
}

static int bad(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int bad(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/*
 * The header: its layout (magic, version), then the checksum over it and
 * the body, and only then what the other fields say.
 */
static int check_header(const struct snap_header *h, size_t len, char *err, size_t errlen)
{
	char magic[sizeof(h->magic)] = SNAP_MAGIC;

	if (memcmp(h->magic, magic, sizeof(magic)))
		return bad(err, errlen,
			   "not a minivmm snapshot (the state file's magic is wrong)");
	if (h->format_version == 1)
		return bad(
			err, errlen,
			"snapshot format version 1, whose checksum left its header out; this minivmm reads version %d: take the snapshot again",
			SNAP_FORMAT_VERSION);
	if (h->format_version != SNAP_FORMAT_VERSION)
		return bad(err, errlen,
			   "snapshot format version %u; this minivmm reads version %d",
			   h->format_version, SNAP_FORMAT_VERSION);
	if (h->body_bytes != len - sizeof(*h))
		return bad(
			err, errlen,
			"the snapshot's state file is truncated or padded: its header says %llu bytes follow it, %zu do",
			(unsigned long long)h->body_bytes, len - sizeof(*h));
	if (snap_state_checksum((const uint8_t *)h, len) != h->checksum)
		return bad(
			err, errlen,
			"the snapshot's state file is corrupt: its checksum does not match its header's");
	if (h->abi_version < SNAP_MIN_ABI || h->abi_version > MVM_ABI_VERSION)
		return bad(
			err, errlen,
			"snapshot of a guest built for ABI %u; this minivmm restores guests of ABI %d to %d",
			h->abi_version, SNAP_MIN_ABI, MVM_ABI_VERSION);
	if (h->vcpu_state_bytes != sizeof(struct vcpu_state))
		return bad(
			err, errlen,
			"snapshot written by a minivmm whose vCPU state is %u bytes (this one's is %zu): restore it with the minivmm that wrote it",
			h->vcpu_state_bytes, sizeof(struct vcpu_state));
	if (!h->nvcpus || h->nvcpus > SNAP_VCPUS_MAX)
		return bad(err, errlen, "snapshot of %u vCPUs (1 to %d)", h->nvcpus,
			   SNAP_VCPUS_MAX);
	if (!h->ram_bytes || h->ram_bytes % MVM_RAM_ALIGN_BYTES || !h->page_bytes ||
	    h->ram_bytes % h->page_bytes)
		return bad(err, errlen,
			   "snapshot of %llu bytes of RAM in %llu-byte pages",
			   (unsigned long long)h->ram_bytes,
			   (unsigned long long)h->page_bytes);
	if (!memchr(h->backing, '\0', sizeof(h->backing)))
		return bad(err, errlen,
			   "snapshot header: the backing's name is not terminated");
	return 0;
}

/* A Linux guest's sections: each once, of its size. */
static int take_pc(struct snap_view *v, const struct snap_section *s, const uint8_t *p,
		   char *err, size_t errlen)
{
	static const struct {
		size_t bytes;
		const char *name;
	} want[SNAP_SEC_COUNT] = {
		[SNAP_SEC_LINUX] = { sizeof(struct snap_linux), "Linux guest" },
		[SNAP_SEC_IRQCHIP] = { VM_PC_CHIPS * sizeof(struct kvm_irqchip),
				       "interrupt controllers" },
		[SNAP_SEC_PIT] = { sizeof(struct kvm_pit_state2), "PIT" },
		[SNAP_SEC_CLOCK] = { sizeof(struct kvm_clock_data), "kvmclock" },
		[SNAP_SEC_PC_DEVICES] = { sizeof(struct snap_pc_devices), "PC devices" },
	};
	const void **slot[SNAP_SEC_COUNT] = {
		[SNAP_SEC_LINUX] = (const void **)&v->lx,
		[SNAP_SEC_IRQCHIP] = (const void **)&v->chips,
		[SNAP_SEC_PIT] = (const void **)&v->pit,
		[SNAP_SEC_CLOCK] = (const void **)&v->clock,
		[SNAP_SEC_PC_DEVICES] = (const void **)&v->pcdev,
	};

	if (*slot[s->type] || s->bytes != want[s->type].bytes)
		return bad(err, errlen, "snapshot: a second or misshapen %s section",
			   want[s->type].name);
	*slot[s->type] = p;
	return 0;
}

/* One section's content: the config, a vCPU, a batch of records, the console or a PC's. */
static int take(struct snap_view *v, const struct snap_section *s, const uint8_t *p,
		size_t *cap, char *err, size_t errlen)
{
	const struct snap_header *h = v->hdr;
	const struct snap_records *r = (const void *)p;
	unsigned nv = 0;
	char why[256];

	while (nv < h->nvcpus && v->vcpu[nv])
		nv++;
	switch (s->type) {
	case SNAP_SEC_CONFIG:
		if (v->cfg || s->bytes != sizeof(*v->cfg))
			return bad(err, errlen,
				   "snapshot: a second or misshapen config section");
		v->cfg = (const void *)p;
		return 0;
	case SNAP_SEC_VCPU:
		if (s->bytes != sizeof(struct vcpu_state) || nv == h->nvcpus ||
		    ((const struct vcpu_state *)p)->index != nv ||
		    ((const struct vcpu_state *)p)->nmsrs > VCPU_MSRS_MAX)
			return bad(
				err, errlen,
				"snapshot: vCPU section %u is misshapen or out of order",
				nv);
		v->vcpu[nv] = (const void *)p;
		return 0;
	case SNAP_SEC_RECORDS:
		if (s->bytes < sizeof(*r) || !snap_record_size(r->kind) ||
		    r->count > MVM_RECORDS_MAX ||
		    s->bytes !=
			    sizeof(*r) + (uint64_t)r->count * snap_record_size(r->kind))
			return bad(err, errlen, "snapshot: record batch %zu is misshapen",
				   v->nbatches);
		/* What a live guest's batch passes before it is kept: replayed, it is one again. */
		if (hc_records_check(r->kind, r + 1, r->count, h->nvcpus, why,
				     sizeof(why)))
			return bad(
				err, errlen,
				"snapshot: record batch %zu holds records a guest's call would have been refused for: %s",
				v->nbatches, why);
		if (v->nbatches == SNAP_RECORD_BATCHES_MAX)
			return bad(err, errlen, "snapshot: more than %d record batches",
				   SNAP_RECORD_BATCHES_MAX);
		if (v->nbatches == *cap) {
			size_t c = *cap ? 2 * *cap : 64;
			struct snap_batch *b = realloc(v->batches, c * sizeof(*b));

			if (!b)
				return -ENOMEM;
			v->batches = b;
			*cap = c;
		}
		v->batches[v->nbatches++] =
			(struct snap_batch){ r->kind, r->count, r + 1 };
		return 0;
	case SNAP_SEC_CONSOLE:
		if (v->console || s->bytes > SNAP_CONSOLE_BYTES)
			return bad(err, errlen,
				   "snapshot: a second or oversized console section");
		v->console = p;
		v->console_len = s->bytes;
		return 0;
	case SNAP_SEC_LINUX:
	case SNAP_SEC_IRQCHIP:
	case SNAP_SEC_PIT:
	case SNAP_SEC_CLOCK:
	case SNAP_SEC_PC_DEVICES:
		return take_pc(v, s, p, err, errlen);
	default:
		return bad(err, errlen, "snapshot: unknown section type %u", s->type);
	}
}

static int check_config(const struct snap_view *v, char *err, size_t errlen)
{
	const struct snap_config *c = v->cfg;
	uint32_t n = 0;

	if (!c)
		return bad(err, errlen, "snapshot: no config section");
	if (!v->vcpu[v->hdr->nvcpus - 1])
		return bad(err, errlen, "snapshot: %u vCPUs in the header, fewer saved",
			   v->hdr->nvcpus);
	if (c->mem_bytes != v->hdr->ram_bytes || c->vcpus != v->hdr->nvcpus)
		return bad(
			err, errlen,
			"snapshot: the config and the header disagree on RAM or vCPUs");
	if (c->args_bytes > sizeof(c->args) || c->guest_argc > MVM_MAX_GUEST_ARGS ||
	    (c->args_bytes && c->args[c->args_bytes - 1]) ||
	    !memchr(c->image, '\0', sizeof(c->image)))
		return bad(err, errlen, "snapshot: the guest's arguments are misshapen");
	for (uint32_t i = 0; i < c->args_bytes; i++)
		n += c->args[i] == '\0';
	if (n != c->guest_argc)
		return bad(err, errlen, "snapshot: %u guest arguments said, %u there",
			   c->guest_argc, n);
	n = !!v->lx + !!v->chips + !!v->pit + !!v->clock + !!v->pcdev;
	if (n && n != 5)
		return bad(
			err, errlen,
			"snapshot of a Linux guest with %u of its 5 platform sections (what it booted, interrupt controllers, PIT, kvmclock, PC devices)",
			n);
	if (v->lx && (!memchr(v->lx->kernel, '\0', sizeof(v->lx->kernel)) ||
		      !memchr(v->lx->initrd, '\0', sizeof(v->lx->initrd)) ||
		      !memchr(v->lx->cmdline, '\0', sizeof(v->lx->cmdline))))
		return bad(
			err, errlen,
			"snapshot: the Linux guest's paths or command line are misshapen");
	if (c->result_gpa > c->mem_bytes - sizeof(uint32_t) ||
	    c->snapshot_vcpu >= c->vcpus)
		return bad(
			err, errlen,
			"snapshot: the guest's snapshot call lies outside its RAM or vCPUs");
	return 0;
}

int snap_parse(const uint8_t *buf, size_t len, struct snap_view *v, char *err,
	       size_t errlen)
{
	size_t at = sizeof(struct snap_header), cap = 0;
	int e;

	memset(v, 0, sizeof(*v));
	if (len < sizeof(struct snap_header))
		return bad(
			err, errlen,
			"the snapshot's state file is truncated: %zu bytes, its header alone is %zu",
			len, sizeof(struct snap_header));
	v->hdr = (const void *)buf;
	e = check_header(v->hdr, len, err, errlen);
	while (!e && at < len) {
		struct snap_section s;

		if (len - at < sizeof(s)) {
			e = bad(err, errlen,
				"snapshot: a section header runs past the end");
			break; /* batches may be kept already: freed below */
		}
		memcpy(&s, buf + at, sizeof(s));
		at += sizeof(s);
		if (s.bytes > len - at || aligned(s.bytes) > len - at)
			e = bad(err, errlen,
				"snapshot: section %u runs past the end of the file",
				s.type);
		else
			e = take(v, &s, buf + at, &cap, err, errlen);
		at += aligned(s.bytes);
	}
	e = e ?: check_config(v, err, errlen);
	if (e)
		snap_view_free(v);
	return e;
}

void snap_view_free(struct snap_view *v)
{
	free(v->batches);
	v->batches = NULL;
	v->nbatches = 0;
}
