/* Unit tests: hypercall decoding and the port registry. */
#include <errno.h>

#include "check.h"
#include "devices.h"
#include "experiment.h" /* run_register_devices: the devices a run has */

static uint8_t mem[1 << 16];
static struct guest_ram ram = { .hva = mem,
				.size = sizeof(mem),
				.map_bytes = sizeof(mem) };

#define NVCPUS 2 /* the guest's, for the records' vCPU numbers */

static int decode_at(uint64_t gpa, const void *args, size_t len, struct hc_call *out,
		     char *err)
{
	memset(mem, 0, sizeof(mem));
	if (gpa + len <= sizeof(mem))
		memcpy(mem + gpa, args, len);
	return hc_decode(&ram, NVCPUS, gpa, out, err, 256);
}

/* A records call at 0x1000 whose n records (of size bytes each) are at rgpa. */
static int decode_recs(uint32_t kind, const void *recs, uint32_t n, size_t size,
		       uint64_t rgpa, struct hc_call *out, char *err)
{
	struct mvm_hc_records a = { { MVM_HC_RECORDS, sizeof(a) }, kind, n, rgpa };

	memset(mem, 0, sizeof(mem));
	memcpy(mem + 0x1000, &a, sizeof(a));
	memcpy(mem + rgpa, recs, n * size);
	return hc_decode(&ram, NVCPUS, 0x1000, out, err, 256);
}

/*
 * Each record's fields are checked on the copy: what the results file would
 * write is what the schema allows (issue 20), and a batch is one measurement.
 */
static void records_contents(void)
{
	static struct hc_call c;
	char err[256];
#define SWEEP(w, m, it, mib, v)                                                       \
	{                                                                             \
		.workload = w, .mode = m, .iteration = it, .size_mib = mib, .vcpu = v \
	}
	struct mvm_rec_sweep sw[3] = {
		SWEEP(MVM_WL_SWEEP, MVM_MODE_DEMAND, 1, 4, MVM_VCPU_ALL),
		SWEEP(MVM_WL_SWEEP, MVM_MODE_DEMAND, 1, 4, 0),
		SWEEP(MVM_WL_SWEEP, MVM_MODE_DEMAND, 1, 4, 1),
	};
	struct mvm_rec_sweep bad;
	struct mvm_rec_touch t[4] = { { .vcpu = 0, .end_gpa = 4096 },
				      { .vcpu = 1 },
				      { .vcpu = MVM_VCPU_ALL },
				      { .vcpu = 0 } };
	struct mvm_rec_progress p = { .vcpu = 1,
				      .bytes_done = 4096,
				      .bytes_total = 8192 };
	struct mvm_rec_order o = { .vcpu = 0,
				   .workload = MVM_WL_PERM,
				   .order = MVM_ORDER_RANDOM,
				   .end_gpa = 8192 };

	CHECK(decode_recs(MVM_REC_SWEEP, sw, 3, sizeof(sw[0]), 0x2000, &c, err) == 0);
	/* The copy is what the handler passes on, not guest memory. */
	CHECK(c.recs.sweep[2].vcpu == 1 && c.recs.sweep[0].size_mib == 4);
	bad = sw[1];
	bad.workload = 9;
	CHECK(decode_recs(MVM_REC_SWEEP, &bad, 1, sizeof(bad), 0x2000, &c, err) ==
	      -EINVAL);
	CHECK_STR_CONTAINS(err, "unknown workload 9");
	bad = sw[1];
	bad.mode = 0;
	CHECK(decode_recs(MVM_REC_SWEEP, &bad, 1, sizeof(bad), 0x2000, &c, err) ==
	      -EINVAL);
	CHECK_STR_CONTAINS(err, "mode 0");
	bad = (struct mvm_rec_sweep)SWEEP(MVM_WL_FLAT, MVM_MODE_POPULATE, 1, 1, 0);
	CHECK(decode_recs(MVM_REC_SWEEP, &bad, 1, sizeof(bad), 0x2000, &c, err) ==
	      -EINVAL);
	CHECK_STR_CONTAINS(err, "sweep only");
	bad = sw[1];
	bad.iteration = 0;
	CHECK(decode_recs(MVM_REC_SWEEP, &bad, 1, sizeof(bad), 0x2000, &c, err) ==
	      -EINVAL);
	CHECK_STR_CONTAINS(err, "iteration 0");
	bad = sw[1];
	bad.size_mib = 0;
	CHECK(decode_recs(MVM_REC_SWEEP, &bad, 1, sizeof(bad), 0x2000, &c, err) ==
	      -EINVAL);
	bad = sw[1];
	bad.vcpu = NVCPUS;
	CHECK(decode_recs(MVM_REC_SWEEP, &bad, 1, sizeof(bad), 0x2000, &c, err) ==
	      -EINVAL);
	CHECK_STR_CONTAINS(err, "vCPU 2, the guest has 2");
	sw[2].iteration = 2;
	CHECK(decode_recs(MVM_REC_SWEEP, sw, 3, sizeof(sw[0]), 0x2000, &c, err) ==
	      -EINVAL);
	CHECK_STR_CONTAINS(err, "record 2 is of another measurement");

	CHECK(decode_recs(MVM_REC_TOUCH, t, 3, sizeof(t[0]), 0x2000, &c, err) == 0);
	CHECK(decode_recs(MVM_REC_TOUCH, t, 4, sizeof(t[0]), 0x2000, &c, err) == -EINVAL);
	CHECK_STR_CONTAINS(err, "4 touch records for 2 vCPUs");
	/* Three records for two vCPUs, but two of them vCPU 1's (issue 38). */
	t[0].vcpu = 1;
	CHECK(decode_recs(MVM_REC_TOUCH, t, 3, sizeof(t[0]), 0x2000, &c, err) == -EINVAL);
	CHECK_STR_CONTAINS(err, "a second one for the same vCPU as record");
	t[0].vcpu = 0;
	t[0].start_gpa = 8192;
	CHECK(decode_recs(MVM_REC_TOUCH, t, 3, sizeof(t[0]), 0x2000, &c, err) == -EINVAL);

	CHECK(decode_recs(MVM_REC_PROGRESS, &p, 1, sizeof(p), 0x2000, &c, err) == 0);
	p.bytes_done = p.bytes_total + 1;
	CHECK(decode_recs(MVM_REC_PROGRESS, &p, 1, sizeof(p), 0x2000, &c, err) ==
	      -EINVAL);
	p = (struct mvm_rec_progress){ .vcpu = MVM_VCPU_ALL };
	CHECK(decode_recs(MVM_REC_PROGRESS, &p, 1, sizeof(p), 0x2000, &c, err) ==
	      -EINVAL);

	CHECK(decode_recs(MVM_REC_ORDER, &o, 1, sizeof(o), 0x2000, &c, err) == 0);
	o.order = MVM_ORDER_BLOCKS;
	CHECK(decode_recs(MVM_REC_ORDER, &o, 1, sizeof(o), 0x2000, &c, err) == 0);
	o.order = MVM_ORDER_BLOCKS + 1;
	CHECK(decode_recs(MVM_REC_ORDER, &o, 1, sizeof(o), 0x2000, &c, err) == -EINVAL);
	CHECK_STR_CONTAINS(err, "unknown order 5");
	o.order = MVM_ORDER_STRIDE;
	o.workload = 0;
	CHECK(decode_recs(MVM_REC_ORDER, &o, 1, sizeof(o), 0x2000, &c, err) == -EINVAL);
	o.workload = MVM_WL_FLAT;
	o.start_gpa = o.end_gpa + 4096;
	CHECK(decode_recs(MVM_REC_ORDER, &o, 1, sizeof(o), 0x2000, &c, err) == -EINVAL);
}

