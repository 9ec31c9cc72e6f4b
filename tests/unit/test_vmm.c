/* Unit tests: boot-info FDT contents, image checks, and exit dispatch on fabricated exits. */
#include <errno.h>
#include <libfdt.h>
#include <signal.h>
#include <stdlib.h>

#include "check.h"
#include "experiment.h"
#include "internal.h" /* the fabricated VM of the exit-dispatch tests */

void test_bootinfo_fdt(void)
{
	static char buf[MVM_BOOTINFO_MAX];
	char *argv[] = { "hello", "a b", "", "--x" };
	const fdt64_t *reg;
	const char *s;
	int node, len, n = 0, sub;

	struct bootinfo bi = { .mem_bytes = 3ULL << 30,
			       .vcpus = 3,
			       .tsc_khz = 2596136,
			       .eager_touch = 1,
			       .tdp = 1,
			       .argc = 4,
			       .argv = argv };
	char err[128];

	CHECK(bootinfo_build(buf, sizeof(buf), &bi, err, sizeof(err)) == 0);
	CHECK(fdt_check_header(buf) == 0);
	CHECK(fdt_totalsize(buf) <= sizeof(buf));
	s = fdt_getprop(buf, 0, "compatible", NULL);
	CHECK(s && !strcmp(s, "minivmm"));
	CHECK_EQ(fdt32_to_cpu(*(const fdt32_t *)fdt_getprop(buf, 0, "minivmm,abi-version",
							    NULL)),
		 MVM_ABI_VERSION);
	node = fdt_path_offset(buf, "/memory@0");
	reg = fdt_getprop(buf, node, "reg", &len);
	CHECK(reg && len == 16);
	CHECK_EQ(fdt64_ld(&reg[0]), 0);
	CHECK_EQ(fdt64_ld(&reg[1]), 3ULL << 30);
	node = fdt_path_offset(buf, "/cpus");
	fdt_for_each_subnode(sub, buf, node) n++;
	CHECK_EQ(n, 3);
	node = fdt_path_offset(buf, "/chosen");
	CHECK_EQ(fdt32_to_cpu(*(const fdt32_t *)fdt_getprop(buf, node, "minivmm,tsc-khz",
							    NULL)),
		 2596136);
	CHECK_EQ(fdt_stringlist_count(buf, node, "minivmm,args"), 4);
	s = fdt_stringlist_get(buf, node, "minivmm,args", 1, NULL);
	CHECK(s && !strcmp(s, "a b"));
	s = fdt_stringlist_get(buf, node, "minivmm,args", 2, NULL);
	CHECK(s && !strcmp(s, ""));
	s = fdt_getprop(buf, node, "bootargs", NULL);
	CHECK(s && !strcmp(s, "hello a b  --x"));

	/* No arguments: no list, empty bootargs. Too small a buffer: an error, not a crash. */
	s = fdt_getprop(buf, node, "minivmm,eager", NULL);
	CHECK(s && !strcmp(s, "touch"));
	s = fdt_getprop(buf, node, "minivmm,paging", NULL);
	CHECK(s && !strcmp(s, "tdp"));
	bi = (struct bootinfo){ .mem_bytes = 1ULL << 30, .vcpus = 1, .tsc_khz = 1 };
	CHECK(bootinfo_build(buf, sizeof(buf), &bi, err, sizeof(err)) == 0);
	node = fdt_path_offset(buf, "/chosen");
	CHECK(fdt_getprop(buf, node, "minivmm,args", NULL) == NULL);
	CHECK(fdt_getprop(buf, node, "minivmm,eager", NULL) == NULL);
	s = fdt_getprop(buf, node, "bootargs", NULL);
	CHECK(s && !strcmp(s, ""));
	CHECK(bootinfo_build(buf, 64, &bi, err, sizeof(err)) == -ENOSPC);
	CHECK_STR_CONTAINS(err, "NOSPACE");
}

