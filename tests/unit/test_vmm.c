/* Unit tests: boot-info FDT contents, image checks, and exit dispatch on fabricated exits. */
#include <libfdt.h>
#include <signal.h>
#include <stdlib.h>

#include "check.h"
#include "vmm.h"

void test_bootinfo_fdt(void)
{
	static char buf[MVM_BOOTINFO_MAX];
	char *argv[] = { "hello", "a b", "", "--x" };
	const fdt64_t *reg;
	const char *s;
	int node, len, n = 0, sub;

	CHECK(bootinfo_build(buf, sizeof(buf), 3ULL << 30, 3, 2596136, 1, 4, argv) == 0);
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
	CHECK(bootinfo_build(buf, sizeof(buf), 1ULL << 30, 1, 1, 0, 0, NULL) == 0);
	node = fdt_path_offset(buf, "/chosen");
	CHECK(fdt_getprop(buf, node, "minivmm,args", NULL) == NULL);
	CHECK(fdt_getprop(buf, node, "minivmm,eager", NULL) == NULL);
	s = fdt_getprop(buf, node, "bootargs", NULL);
	CHECK(s && !strcmp(s, ""));
	CHECK(bootinfo_build(buf, 64, 1ULL << 30, 1, 1, 0, 0, NULL) < 0);
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
	CHECK(loader_check(img, n, 64 << 20, 5, &h, err, sizeof(err)) == EXIT_USAGE);
	CHECK_STR_CONTAINS(err, "at most 4");
	CHECK(loader_check(img, n, 4 << 20, 1, &h, err, sizeof(err)) == EXIT_USAGE);
	CHECK_STR_CONTAINS(err, "too small");
	CHECK(loader_check(img, 16, 64 << 20, 1, &h, err, sizeof(err)) ==
	      EXIT_GUEST_CRASH);

	n = make_image(img, 0x200000, 64, 1 << 20, MVM_ABI_VERSION, 4);
	CHECK(loader_check(img, n, 64 << 20, 1, &h, err, sizeof(err)) ==
	      EXIT_GUEST_CRASH);
	CHECK_STR_CONTAINS(err, "load address 0x200000");
	n = make_image(img, MVM_LOAD_GPA, 64, 1 << 20, MVM_ABI_VERSION + 1, 4);
	CHECK(loader_check(img, n, 64 << 20, 1, &h, err, sizeof(err)) ==
	      EXIT_GUEST_CRASH);
	CHECK_STR_CONTAINS(err, "ABI version");
	n = make_image(img, MVM_LOAD_GPA, 8192, 1 << 20, MVM_ABI_VERSION,
		       4); /* entry past file */
	CHECK(loader_check(img, n, 64 << 20, 1, &h, err, sizeof(err)) ==
	      EXIT_GUEST_CRASH);
	n = make_image(img, MVM_LOAD_GPA, 64, 100, MVM_ABI_VERSION,
		       4); /* end inside file */
	CHECK(loader_check(img, n, 64 << 20, 1, &h, err, sizeof(err)) ==
	      EXIT_GUEST_CRASH);
	n = make_image(img, MVM_LOAD_GPA, 64, 1 << 20, MVM_ABI_VERSION, 0);
	CHECK(loader_check(img, n, 64 << 20, 1, &h, err, sizeof(err)) ==
	      EXIT_GUEST_CRASH);

	memcpy(img, "#!/bin/sh\necho hi\n", 18);
	CHECK(loader_check(img, n, 64 << 20, 1, &h, err, sizeof(err)) ==
	      EXIT_GUEST_CRASH);
	CHECK_STR_CONTAINS(err, "not a minivmm guest");
}

/* A VM with 1 MiB of RAM and one vCPU that has no KVM behind it. */
static struct vm vm;
static struct config cfg = { .quiet = 1, .vcpus = 1 };
static struct vcpu vcpu;

static void fake_vm(void)
{
	static uint8_t *mem;
	static struct kvm_run *run;

	if (!mem) {
		mem = calloc(1, 1 << 20);
		run = calloc(1, 4096);
	}
	vm = (struct vm){
		.cfg = &cfg, .kvm_fd = -1, .vm_fd = -1, .nvcpus = 1, .vcpus = &vcpu
	};
	vm.ram = (struct guest_ram){ .hva = mem, .size = 1 << 20, .map_bytes = 1 << 20 };
	vm.plat.tsc_khz = 1000000;
	vm.main_thread = pthread_self();
	pthread_mutex_init(&vm.lock, NULL);
	CHECK(devices_register_all(&vm.pio) == 0);
	memset(run, 0, 4096);
	vcpu = (struct vcpu){ .vm = &vm, .fd = -1, .run = run, .run_size = 4096 };
}

static enum exit_action out32(uint16_t port, uint32_t value)
{
	struct kvm_run *run = vcpu.run;

	run->exit_reason = KVM_EXIT_IO;
	run->io.direction = KVM_EXIT_IO_OUT;
	run->io.size = 4;
	run->io.port = port;
	run->io.count = 1;
	run->io.data_offset = 1024;
	memcpy((uint8_t *)run + 1024, &value, 4);
	return exit_dispatch(&vm, &vcpu);
}