void test_hc_decode(void)
{
	static struct hc_call c;
	union hc_args *a = &c.a;
	char err[256];
	struct mvm_hc_console con = { { MVM_HC_CONSOLE, sizeof(con) }, 0x100, 5 };
	struct mvm_hc_exit ex = { { MVM_HC_EXIT, sizeof(ex) }, -3, 0 };
	struct mvm_hc_records rec = {
		{ MVM_HC_RECORDS, sizeof(rec) }, MVM_REC_SWEEP, 2, 0x200
	};
	struct mvm_hc_abort ab = { { MVM_HC_ABORT, sizeof(ab) }, 7, 14, 0, 0, 0, "", "" };
	struct mvm_hc_hdr hdr;

	CHECK(decode_at(0x1000, &con, sizeof(con), &c, err) == 0);
	CHECK(a->hdr.nr == MVM_HC_CONSOLE && a->console.len == 5);
	CHECK(decode_at(0x1000, &ex, sizeof(ex), &c, err) == 0 && a->exit.status == -3);
	CHECK(decode_at(0x1000, &rec, sizeof(rec), &c, err) ==
	      -EINVAL); /* zeros: no workload */
	rec.count = 0;
	CHECK(decode_at(0x1000, &rec, sizeof(rec), &c, err) == 0 &&
	      a->records.count == 0);
	rec.count = 2;
	records_contents();

	/* Abort strings are forced to end inside their arrays. */
	memset(ab.file, 'f', sizeof(ab.file));
	memset(ab.msg, 'm', sizeof(ab.msg));
	CHECK(decode_at(0x1000, &ab, sizeof(ab), &c, err) == 0);
	CHECK(strlen(a->abort.file) == sizeof(ab.file) - 1);
	CHECK(strlen(a->abort.msg) == sizeof(ab.msg) - 1);

	/* Argument struct outside RAM, or running past its end. */
	CHECK(decode_at(sizeof(mem), &ex, 0, &c, err) == -EFAULT);
	CHECK_STR_CONTAINS(err, "outside guest RAM");
	CHECK(decode_at(sizeof(mem) - 4, &ex, 4, &c, err) == -EFAULT);
	CHECK(decode_at(sizeof(mem) - 8, &ex, 8, &c, err) == -EFAULT);
	CHECK_STR_CONTAINS(err, "run past guest RAM");

	/* Unknown numbers and wrong sizes. */
	hdr = (struct mvm_hc_hdr){ 0, 8 };
	CHECK(decode_at(0x1000, &hdr, sizeof(hdr), &c, err) == -EINVAL);
	CHECK_STR_CONTAINS(err, "unknown hypercall number 0");
	hdr = (struct mvm_hc_hdr){ MVM_HC_COUNT, 8 };
	CHECK(decode_at(0x1000, &hdr, sizeof(hdr), &c, err) == -EINVAL);
	hdr = (struct mvm_hc_hdr){ 0xffffffff, 8 };
	CHECK(decode_at(0x1000, &hdr, sizeof(hdr), &c, err) == -EINVAL);
	ex.hdr.size = sizeof(ex) + 1;
	CHECK(decode_at(0x1000, &ex, sizeof(ex), &c, err) == -EINVAL);
	CHECK_STR_CONTAINS(err, "size");

	/* Console: huge length, buffer outside RAM, buffer wrapping the address space. */
	con.len = MVM_CONSOLE_MAX_BYTES + 1;
	CHECK(decode_at(0x1000, &con, sizeof(con), &c, err) == -EINVAL);
	con.len = 16;
	con.buf_gpa = sizeof(mem) - 8;
	CHECK(decode_at(0x1000, &con, sizeof(con), &c, err) == -EINVAL);
	con.buf_gpa = UINT64_MAX - 4;
	CHECK(decode_at(0x1000, &con, sizeof(con), &c, err) == -EINVAL);
	con.len = 0;
	con.buf_gpa = sizeof(mem);
	CHECK(decode_at(0x1000, &con, sizeof(con), &c, err) == 0);

	/* Records: unknown kind, too many, outside RAM, overflowing count * size. */
	rec.kind = 99;
	CHECK(decode_at(0x1000, &rec, sizeof(rec), &c, err) == -EINVAL);
	rec.kind = MVM_REC_SWEEP;
	rec.count = MVM_RECORDS_MAX + 1;
	CHECK(decode_at(0x1000, &rec, sizeof(rec), &c, err) == -EINVAL);
	rec.count = MVM_RECORDS_MAX;
	rec.recs_gpa = sizeof(mem) - 64;
	CHECK(decode_at(0x1000, &rec, sizeof(rec), &c, err) == -EINVAL);
	rec.recs_gpa = UINT64_MAX - 64;
	rec.count = 1;
	CHECK(decode_at(0x1000, &rec, sizeof(rec), &c, err) == -EINVAL);

	/* ABI 2's kinds: checked at their own sizes; one past the last is unknown. */
	rec.kind = MVM_REC_PROGRESS;
	rec.count = 2;
	rec.recs_gpa = sizeof(mem) - 2 * sizeof(struct mvm_rec_progress);
	CHECK(decode_at(0x1000, &rec, sizeof(rec), &c, err) == 0);
	rec.count = 3;
	CHECK(decode_at(0x1000, &rec, sizeof(rec), &c, err) == -EINVAL);
	CHECK_STR_CONTAINS(err, "outside guest RAM");
	rec.kind = MVM_REC_ORDER;
	rec.count = 1;
	rec.recs_gpa = sizeof(mem) - sizeof(struct mvm_rec_order);
	CHECK(decode_at(0x1000, &rec, sizeof(rec), &c, err) == -EINVAL);
	CHECK_STR_CONTAINS(
		err, "unknown workload 0"); /* inside RAM: its contents are checked */
	rec.recs_gpa++;
	CHECK(decode_at(0x1000, &rec, sizeof(rec), &c, err) == -EINVAL);
	rec.kind = MVM_REC_COUNT;
	rec.recs_gpa = 0x200;
	CHECK(decode_at(0x1000, &rec, sizeof(rec), &c, err) == -EINVAL);
	CHECK_STR_CONTAINS(err, "unknown record kind");
}