static size_t make_image(uint8_t *img, uint64_t load, uint64_t entry_off,
			 uint64_t end_off, uint32_t abi, uint32_t max_vcpus)
{
	struct mvm_image_header h = { .abi_version = abi, .max_vcpus = max_vcpus };

	memcpy(h.magic, MVM_IMAGE_MAGIC, sizeof(MVM_IMAGE_MAGIC));
	h.load_gpa = load;
	h.entry_gpa = load + entry_off;
	h.end_gpa = load + end_off;
	memset(img, 0x90, 4096);
	memcpy(img, &h, sizeof(h));
	return 4096;
}

void test_loader_check(void)
{
	static uint8_t img[4096];
	struct mvm_image_header h;
	char err[256];
	size_t n = make_image(img, MVM_LOAD_GPA, 64, 1 << 20, MVM_ABI_VERSION, 4);

	CHECK(loader_check(img, n, 64 << 20, 1, &h, err, sizeof(err)) == 0);
	CHECK_EQ(h.entry_gpa, MVM_LOAD_GPA + 64);
	CHECK(loader_check(img, n, 64 << 20, 5, &h, err, sizeof(err)) == -EINVAL);
	CHECK_STR_CONTAINS(err, "at most 4");
	CHECK(loader_check(img, n, 4 << 20, 1, &h, err, sizeof(err)) == -EINVAL);
	CHECK_STR_CONTAINS(err, "too small");
	CHECK(loader_check(img, 16, 64 << 20, 1, &h, err, sizeof(err)) == -ENOEXEC);

	n = make_image(img, 0x200000, 64, 1 << 20, MVM_ABI_VERSION, 4);
	CHECK(loader_check(img, n, 64 << 20, 1, &h, err, sizeof(err)) == -ENOEXEC);
	CHECK_STR_CONTAINS(err, "load address 0x200000");
	n = make_image(img, MVM_LOAD_GPA, 64, 1 << 20, MVM_ABI_VERSION + 1, 4);
	CHECK(loader_check(img, n, 64 << 20, 1, &h, err, sizeof(err)) == -ENOEXEC);
	CHECK_STR_CONTAINS(err, "newer than this minivmm's");
	/* Every version from the oldest on runs: an addition never breaks an image. */
	for (unsigned v = MVM_ABI_OLDEST; v <= MVM_ABI_VERSION; v++) {
		n = make_image(img, MVM_LOAD_GPA, 64, 1 << 20, v, 4);
		CHECK(loader_check(img, n, 64 << 20, 1, &h, err, sizeof(err)) == 0);
		CHECK(h.abi_version == v);
		CHECK(loader_abi_check(&h, 1, err, sizeof(err)) == (v < 3 ? -EINVAL : 0));
	}
	n = make_image(img, MVM_LOAD_GPA, 64, 1 << 20, MVM_ABI_OLDEST - 1, 4);
	CHECK(loader_check(img, n, 64 << 20, 1, &h, err, sizeof(err)) == -ENOEXEC);
	CHECK_STR_CONTAINS(err,
			   "rebuild it against this minivmm's include/minivmm_abi.h");
	n = make_image(img, MVM_LOAD_GPA, 8192, 1 << 20, MVM_ABI_VERSION,
		       4); /* entry past file */
	CHECK(loader_check(img, n, 64 << 20, 1, &h, err, sizeof(err)) == -ENOEXEC);
	n = make_image(img, MVM_LOAD_GPA, 64, 100, MVM_ABI_VERSION,
		       4); /* end inside file */
	CHECK(loader_check(img, n, 64 << 20, 1, &h, err, sizeof(err)) == -ENOEXEC);
	n = make_image(img, MVM_LOAD_GPA, 64, 1 << 20, MVM_ABI_VERSION, 0);
	CHECK(loader_check(img, n, 64 << 20, 1, &h, err, sizeof(err)) == -ENOEXEC);

	memcpy(img, "#!/bin/sh\necho hi\n", 18);
	CHECK(loader_check(img, n, 64 << 20, 1, &h, err, sizeof(err)) == -ENOEXEC);
	CHECK_STR_CONTAINS(err, "not a minivmm guest");
}

