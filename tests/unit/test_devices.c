/* Unit tests: hypercall decoding and the port registry. */
#include <errno.h>

#include "check.h"
#include "devices.h"

static uint8_t mem[1 << 16];
static struct guest_ram ram = { .hva = mem,
				.size = sizeof(mem),
				.map_bytes = sizeof(mem) };

static int decode_at(uint64_t gpa, const void *args, size_t len, union hc_args *out,
		     char *err)
{
	memset(mem, 0, sizeof(mem));
	if (gpa + len <= sizeof(mem))
		memcpy(mem + gpa, args, len);
	return hc_decode(&ram, gpa, out, err, 256);
}

void test_hc_decode(void)
{
	union hc_args a;
	char err[256];
	struct mvm_hc_console con = { { MVM_HC_CONSOLE, sizeof(con) }, 0x100, 5 };
	struct mvm_hc_exit ex = { { MVM_HC_EXIT, sizeof(ex) }, -3, 0 };
	struct mvm_hc_records rec = {
		{ MVM_HC_RECORDS, sizeof(rec) }, MVM_REC_SWEEP, 2, 0x200
	};
	struct mvm_hc_abort ab = { { MVM_HC_ABORT, sizeof(ab) }, 7, 14, 0, 0, 0, "", "" };
	struct mvm_hc_hdr hdr;

	CHECK(decode_at(0x1000, &con, sizeof(con), &a, err) == 0);
	CHECK(a.hdr.nr == MVM_HC_CONSOLE && a.console.len == 5);
	CHECK(decode_at(0x1000, &ex, sizeof(ex), &a, err) == 0 && a.exit.status == -3);
	CHECK(decode_at(0x1000, &rec, sizeof(rec), &a, err) == 0 && a.records.count == 2);

	/* Abort strings are forced to end inside their arrays. */
	memset(ab.file, 'f', sizeof(ab.file));
	memset(ab.msg, 'm', sizeof(ab.msg));
	CHECK(decode_at(0x1000, &ab, sizeof(ab), &a, err) == 0);
	CHECK(strlen(a.abort.file) == sizeof(ab.file) - 1);
	CHECK(strlen(a.abort.msg) == sizeof(ab.msg) - 1);

	/* Argument struct outside RAM, or running past its end. */
	CHECK(decode_at(sizeof(mem), &ex, 0, &a, err) == -1);
	CHECK_STR_CONTAINS(err, "outside guest RAM");
	CHECK(decode_at(sizeof(mem) - 4, &ex, 4, &a, err) == -1);
	CHECK(decode_at(sizeof(mem) - 8, &ex, 8, &a, err) == -1);
	CHECK_STR_CONTAINS(err, "run past guest RAM");

	/* Unknown numbers and wrong sizes. */
	hdr = (struct mvm_hc_hdr){ 0, 8 };
	CHECK(decode_at(0x1000, &hdr, sizeof(hdr), &a, err) == -1);
	CHECK_STR_CONTAINS(err, "unknown hypercall number 0");
	hdr = (struct mvm_hc_hdr){ MVM_HC_COUNT, 8 };
	CHECK(decode_at(0x1000, &hdr, sizeof(hdr), &a, err) == -1);
	hdr = (struct mvm_hc_hdr){ 0xffffffff, 8 };
	CHECK(decode_at(0x1000, &hdr, sizeof(hdr), &a, err) == -1);
	ex.hdr.size = sizeof(ex) + 1;
	CHECK(decode_at(0x1000, &ex, sizeof(ex), &a, err) == -1);
	CHECK_STR_CONTAINS(err, "size");

	/* Console: huge length, buffer outside RAM, buffer wrapping the address space. */
	con.len = MVM_CONSOLE_MAX_BYTES + 1;
	CHECK(decode_at(0x1000, &con, sizeof(con), &a, err) == -1);
	con.len = 16;
	con.buf_gpa = sizeof(mem) - 8;
	CHECK(decode_at(0x1000, &con, sizeof(con), &a, err) == -1);
	con.buf_gpa = UINT64_MAX - 4;
	CHECK(decode_at(0x1000, &con, sizeof(con), &a, err) == -1);
	con.len = 0;
	con.buf_gpa = sizeof(mem);
	CHECK(decode_at(0x1000, &con, sizeof(con), &a, err) == 0);

	/* Records: unknown kind, too many, outside RAM, overflowing count * size. */
	rec.kind = 99;
	CHECK(decode_at(0x1000, &rec, sizeof(rec), &a, err) == -1);
	rec.kind = MVM_REC_SWEEP;
	rec.count = MVM_RECORDS_MAX + 1;
	CHECK(decode_at(0x1000, &rec, sizeof(rec), &a, err) == -1);
	rec.count = MVM_RECORDS_MAX;
	rec.recs_gpa = sizeof(mem) - 64;
	CHECK(decode_at(0x1000, &rec, sizeof(rec), &a, err) == -1);
	rec.recs_gpa = UINT64_MAX - 64;
	rec.count = 1;
	CHECK(decode_at(0x1000, &rec, sizeof(rec), &a, err) == -1);
}

static int dummy_io(struct vm *vm, struct vcpu *v, uint16_t port, int is_write,
		    uint8_t *data, unsigned size)
{
	return 0;
}

void test_pio_register(void)
{
	struct pio_bus bus = { .n = 0 };
	struct pio_dev a = { "a", 0x3f8, 8, dummy_io };
	struct pio_dev b = { "b", 0x3ff, 1, dummy_io };
	struct pio_dev c = { "c", 0x3f0, 8, dummy_io };
	struct pio_dev d = { "d", 0xffff, 2, dummy_io };
	struct pio_dev e = { "e", 0x10, 0, dummy_io };

	CHECK(pio_register(&bus, &a) == 0);
	CHECK(pio_register(&bus, &b) == -EEXIST);
	CHECK(pio_register(&bus, &c) == 0); /* adjacent, not overlapping */
	CHECK(pio_register(&bus, &d) == -EINVAL);
	CHECK(pio_register(&bus, &e) == -EINVAL);
	CHECK(pio_find(&bus, 0x3f8) == &bus.devs[0]);
	CHECK(pio_find(&bus, 0x3ff) == &bus.devs[0]);
	CHECK(pio_find(&bus, 0x3f7) == &bus.devs[1]);
	CHECK(pio_find(&bus, 0x400) == NULL);
	CHECK(pio_find(&bus, 0x3ef) == NULL);
	for (uint16_t p = 0x1000; bus.n < PIO_MAX_DEVS; p += 0x10) {
		struct pio_dev f = { "f", p, 1, dummy_io };

		CHECK(pio_register(&bus, &f) == 0);
	}
	CHECK(pio_register(&bus, &(struct pio_dev){ "g", 0x9000, 1, dummy_io }) ==
	      -ENOSPC);

	bus.n = 0;
	CHECK(devices_register_all(&bus) == 0);
	CHECK(pio_find(&bus, MVM_HC_PORT) && pio_find(&bus, MVM_DEBUGCON_PORT) &&
	      pio_find(&bus, MVM_COM1_PORT + 5));
	CHECK(devices_register_all(&bus) == -EEXIST);
}