static enum dev_action dummy_io(void *cookie, unsigned vcpu, uint64_t port, int is_write,
				uint8_t *data, unsigned size)
{
	return DEV_CONTINUE;
}

void test_pio_register(void)
{
	struct io_bus bus;
	struct io_dev a = { "a", 0x3f8, 8, dummy_io, NULL };
	struct io_dev b = { "b", 0x3ff, 1, dummy_io, NULL };
	struct io_dev c = { "c", 0x3f0, 8, dummy_io, NULL };
	struct io_dev d = { "d", 0xffff, 2, dummy_io, NULL };
	struct io_dev e = { "e", 0x10, 0, dummy_io, NULL };
	static const struct config cfg = { .quiet = 1, .vm.vcpus = 1 };
	static const struct outputs outs = { .n = 0 };
	struct run *r;
	const struct io_bus *pio;
	struct dev_host host = { 0 };
	struct console *con = console_create(1, stdout, 1);

	io_bus_init(&bus, 0x10000);
	CHECK(io_bus_register(&bus, &a) == 0);
	CHECK(io_bus_register(&bus, &b) == -EEXIST);
	CHECK(io_bus_register(&bus, &c) == 0); /* adjacent, not overlapping */
	CHECK(io_bus_register(&bus, &d) == -EINVAL);
	CHECK(io_bus_register(&bus, &e) == -EINVAL);
	CHECK(io_bus_find(&bus, 0x3f8) == &bus.devs[0]);
	CHECK(io_bus_find(&bus, 0x3ff) == &bus.devs[0]);
	CHECK(io_bus_find(&bus, 0x3f7) == &bus.devs[1]);
	CHECK(io_bus_find(&bus, 0x400) == NULL);
	CHECK(io_bus_find(&bus, 0x3ef) == NULL);
	for (uint16_t p = 0x1000; bus.n < IO_BUS_MAX_DEVS; p += 0x10) {
		struct io_dev f = { "f", p, 1, dummy_io, NULL };

		CHECK(io_bus_register(&bus, &f) == 0);
	}
	CHECK(io_bus_register(&bus, &(struct io_dev){ "g", 0x9000, 1, dummy_io, NULL }) ==
	      -ENOSPC);

	/* Every device minivmm has, as a run registers them (run_register_devices),
	 * once; twice overlaps. */
	r = run_new(&cfg, &(struct run_opts){ .out = &outs });
	CHECK(r != NULL && con != NULL);
	if (!r || !con)
		return;
	pio = vm_bus(run_vm(r), 0);
	CHECK(run_register_devices(r) == 0);
	CHECK(io_bus_find(pio, MVM_HC_PORT) && io_bus_find(pio, MVM_DEBUGCON_PORT) &&
	      io_bus_find(pio, MVM_COM1_PORT + 5) && io_bus_find(pio, MVM_EXIT_PORT));
	CHECK(run_register_devices(r) == -EEXIST);
	/* One by one, each register function refuses its ports when taken. The
	 * same ranges as the run's: a device added there and not here fails. */
	io_bus_init(&bus, 0x10000);
	CHECK(hypercalls_register(&host, &bus) == 0 && console_register(con, &bus) == 0 &&
	      exitport_register(&host, &bus) == 0);
	CHECK_EQ(bus.n, pio->n);
	for (unsigned i = 0; i < bus.n && i < pio->n; i++)
		CHECK(bus.devs[i].base == pio->devs[i].base &&
		      bus.devs[i].len == pio->devs[i].len);
	CHECK(hypercalls_register(&host, &bus) == -EEXIST);
	CHECK(console_register(con, &bus) == -EEXIST);
	CHECK(exitport_register(&host, &bus) == -EEXIST);
	console_free(con);
	run_free(r);
}