/* A run whose VM has 1 MiB of RAM and one vCPU, with no KVM behind them. */
static struct run *run;
static struct vm *vm;
static struct config cfg = { .quiet = 1, .vm.vcpus = 1 };
static struct outputs outs = { .n = 0 };
static struct vcpu vcpu;

static void fake_vm(void)
{
	static uint8_t *mem;
	static struct kvm_run *kvm_run;

	if (!mem) {
		mem = calloc(1, 1 << 20);
		kvm_run = calloc(1, 4096);
	}
	if (vm)
		vm->vcpus = NULL; /* ours is static */
	run_free(run);
	run = run_new(&cfg, &(struct run_opts){ .out = &outs });
	CHECK(run != NULL);
	if (!run)
		abort();
	vm = run_vm(run);
	vm->nvcpus = 1;
	vm->vcpus = &vcpu;
	vm->ram = (struct guest_ram){ .hva = mem, .size = 1 << 20, .map_bytes = 1 << 20 };
	vm->plat.tsc_khz = 1000000;
	CHECK(run_register_devices(run) == 0);
	memset(kvm_run, 0, 4096);
	vcpu = (struct vcpu){ .vm = vm, .fd = -1, .kvm_run = kvm_run, .run_size = 4096 };
}

static enum vcpu_action out32(uint16_t port, uint32_t value)
{
	struct kvm_run *r = vcpu.kvm_run;

	r->exit_reason = KVM_EXIT_IO;
	r->io.direction = KVM_EXIT_IO_OUT;
	r->io.size = 4;
	r->io.port = port;
	r->io.count = 1;
	r->io.data_offset = 1024;
	memcpy((uint8_t *)r + 1024, &value, 4);
	return exit_dispatch(vm, &vcpu);
}

static enum vcpu_action plain_exit(uint32_t reason)
{
	vcpu.kvm_run->exit_reason = reason;
	return exit_dispatch(vm, &vcpu);
}

/* RLIMIT_NOFILE against the vCPUs' fds: fits, fits once soft is raised to hard, or refused with the number to ask for. */
void test_vcpu_fds(void)
{
	char err[512] = "";

	/* Two a vCPU (one without stats fds), one a spare, the reserve, and what is open. */
	CHECK_EQ(vm_fds_needed(1, 0, 1, 3), 3 + 2 + VM_FDS_RESERVE);
	CHECK_EQ(vm_fds_needed(1, 0, 0, 3), 3 + 1 + VM_FDS_RESERVE);
	CHECK_EQ(vm_fds_needed(1019, 0, 1, 10), 10 + 2038 + VM_FDS_RESERVE);
	CHECK_EQ(vm_fds_needed(4, 3, 1, 5), 5 + 8 + 3 + VM_FDS_RESERVE);
	CHECK_EQ(vm_fds_needed(65536, 1024, 1, 1u << 20),
		 (1u << 20) + 131072 + 1024 + VM_FDS_RESERVE);
	/* The boundary: exactly the soft limit fits. */
	CHECK(vm_fds_fit(1, 0, 1, 3, 3 + 2 + VM_FDS_RESERVE, 4096, err, sizeof(err)) ==
	      0);
	CHECK(vm_fds_fit(1, 0, 1, 4, 3 + 2 + VM_FDS_RESERVE, 4096, err, sizeof(err)) ==
	      1);
	/* The emulated host's 1024/4096: 1019 vCPUs need the hard limit, 4096 more than it. */
	CHECK(vm_fds_fit(8, 0, 1, 10, 1024, 4096, err, sizeof(err)) == 0);
	CHECK(vm_fds_fit(1019, 0, 1, 10, 1024, 4096, err, sizeof(err)) == 1);
	CHECK(vm_fds_fit(4096, 0, 1, 10, 1024, 4096, err, sizeof(err)) == -EMFILE);
	CHECK_STR_CONTAINS(err, "--vcpus 4096: needs 8234 open files");
	CHECK_STR_CONTAINS(err, "RLIMIT_NOFILE allows 1024 (hard limit 4096)");
	CHECK_STR_CONTAINS(err, "ulimit -n 8234");
	/* ulimit -n 64 sets both limits. */
	CHECK(vm_fds_fit(100, 0, 1, 6, 64, 64, err, sizeof(err)) == -EMFILE);
	CHECK_STR_CONTAINS(err, "ulimit -n 238");
	CHECK(!strstr(err, "spare"));
	CHECK(vm_fds_fit(100, 7, 1, 6, 64, 64, err, sizeof(err)) == -EMFILE);
	CHECK_STR_CONTAINS(err, "1 per spare vCPU of --eager=background:prefault (7)");
	CHECK_STR_CONTAINS(err, "ulimit -n 245");
	/* No hard limit (RLIM_INFINITY): raising always holds. */
	CHECK(vm_fds_fit(65536, 0, 1, 10, 1024, UINT64_MAX, err, sizeof(err)) == 1);
}

