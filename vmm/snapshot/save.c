/* Saving a paused VM: every vCPU's state, the devices' and the records, guest RAM as a sparse file. */
#include "snapshot.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct snap_log {
	struct snap_buf b; /* SNAP_SEC_RECORDS sections, ready to append */
	size_t batches;
};

struct snap_log *snap_log_create(void)
{
	struct snap_log *l = calloc(1, sizeof(*l));

	return l;
}

int snap_log_add(struct snap_log *l, uint32_t kind, const void *recs, uint32_t n)
{
	struct snap_records r = { kind, n };

	if (l->batches == SNAP_RECORD_BATCHES_MAX || !snap_record_size(kind))
		return -E2BIG;
	l->batches++;
	return snap_buf_section(&l->b, SNAP_SEC_RECORDS, &r, sizeof(r), recs,
				(size_t)n * snap_record_size(kind));
}

void snap_log_free(struct snap_log *l)
{
	if (!l)
		return;
	snap_buf_free(&l->b);
	free(l);
}

static int config_section(struct snap_buf *b, struct vm *vm,
			  const struct snap_save_in *in)
{
	struct snap_config c = { .mem_bytes = vm_ram(vm)->size,
				 .vcpus = vm_nvcpus(vm),
				 .tsc_khz = vm_platform(vm)->tsc_khz,
				 .result_gpa = in->result_gpa,
				 .guest_checksum = in->req->checksum,
				 .guest_pass = in->req->pass,
				 .snapshot_vcpu = in->req->vcpu,
				 .console_bytes = console_counts(in->console).bytes };
	size_t at = 0;

	/* check_guest_args bounded them to MVM_GUEST_ARGS_BYTES. */
	for (int i = 0; i < in->guest_argc && i < MVM_MAX_GUEST_ARGS; i++) {
		size_t n = strlen(in->guest_argv[i]) + 1;

		if (at + n > sizeof(c.args))
			return -E2BIG;
		memcpy(c.args + at, in->guest_argv[i], n);
		at += n;
		c.guest_argc++;
	}
	c.args_bytes = (uint32_t)at;
	snprintf(c.image, sizeof(c.image), "%s", in->image ? in->image : "");
	return snap_buf_section(b, SNAP_SEC_CONFIG, &c, sizeof(c), NULL, 0);
}

/* A Linux guest's: what it booted, its in-kernel platform, COM1 and the PC devices. */
static int pc_sections(struct snap_buf *b, struct vm *vm, const struct snap_save_in *in,
		       char *err, size_t errlen)
{
	const struct vm_pc_state *st = vm_pc_saved(vm);
	struct snap_pc_devices d;
	int e = 0;

	if (!st) {
		snprintf(err, errlen,
			 "the PC platform's state was not read at the pause");
		return -EIO;
	}

	e = e ?: snap_buf_section(b, SNAP_SEC_LINUX, in->lx, sizeof(*in->lx), NULL, 0);
	e = e
		    ?: snap_buf_section(b, SNAP_SEC_IRQCHIP, st->chip, sizeof(st->chip),
					NULL, 0);
	e = e ?: snap_buf_section(b, SNAP_SEC_PIT, &st->pit, sizeof(st->pit), NULL, 0);
	e = e
		    ?: snap_buf_section(b, SNAP_SEC_CLOCK, &st->clock, sizeof(st->clock),
					NULL, 0);
	if (!e) {
		console_uart_get(in->console, &d.com1);
		pc_devices_get(in->pc, &d.pc);
		e = snap_buf_section(b, SNAP_SEC_PC_DEVICES, &d, sizeof(d), NULL, 0);
	}
	return e;
}

static int build_state(struct vm *vm, const struct snap_save_in *in, struct snap_buf *b,
		       struct snapshot_facts *f, char *err, size_t errlen)
{
	char tail[SNAP_CONSOLE_BYTES];
	size_t ntail;
	int e = snap_buf_init(b);

	e = e ?: config_section(b, vm, in);
	/* Each vCPU's state, as its own thread read it at the pause (vm_pause_settle checked). */
	for (unsigned i = 0; !e && i < vm_nvcpus(vm); i++) {
		const struct vcpu_state *st = vm_vcpu_saved(vm, i);

		if (!st) {
			snprintf(err, errlen, "vCPU %u's state was not read", i);
			return -EIO;
		}
		if (i == 0)
			f->msrs = st->nmsrs;
		e = snap_buf_section(b, SNAP_SEC_VCPU, st, sizeof(*st), NULL, 0);
	}
	if (!e && in->lx)
		e = pc_sections(b, vm, in, err, errlen);
	ntail = console_tail(in->console, tail, sizeof(tail));
	e = e ?: snap_buf_section(b, SNAP_SEC_CONSOLE, tail, ntail, NULL, 0);
	/* The records so far, each batch as the guest sent it. */
	if (!e && in->log && in->log->b.len)
		e = snap_buf_reserve_copy(b, in->log->b.p, in->log->b.len);
	if (e && !err[0])
		snprintf(err, errlen, "building the snapshot's state: %s", strerror(-e));
	return e;
}

int snapshot_save(struct vm *vm, const struct snap_save_in *in, struct snap_dir *d,
		  struct snapshot_facts *f, char *err, size_t errlen)
{
	struct snap_header h = { .abi_version = in->abi,
				 .ram_bytes = vm_ram(vm)->size,
				 .page_bytes = in->page_bytes,
				 .nvcpus = vm_nvcpus(vm) };
	struct mm_memfile_stats ms;
	struct snap_buf b = { 0 };
	double t0 = now_s();
	int e;

	err[0] = '\0';
	memset(f, 0, sizeof(*f));
	f->path = d->path;
	f->vcpu = in->req->vcpu;
	f->pass = in->req->pass;
	f->guest_checksum = in->req->checksum;
	f->ram_bytes = h.ram_bytes;
	snprintf(h.backing, sizeof(h.backing), "%s", in->backing);
	e = vm_pause_settle(vm, err, errlen);
	e = e ?: build_state(vm, in, &b, f, err, errlen);
	if (!e) {
		e = mm_memfile_write(vm_ram(vm), d->mem_fd, d->pagemap_fd, in->stop,
				     in->stop_cookie, &ms, err, errlen);
		f->memory_s = ms.seconds;
		f->resident_bytes = ms.resident_bytes;
		f->data_bytes = ms.data_bytes;
		f->extents = ms.extents;
	}
	if (!e) {
		snap_buf_finish(&b, &h);
		f->state_bytes = b.len;
		e = snap_dir_commit(d, &b, err, errlen);
	} else {
		char why[512];

		snprintf(why, sizeof(why), "%s", err);
		snprintf(err, errlen, "--snapshot %s: %s", d->path, why);
		snap_dir_discard(d);
	}
	snap_buf_free(&b);
	f->seconds = now_s() - t0;
	f->taken = !e;
	return e;
}