static enum exit_action plain_exit(uint32_t reason)
{
	vcpu.run->exit_reason = reason;
	return exit_dispatch(&vm, &vcpu);
}

void test_exit_dispatch(void)
{
	struct mvm_hc_console con = { { MVM_HC_CONSOLE, sizeof(con) }, 0x3000, 6 };
	struct mvm_hc_exit ex = { { MVM_HC_EXIT, sizeof(ex) }, 3, 0 };
	struct kvm_run *run;

	signal(SIGUSR2, SIG_IGN); /* vm_finish wakes the "main thread": us */
	fake_vm();
	run = vcpu.run;
	memcpy(vm.ram.hva + 0x2000, &con, sizeof(con));
	memcpy(vm.ram.hva + 0x3000, "hello\n", 6);
	CHECK(out32(MVM_HC_PORT, 0x2000) == EXIT_CONTINUE);
	CHECK_EQ(vm.console_bytes, 6);
	CHECK(vm.end == END_RUNNING);

	memcpy(vm.ram.hva + 0x2000, &ex, sizeof(ex));
	CHECK(out32(MVM_HC_PORT, 0x2000) == EXIT_STOP);
	CHECK(vm.end == END_GUEST_EXIT && vm.status == 3 && exit_status_of(&vm) == 1);

	fake_vm();
	CHECK(out32(MVM_HC_PORT, 0xfffff000) == EXIT_STOP); /* arguments outside RAM */
	CHECK(vm.end == END_GUEST_CRASH && !strcmp(vm.reason, "abi-violation"));
	CHECK_STR_CONTAINS(vm.message, "guest ABI violation");
	CHECK_EQ(exit_status_of(&vm), EXIT_GUEST_CRASH);

	fake_vm();
	CHECK(out32(0x80, 0) == EXIT_CONTINUE); /* unclaimed port: counted */
	CHECK_EQ(vm.pio_unclaimed.count, 1);
	CHECK_EQ(vm.pio_unclaimed.first_addr, 0x80);
	vcpu.run->io.direction = KVM_EXIT_IO_IN;
	CHECK(exit_dispatch(&vm, &vcpu) == EXIT_CONTINUE);
	CHECK_EQ(*(uint32_t *)((uint8_t *)vcpu.run + 1024), 0xffffffff);
	CHECK_EQ(vm.pio_unclaimed.count, 2);
	vcpu.run->io.data_offset = 8192; /* KVM handing us garbage must not crash us */
	CHECK(exit_dispatch(&vm, &vcpu) == EXIT_STOP);

	fake_vm();
	run = vcpu.run;
	run->exit_reason = KVM_EXIT_MMIO;
	run->mmio.phys_addr = 0xfee00000;
	run->mmio.is_write = 0;
	run->mmio.len = 4;
	CHECK(exit_dispatch(&vm, &vcpu) == EXIT_CONTINUE);
	CHECK_EQ(vm.mmio_unclaimed.count, 1);
	CHECK_EQ(run->mmio.data[0], 0xff);

	fake_vm();
	CHECK(plain_exit(KVM_EXIT_SHUTDOWN) == EXIT_STOP);
	CHECK(vm.end == END_GUEST_CRASH);
	CHECK_STR_CONTAINS(vm.message, "triple fault");
	CHECK_STR_CONTAINS(vm.message, "KVM_EXIT_SHUTDOWN");
	CHECK_STR_CONTAINS(vm.message, "registers unavailable"); /* no vCPU fd here */

	fake_vm();
	vcpu.run->internal.suberror = KVM_INTERNAL_ERROR_EMULATION;
	CHECK(plain_exit(KVM_EXIT_INTERNAL_ERROR) == EXIT_STOP);
	CHECK_STR_CONTAINS(vm.message, "emulation failed");
	CHECK_STR_CONTAINS(vm.message, "KVM_EXIT_INTERNAL_ERROR");

	fake_vm();
	vcpu.run->fail_entry.hardware_entry_failure_reason = 0x21;
	CHECK(plain_exit(KVM_EXIT_FAIL_ENTRY) == EXIT_STOP);
	CHECK_STR_CONTAINS(vm.message, "hardware reason 0x21");

	fake_vm();
	CHECK(plain_exit(KVM_EXIT_HLT) == EXIT_STOP);
	CHECK(!strcmp(vm.reason, "guest-halt"));
	CHECK_STR_CONTAINS(vm.message, "HLT");

	fake_vm();
	CHECK(plain_exit(KVM_EXIT_DEBUG) == EXIT_STOP);
	CHECK_STR_CONTAINS(vm.message, "unexpected exit (KVM_EXIT_DEBUG)");
	fake_vm();
	CHECK(plain_exit(100000) == EXIT_STOP);
	CHECK_STR_CONTAINS(vm.message, "unknown exit");
	fake_vm();
	CHECK(plain_exit(KVM_EXIT_INTR) == EXIT_CONTINUE);
	CHECK(vm.end == END_RUNNING);

	/* The first end wins: a later crash does not overwrite a guest exit. */
	fake_vm();
	memcpy(vm.ram.hva + 0x2000, &ex, sizeof(ex));
	out32(MVM_HC_PORT, 0x2000);
	plain_exit(KVM_EXIT_SHUTDOWN);
	CHECK(vm.end == END_GUEST_EXIT);
}