void test_exit_dispatch(void)
{
	struct mvm_hc_console con = { { MVM_HC_CONSOLE, sizeof(con) }, 0x3000, 6 };
	struct mvm_hc_exit ex = { { MVM_HC_EXIT, sizeof(ex) }, 3, 0 };
	struct kvm_run *r;
	struct run_view view;

	signal(SIGUSR2, SIG_IGN); /* vm_finish wakes the "main thread": us */
	fake_vm();
	run_view(run, &view);
	r = vcpu.kvm_run;
	memcpy(vm->ram.hva + 0x2000, &con, sizeof(con));
	memcpy(vm->ram.hva + 0x3000, "hello\n", 6);
	CHECK(out32(MVM_HC_PORT, 0x2000) == VCPU_CONTINUE);
	CHECK_EQ(console_counts(view.console).bytes, 6);
	CHECK(vm->end == END_RUNNING);

	memcpy(vm->ram.hva + 0x2000, &ex, sizeof(ex));
	CHECK(out32(MVM_HC_PORT, 0x2000) == VCPU_STOP);
	CHECK(vm->end == END_GUEST_EXIT && vm->status == 3 && vm_exit_status(vm) == 1);

	fake_vm();
	CHECK(out32(MVM_HC_PORT, 0xfffff000) == VCPU_STOP); /* arguments outside RAM */
	CHECK(vm->end == END_ABI_VIOLATION &&
	      !strcmp(vm_end_reason(vm), "abi-violation"));
	CHECK_STR_CONTAINS(vm->message, "guest ABI violation");
	CHECK_EQ(vm_exit_status(vm), EXIT_GUEST_CRASH);

	fake_vm();
	CHECK(out32(0x80, 0) == VCPU_CONTINUE); /* unclaimed port: counted */
	CHECK_EQ(io_bus_unclaimed_counts(&vm->pio).count, 1);
	CHECK_EQ(io_bus_unclaimed_counts(&vm->pio).first_addr, 0x80);
	vcpu.kvm_run->io.direction = KVM_EXIT_IO_IN;
	CHECK(exit_dispatch(vm, &vcpu) == VCPU_CONTINUE);
	CHECK_EQ(*(uint32_t *)((uint8_t *)vcpu.kvm_run + 1024), 0xffffffff);
	CHECK_EQ(io_bus_unclaimed_counts(&vm->pio).count, 2);
	vcpu.kvm_run->io.data_offset =
		8192; /* KVM handing us garbage must not crash us */
	CHECK(exit_dispatch(vm, &vcpu) == VCPU_STOP);

	fake_vm();
	r = vcpu.kvm_run;
	r->exit_reason = KVM_EXIT_MMIO;
	r->mmio.phys_addr = 0xfee00000;
	r->mmio.is_write = 0;
	r->mmio.len = 4;
	CHECK(exit_dispatch(vm, &vcpu) == VCPU_CONTINUE);
	CHECK_EQ(io_bus_unclaimed_counts(&vm->mmio).count, 1);
	CHECK_EQ(r->mmio.data[0], 0xff);

	fake_vm();
	CHECK(plain_exit(KVM_EXIT_SHUTDOWN) == VCPU_STOP);
	CHECK(vm->end == END_GUEST_CRASH);
	CHECK_STR_CONTAINS(vm->message, "triple fault");
	CHECK_STR_CONTAINS(vm->message, "KVM_EXIT_SHUTDOWN");
	CHECK_STR_CONTAINS(vm->message, "registers unavailable"); /* no vCPU fd here */

	fake_vm();
	vcpu.kvm_run->internal.suberror = KVM_INTERNAL_ERROR_EMULATION;
	CHECK(plain_exit(KVM_EXIT_INTERNAL_ERROR) == VCPU_STOP);
	CHECK_STR_CONTAINS(vm->message, "emulation failed");
	CHECK_STR_CONTAINS(vm->message, "KVM_EXIT_INTERNAL_ERROR");

	fake_vm();
	vcpu.kvm_run->fail_entry.hardware_entry_failure_reason = 0x21;
	CHECK(plain_exit(KVM_EXIT_FAIL_ENTRY) == VCPU_STOP);
	CHECK_STR_CONTAINS(vm->message, "hardware reason 0x21");

	fake_vm();
	CHECK(plain_exit(KVM_EXIT_HLT) == VCPU_STOP);
	CHECK(!strcmp(vm_end_reason(vm), "guest-halt"));
	CHECK_STR_CONTAINS(vm->message, "HLT");

	fake_vm();
	CHECK(plain_exit(KVM_EXIT_DEBUG) == VCPU_STOP);
	CHECK_STR_CONTAINS(vm->message, "unexpected exit (KVM_EXIT_DEBUG)");
	fake_vm();
	CHECK(plain_exit(100000) == VCPU_STOP);
	CHECK_STR_CONTAINS(vm->message, "unknown exit");
	fake_vm();
	CHECK(plain_exit(KVM_EXIT_INTR) == VCPU_CONTINUE);
	CHECK(vm->end == END_RUNNING);

	/* The first end wins: a later crash does not overwrite a guest exit. */
	fake_vm();
	memcpy(vm->ram.hva + 0x2000, &ex, sizeof(ex));
	out32(MVM_HC_PORT, 0x2000);
	plain_exit(KVM_EXIT_SHUTDOWN);
	CHECK(vm->end == END_GUEST_EXIT);
}

