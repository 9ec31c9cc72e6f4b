/* The hypercall port: decode the guest's argument struct and act on it. */
#include "devices.h"

#include <stdio.h>
#include <string.h>

#include "vmm.h"

static const uint32_t hc_size[MVM_HC_COUNT] = {
	[MVM_HC_CONSOLE] = sizeof(struct mvm_hc_console),
	[MVM_HC_EXIT] = sizeof(struct mvm_hc_exit),
	[MVM_HC_ABORT] = sizeof(struct mvm_hc_abort),
	[MVM_HC_RECORDS] = sizeof(struct mvm_hc_records),
	[MVM_HC_PARK] = sizeof(struct mvm_hc_hdr),
	[MVM_HC_ZERO] = sizeof(struct mvm_hc_zero),
	[MVM_HC_MARK] = sizeof(struct mvm_hc_mark),
};
_Static_assert(sizeof(union hc_args) >= sizeof(struct mvm_hc_abort), "hc_args too small");

static const uint32_t rec_size[] = {
	[MVM_REC_SWEEP] = sizeof(struct mvm_rec_sweep),
	[MVM_REC_TOUCH] = sizeof(struct mvm_rec_touch),
};

static int violation(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int violation(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

/* Copy the runs out of the guest and check each is page-aligned guest RAM. */
static int zero_decode(const struct guest_ram *ram, struct mvm_zero_run *runs,
		       const struct mvm_hc_zero *z, char *err, size_t errlen)
{
	const void *src;

	if (z->count > MVM_ZERO_RUNS_MAX)
		return violation(err, errlen, "%u zero runs in one call (limit %u)",
				 z->count, MVM_ZERO_RUNS_MAX);
	src = mm_gpa_to_hva(ram, z->runs_gpa, (uint64_t)z->count * sizeof(*runs));
	if (!src)
		return violation(err, errlen, "zero runs at 0x%llx are outside guest RAM",
				 (unsigned long long)z->runs_gpa);
	memcpy(runs, src, z->count * sizeof(*runs));
	for (uint32_t i = 0; i < z->count; i++) {
		uint64_t bytes;

		if ((runs[i].gpa & (MVM_PAGE_BYTES - 1)) ||
		    __builtin_mul_overflow(runs[i].pages, MVM_PAGE_BYTES, &bytes) ||
		    !mm_gpa_to_hva(ram, runs[i].gpa, bytes))
			return violation(
				err, errlen,
				"zero run %u (0x%llx, %llu pages) is not page-aligned "
				"guest RAM",
				i, (unsigned long long)runs[i].gpa,
				(unsigned long long)runs[i].pages);
	}
	return 0;
}

int hc_decode(const struct guest_ram *ram, uint64_t gpa, union hc_args *out, char *err,
	      size_t errlen)
{
	const void *p = mm_gpa_to_hva(ram, gpa, sizeof(struct mvm_hc_hdr));
	uint64_t bytes;

	if (!p)
		return violation(err, errlen,
				 "hypercall arguments at 0x%llx are outside guest RAM",
				 (unsigned long long)gpa);
	memcpy(&out->hdr, p, sizeof(out->hdr));
	if (out->hdr.nr == 0 || out->hdr.nr >= MVM_HC_COUNT)
		return violation(err, errlen, "unknown hypercall number %u", out->hdr.nr);
	if (out->hdr.size != hc_size[out->hdr.nr])
		return violation(err, errlen, "hypercall %u: size %u, expected %u",
				 out->hdr.nr, out->hdr.size, hc_size[out->hdr.nr]);
	p = mm_gpa_to_hva(ram, gpa, out->hdr.size);
	if (!p)
		return violation(err, errlen,
				 "hypercall %u: arguments at 0x%llx run past guest RAM",
				 out->hdr.nr, (unsigned long long)gpa);
	/* One copy: later checks cannot be raced by another vCPU changing the struct. */
	memcpy(out, p, out->hdr.size);

	switch (out->hdr.nr) {
	case MVM_HC_CONSOLE:
		if (out->console.len > MVM_CONSOLE_MAX_BYTES)
			return violation(err, errlen,
					 "console write of %llu bytes (limit %u)",
					 (unsigned long long)out->console.len,
					 MVM_CONSOLE_MAX_BYTES);
		if (!mm_gpa_to_hva(ram, out->console.buf_gpa, out->console.len))
			return violation(
				err, errlen,
				"console buffer 0x%llx+%llu is outside guest RAM",
				(unsigned long long)out->console.buf_gpa,
				(unsigned long long)out->console.len);
		break;
	case MVM_HC_ABORT:
		out->abort.file[sizeof(out->abort.file) - 1] = '\0';
		out->abort.msg[sizeof(out->abort.msg) - 1] = '\0';
		break;
	case MVM_HC_RECORDS:
		if (out->records.kind == 0 ||
		    out->records.kind >= sizeof(rec_size) / sizeof(rec_size[0]))
			return violation(err, errlen, "unknown record kind %u",
					 out->records.kind);
		if (out->records.count > MVM_RECORDS_MAX)
			return violation(err, errlen, "%u records in one call (limit %u)",
					 out->records.count, MVM_RECORDS_MAX);
		bytes = (uint64_t)out->records.count * rec_size[out->records.kind];
		if (!mm_gpa_to_hva(ram, out->records.recs_gpa, bytes))
			return violation(err, errlen,
					 "records at 0x%llx+%llu are outside guest RAM",
					 (unsigned long long)out->records.recs_gpa,
					 (unsigned long long)bytes);
		break;
	case MVM_HC_MARK:
		if (out->mark.mark == 0 || out->mark.mark >= MVM_MARK_COUNT)
			return violation(err, errlen, "unknown phase mark %u",
					 out->mark.mark);
		break;
	case MVM_HC_ZERO:
		return zero_decode(ram, out->zero.runs, &out->zero.call, err, errlen);
	default:
		break;
	}
	return 0;
}

static void abort_report(struct vm *vm, struct vcpu *v, const struct mvm_hc_abort *a)
{
	char where[96] = "";

	if (a->vector != MVM_ABORT_NO_VECTOR) {
		snprintf(where, sizeof(where), " (vector %u, error 0x%llx, rip 0x%llx%s",
			 a->vector, (unsigned long long)a->error_code,
			 (unsigned long long)a->rip,
			 a->vector == 14 ? ", fault address " : ")");
		if (a->vector == 14)
			snprintf(where + strlen(where), sizeof(where) - strlen(where),
				 "0x%llx)", (unsigned long long)a->cr2);
	}
	vm_finish(vm, END_GUEST_CRASH, 0, "guest-abort",
		  "guest aborted on vCPU %u: %s%s at %s:%u", v->index, a->msg, where,
		  a->file, a->line);
}

/* The runs were copied and checked by hc_decode. */
static void zero_runs(struct vm *vm, const struct mvm_zero_run *runs, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		memset(mm_gpa_to_hva(&vm->ram, runs[i].gpa,
				     runs[i].pages * MVM_PAGE_BYTES),
		       0, runs[i].pages * MVM_PAGE_BYTES);
}

/* Keep a batch of result records and print its table (one batch per iteration). */
static int records(struct vm *vm, const struct mvm_hc_records *a)
{
	const void *recs = mm_gpa_to_hva(&vm->ram, a->recs_gpa,
					 (uint64_t)a->count * rec_size[a->kind]);
	int r = a->kind == MVM_REC_SWEEP ? results_add_sweep(vm, recs, a->count, stdout)
					 : results_add_touch(vm, recs, a->count);

	if (r) {
		vm_finish(vm, END_HOST_ERROR, 0, "host-error",
			  "results: storing %u records: %s", a->count, strerror(-r));
		return 1;
	}
	return 0;
}

static int hc_io(struct vm *vm, struct vcpu *v, uint16_t port, int is_write,
		 uint8_t *data, unsigned size)
{
	union hc_args a;
	char err[256];
	uint32_t gpa;

	if (!is_write || size != 4) {
		vm_finish(vm, END_GUEST_CRASH, 0, "abi-violation",
			  "guest ABI violation on vCPU %u: hypercall port %s of size %u "
			  "(expected a 32-bit write)",
			  v->index, is_write ? "write" : "read", size);
		return 1;
	}
	memcpy(&gpa, data, sizeof(gpa));
	if (hc_decode(&vm->ram, gpa, &a, err, sizeof(err))) {
		vm_finish(vm, END_GUEST_CRASH, 0, "abi-violation",
			  "guest ABI violation on vCPU %u: %s", v->index, err);
		return 1;
	}
	switch (a.hdr.nr) {
	case MVM_HC_CONSOLE:
		console_write(vm,
			      mm_gpa_to_hva(&vm->ram, a.console.buf_gpa, a.console.len),
			      a.console.len);
		return 0;
	case MVM_HC_EXIT:
		vm_finish(vm, END_GUEST_EXIT, a.exit.status, "guest-exit",
			  "guest exited with status %d (vCPU %u)", a.exit.status,
			  v->index);
		return 1;
	case MVM_HC_ABORT:
		abort_report(vm, v, &a.abort);
		return 1;
	case MVM_HC_RECORDS:
		return records(vm, &a.records);
	case MVM_HC_PARK:
		return 1; /* this vCPU's thread ends; the VM runs on */
	case MVM_HC_ZERO:
		zero_runs(vm, a.zero.runs, a.zero.call.count);
		return 0;
	case MVM_HC_MARK:
		timeline_guest_mark(vm, a.mark.mark, a.mark.tsc);
		return 0;
	}
	return 0;
}

int devices_register_all(struct pio_bus *bus)
{
	static const struct pio_dev hc = { "hypercall", MVM_HC_PORT, 4, hc_io };
	int r = pio_register(bus, &hc);

	return r ? r : console_register(bus);
}