/*
 * A Linux guest's oops: its first line ("BUG: ..."), \r and all, is kept
 * while the rest scrolls past the tail; a second oops does not replace it.
 */
void test_console_report(void)
{
	struct console *c = console_create(1, stdout, 1);
	char buf[300], filler[200];

	CHECK(c != NULL);
	if (!c)
		return;
	CHECK_EQ(console_report(c, buf, sizeof(buf)), 0);
	CHECK(buf[0] == '\0');
	console_write(c, "[    1.0] Run /init as init process\r\n", 38);
	CHECK_EQ(console_report(c, buf, sizeof(buf)), 0);
	console_write(c,
		      "[    6.9] BUG: ENTRY_TRAMPOLINE stack guard page was hit at x\r\n",
		      64);
	memset(filler, 'x', sizeof(filler));
	for (int i = 0; i < 100; i++) /* 20 KB of trace: far more than the tail keeps */
		console_write(c, filler, sizeof(filler));
	console_write(c, "[    7.0] Oops: general protection fault\r\n", 43);
	CHECK(console_report(c, buf, sizeof(buf)) > 0);
	CHECK(!strcmp(buf,
		      "[    6.9] BUG: ENTRY_TRAMPOLINE stack guard page was hit at x"));
	/* A short buffer: cut, still a string. */
	CHECK_EQ(console_report(c, buf, 10), 9);
	CHECK(!strcmp(buf, "[    6.9]"));
	console_free(c);
}