/* Every table indexed by an enum has its rows in enum order, with no holes. */
void test_tables(void)
{
	for (unsigned i = 0; i < END_COUNT; i++) {
		CHECK_EQ(run_ends[i].end, i);
		CHECK(run_ends[i].reason && run_ends[i].meaning);
		CHECK(run_end_row((enum run_end)i) == &run_ends[i]);
	}
	for (unsigned i = 0; i < EAGER_STRATEGY_COUNT; i++) {
		CHECK_EQ(eager_strategies[i].id, i);
		CHECK(!strcmp(eager_strategy_name((enum eager_strategy)i),
			      eager_strategies[i].name));
	}
	for (uint32_t nr = 1; nr < MVM_HC_COUNT; nr++)
		CHECK(hc_name(nr) != NULL);
	CHECK(hc_name(0) == NULL && hc_name(MVM_HC_COUNT) == NULL);
	for (uint32_t m = 1; m < MVM_MARK_COUNT; m++)
		CHECK(phase_of_guest_mark(m) < PHASE_COUNT);
	CHECK(phase_of_guest_mark(0) == PHASE_COUNT &&
	      phase_of_guest_mark(MVM_MARK_COUNT) == PHASE_COUNT);
	for (unsigned i = 0; i < PHASE_COUNT; i++) {
		CHECK_EQ(phases[i].id, i);
		CHECK(phases[i].name && phases[i].meaning);
	}
	for (unsigned i = 0; i < SUM_COUNT; i++)
		CHECK(summary_names[i] != NULL);
	/* The tables' counter columns are the legend's counter rows, in order. */
	CHECK_EQ(table_counter_count(), 6);
	CHECK(!strcmp(table_counter(0), "exits") &&
	      !strcmp(table_counter(2), "pf_taken") && table_counter(6) == NULL);
	for (unsigned i = 0; i < exit_status_count; i++) {
		int named = 0;

		for (unsigned e = 0; e < END_COUNT; e++)
			named |= run_ends[e].status == exit_statuses[i].status;
		CHECK(named || exit_statuses[i].status == EXIT_GUEST_FAILED);
	}
}

/*
 * Phases end in the order they are recorded, whatever time each mark
 * carries: a host mark read before another thread's, or a guest mark without
 * an anchor (its exit's arrival), never ends before the phase recorded
 * before it.
 */
void test_timeline_order(void)
{
	struct timeline *tl = timeline_create();
	double t[4];

	CHECK(tl != NULL);
	if (!tl)
		return;
	timeline_mark_at(tl, PHASE_EXEC, 1.0, 0);
	timeline_mark_at(tl, PHASE_KVM_OPEN, 3.0, 0);
	timeline_mark_at(tl, PHASE_IMAGE_READ, 2.0,
			 0); /* read before kvm_open, recorded after */
	timeline_mark_at(tl, PHASE_KVM_OPEN, 4.0, 0); /* the first mark of a phase wins */
	timeline_guest_entry(tl, -1);		      /* no vCPU: no anchor */
	timeline_guest_mark(tl, MVM_MARK_WORKLOAD_START, 0);
	CHECK_EQ(timeline_count(tl), 5);
	for (unsigned i = 0; i < 4; i++)
		CHECK(timeline_phase(tl, i + 1, &t[i], NULL) < PHASE_COUNT);
	CHECK(t[0] == 3.0 && t[1] == 3.0);   /* image_read ends with kvm_open */
	CHECK(t[2] >= t[1] && t[3] >= t[2]); /* now_s() is far past 3 s */
	/* The phase running at a time: the first whose end is at or after it. */
	CHECK_EQ(timeline_phase_at(tl, 0.5), PHASE_EXEC);
	CHECK_EQ(timeline_phase_at(tl, 2.5),
		 PHASE_KVM_OPEN); /* recorded before image_read */
	CHECK_EQ(timeline_phase_at(tl, 3.0), PHASE_KVM_OPEN);
	CHECK_EQ(timeline_phase_at(tl, t[3] + 1e6), PHASE_COUNT);
	timeline_free(tl);
}

/*
 * The records store keeps at most the ABI's guest limits: past one an add
 * fails with -E2BIG naming it, and what came before stays (issue 20).
 */
void test_records_limits(void)
{
	static struct mvm_rec_sweep recs[MVM_RECORDS_MAX];
	struct mvm_rec_touch touch[2] = { { .vcpu = 0 }, { .vcpu = MVM_VCPU_ALL } };
	/* One order record whose pass takes as many points as the store keeps. */
	const uint64_t pass = (uint64_t)MVM_PROGRESS_RECORDS_MAX * MVM_PAGE_BYTES;
	struct mvm_rec_order o = { .workload = MVM_WL_FLAT,
				   .order = MVM_ORDER_SEQUENTIAL,
				   .end_gpa = pass,
				   .progress_bytes = MVM_PAGE_BYTES };
	struct mvm_rec_progress pt = { .iteration = 1, .bytes_total = pass };
	struct records *r = records_create(1);
	char err[160];
	size_t n;
	int e = 0;

	for (unsigned i = 0; i < MVM_RECORDS_MAX; i++)
		recs[i] = (struct mvm_rec_sweep){ .workload = MVM_WL_SWEEP,
						  .mode = MVM_MODE_DEMAND,
						  .iteration = 1 + i,
						  .size_mib = 1 };
	CHECK(r != NULL);
	if (!r)
		return;
	/* Batches: one record each. */
	for (unsigned b = 0; b < MVM_SWEEP_BATCHES_MAX && !e; b++)
		e = records_add_sweep(r, &recs[b % MVM_RECORDS_MAX], 1, NULL, 0, err,
				      sizeof(err));
	CHECK_EQ(e, 0);
	CHECK_EQ(records_add_sweep(r, recs, 1, NULL, 0, err, sizeof(err)), -E2BIG);
	CHECK_STR_CONTAINS(err, "MVM_SWEEP_BATCHES_MAX = 4096");
	CHECK_EQ(records_add_sweep(r, recs, 0, NULL, 0, err, sizeof(err)), 0);
	records_sweep(r, &n);
	CHECK_EQ(n, MVM_SWEEP_BATCHES_MAX);
	/* The row before a batch is the last vCPU 0 record before it. */
	CHECK_EQ(records_row_before(r, 0), 0);
	CHECK_EQ(records_row_before(r, 5), 5);
	records_free(r);

	/* Records: full batches. */
	r = records_create(1);
	e = 0;
	for (unsigned b = 0; b < MVM_SWEEP_RECORDS_MAX / MVM_RECORDS_MAX && !e; b++)
		e = records_add_sweep(r, recs, MVM_RECORDS_MAX, NULL, 0, err,
				      sizeof(err));
	CHECK_EQ(e, 0);
	CHECK_EQ(records_add_sweep(r, recs, 1, NULL, 0, err, sizeof(err)), -E2BIG);
	CHECK_STR_CONTAINS(err, "MVM_SWEEP_RECORDS_MAX = 131072");
	records_sweep(r, &n);
	CHECK_EQ(n, MVM_SWEEP_RECORDS_MAX);
	/* Progress points, orders and the one touch report. */
	e = records_add_progress(r, MVM_REC_ORDER, &o, 1, err, sizeof(err));
	for (unsigned i = 0; i < MVM_PROGRESS_RECORDS_MAX && !e; i++)
		e = records_add_progress(r, MVM_REC_PROGRESS, &pt, 1, err, sizeof(err));
	CHECK_EQ(e, 0);
	CHECK_EQ(records_add_progress(r, MVM_REC_PROGRESS, &pt, 1, err, sizeof(err)),
		 -E2BIG);
	CHECK_STR_CONTAINS(err, "MVM_PROGRESS_RECORDS_MAX");
	CHECK_EQ(records_add_touch(r, touch, 2, err, sizeof(err)), 0);
	CHECK_EQ(records_add_touch(r, touch, 2, err, sizeof(err)), -E2BIG);
	CHECK_STR_CONTAINS(err, "MVM_TOUCH_BATCHES_MAX = 1");
	records_touch(r, &n);
	CHECK_EQ(n, 2);
	records_free(r);
}

/*
 * The ABI's rules that span batches (issue 38): each vCPU's one order
 * record, before its points; its points of its pass, in order, no more than
 * its stride takes. A batch that breaks one is refused whole (-EPROTO).
 */
void test_records_abi(void)
{
	struct mvm_rec_order o[2] = {
		{ .vcpu = 0,
		  .workload = MVM_WL_FLAT,
		  .order = MVM_ORDER_SEQUENTIAL,
		  .start_gpa = 0x400000,
		  .end_gpa = 0x408000,	      /* 32 KiB */
		  .progress_bytes = 0x2000 }, /* 8 KiB: at most 6 points */
		{ .vcpu = 1,
		  .workload = MVM_WL_FLAT,
		  .order = MVM_ORDER_SEQUENTIAL,
		  .start_gpa = 0x500000,
		  .end_gpa = 0x508000 }, /* no stride: no points */
	};
	struct mvm_rec_progress p[8];
	struct records *r = records_create(2);
	char err[160];
	size_t n;

	CHECK(r != NULL);
	if (!r)
		return;
	for (unsigned i = 0; i < 8; i++)
		p[i] = (struct mvm_rec_progress){ .vcpu = 0,
						  .iteration = 1,
						  .bytes_done = i * 0x1000,
						  .bytes_total = 0x8000,
						  .tsc = 1000 + i };
	/* Progress before its vCPU's order record. */
	CHECK_EQ(records_add_progress(r, MVM_REC_PROGRESS, p, 1, err, sizeof(err)),
		 -EPROTO);
	CHECK_STR_CONTAINS(err, "vCPU 0 sent no order record before its points");
	/* Two order records for vCPU 0 in one batch: refused whole. */
	struct mvm_rec_order twice[2] = { o[0], o[0] };
	CHECK_EQ(records_add_progress(r, MVM_REC_ORDER, twice, 2, err, sizeof(err)),
		 -EPROTO);
	CHECK_STR_CONTAINS(err, "order record 1: a second one for vCPU 0");
	records_order(r, &n);
	CHECK_EQ(n, 0);
	records_free(r);

	r = records_create(2);
	CHECK_EQ(records_add_progress(r, MVM_REC_ORDER, o, 2, err, sizeof(err)), 0);
	/* A second order record for vCPU 0 in a later batch (the heap overrun's start). */
	CHECK_EQ(records_add_progress(r, MVM_REC_ORDER, o, 1, err, sizeof(err)), -EPROTO);
	CHECK_STR_CONTAINS(err, "a second one for vCPU 0 (one per vCPU a run)");
	struct mvm_rec_order far = o[0];
	far.vcpu = 2;
	CHECK_EQ(records_add_progress(r, MVM_REC_ORDER, &far, 1, err, sizeof(err)),
		 -EPROTO);
	CHECK_STR_CONTAINS(err, "vCPU 2, the guest has 2");
	records_order(r, &n);
	CHECK_EQ(n, 2);
	/* Points: a pass of another size, points that go back, more than the stride takes. */
	struct mvm_rec_progress other = p[0];
	other.bytes_total = 0x10000;
	CHECK_EQ(records_add_progress(r, MVM_REC_PROGRESS, &other, 1, err, sizeof(err)),
		 -EPROTO);
	CHECK_STR_CONTAINS(err, "vCPU 0's pass is 32768 bytes");
	CHECK_EQ(records_add_progress(r, MVM_REC_PROGRESS, p, 6, err, sizeof(err)), 0);
	CHECK_EQ(records_add_progress(r, MVM_REC_PROGRESS, &p[6], 1, err, sizeof(err)),
		 -EPROTO);
	CHECK_STR_CONTAINS(
		err, "more points for vCPU 0 than its order record's stride takes (6)");
	records_progress(r, &n);
	CHECK_EQ(n, 6);
	records_free(r);

	r = records_create(2);
	CHECK_EQ(records_add_progress(r, MVM_REC_ORDER, o, 2, err, sizeof(err)), 0);
	CHECK_EQ(records_add_progress(r, MVM_REC_PROGRESS, &p[3], 1, err, sizeof(err)),
		 0);
	CHECK_EQ(records_add_progress(r, MVM_REC_PROGRESS, &p[2], 1, err, sizeof(err)),
		 -EPROTO);
	CHECK_STR_CONTAINS(err, "vCPU 0's points go back (8192 bytes done after 12288)");
	struct mvm_rec_progress one = p[0];
	one.vcpu = 1;
	CHECK_EQ(records_add_progress(r, MVM_REC_PROGRESS, &one, 1, err, sizeof(err)),
		 -EPROTO);
	CHECK_STR_CONTAINS(err, "stride takes (0)");
	records_free(r);
}
