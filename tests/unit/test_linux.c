/* Unit tests: the Linux boot protocol's builders (vmm/boot/linux*.c, mptable.c), /init's command line (guest/linux/cmdline.c) and COM1's IRQ line. */
#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "check.h"
#include "experiment.h"
#include "cmdline.h"

/* A bzImage's first 4 KiB and a kernel after it: the fields linux_kernel_check reads. */
static size_t make_bzimage(uint8_t *b, size_t cap, uint16_t version, uint16_t xlf)
{
	uint32_t syssize = 4096 / 16, init = 4 << 20, initrd_max = 0x37ffffff, cl = 2047;
	uint64_t pref = 0x1000000;

	memset(b, 0, cap);
	b[BP_SETUP_SECTS] = 1; /* setup: 1024 bytes */
	memcpy(b + BP_SYSSIZE, &syssize, 4);
	b[BP_JUMP] = 0xeb;
	b[BP_JUMP + 1] = 0x66;
	memcpy(b + BP_HEADER, "HdrS", 4);
	memcpy(b + BP_VERSION, &version, 2);
	b[BP_KERNEL_VERSION] = 0x00;
	b[BP_KERNEL_VERSION + 1] = 0x01; /* the string at 0x300 */
	strcpy((char *)b + 0x300, "6.1.2-test (x@y) #1");
	memcpy(b + BP_INITRD_MAX, &initrd_max, 4);
	memcpy(b + BP_XLOADFLAGS, &xlf, 2);
	memcpy(b + BP_CMDLINE_SIZE, &cl, 4);
	memcpy(b + BP_PREF_ADDRESS, &pref, 8);
	memcpy(b + BP_INIT_SIZE, &init, 4);
	return 1024 + 4096;
}

static uint8_t sum8(const uint8_t *p, size_t n)
{
	uint8_t s = 0;

	for (size_t i = 0; i < n; i++)
		s = (uint8_t)(s + p[i]);
	return s;
}

void test_linux_boot(void)
{
	static uint8_t img[8192], zp[4096];
	struct linux_kernel k;
	struct linux_e820 e[8];
	uint64_t gpa;
	char err[512];
	size_t n = make_bzimage(img, sizeof(img), 0x020f, 1);

	CHECK(linux_kernel_check(img, n, &k, err, sizeof(err)) == 0);
	CHECK(!strcmp(k.release, "6.1.2-test"));
	CHECK_EQ(k.setup_bytes, 1024);
	CHECK_EQ(k.code_bytes, 4096);
	CHECK_EQ(k.kernel_end, 0x1000000 + (4 << 20));
	CHECK(linux_kernel_check(img, n - 1, &k, err, sizeof(err)) == -ENOEXEC);
	CHECK_STR_CONTAINS(err, "truncated");
	make_bzimage(img, sizeof(img), 0x020b, 1);
	CHECK(linux_kernel_check(img, n, &k, err, sizeof(err)) == -ENOEXEC);
	CHECK_STR_CONTAINS(err, "2.11 is too old");
	make_bzimage(img, sizeof(img), 0x020f, 0);
	CHECK(linux_kernel_check(img, n, &k, err, sizeof(err)) == -ENOEXEC);
	CHECK_STR_CONTAINS(err, "XLF_KERNEL_64");
	make_bzimage(img, sizeof(img), 0x020f, 1);
	img[BP_HEADER] = 'X';
	CHECK(linux_kernel_check(img, n, &k, err, sizeof(err)) == -ENOEXEC);
	CHECK_STR_CONTAINS(err, "HdrS");
	make_bzimage(img, sizeof(img), 0x020f, 1);
	CHECK(linux_kernel_check(img, n, &k, err, sizeof(err)) == 0);

	/* The initrd: the top page-aligned slot below RAM's end and initrd_addr_max, above the kernel. */
	CHECK(linux_initrd_place(&k, 5000, 64 << 20, &gpa, err, sizeof(err)) == 0);
	CHECK_EQ(gpa, (64 << 20) - 8192);
	CHECK(linux_initrd_place(&k, 5000, 2ULL << 30, &gpa, err, sizeof(err)) == 0);
	CHECK_EQ(gpa, 0x38000000 - 8192);
	CHECK(linux_initrd_place(&k, 60 << 20, 64 << 20, &gpa, err, sizeof(err)) ==
	      -E2BIG);
	CHECK_STR_CONTAINS(err, "or a larger --mem");

	/* e820: low RAM, the reserved EBDA..1 MiB, RAM above. */
	CHECK_EQ(linux_e820(64 << 20, e, 8), 3);
	CHECK(e[0].addr == 0 && e[0].size == 0x9fc00 && e[0].type == 1);
	CHECK(e[1].addr == 0x9fc00 && e[1].size == 0x100000 - 0x9fc00 && e[1].type == 2);
	CHECK(e[2].addr == 0x100000 && e[2].size == (64 << 20) - 0x100000 &&
	      e[2].type == 1);

	/* The zero page: the header copied, the loader's fields set. */
	linux_zero_page(zp, &k, 0x20000, 0x3000000, 5000, 64 << 20);
	CHECK(!memcmp(zp + BP_HEADER, "HdrS", 4));
	CHECK_EQ(zp[BP_TYPE_OF_LOADER], 0xff);
	CHECK(zp[BP_LOADFLAGS] & 0x01);
	CHECK_EQ(*(uint32_t *)(zp + BP_CMD_LINE_PTR), 0x20000);
	CHECK_EQ(*(uint32_t *)(zp + BP_RAMDISK_IMAGE), 0x3000000);
	CHECK_EQ(*(uint32_t *)(zp + BP_RAMDISK_SIZE), 5000);
	CHECK_EQ(zp[BP_E820_ENTRIES], 3);
	CHECK_EQ(*(uint64_t *)(zp + BP_E820_TABLE + 2 * 20 + 8), (64 << 20) - 0x100000);
	/* Nothing past the setup header's end (0x202 + jump byte) came from the image. */
	CHECK_EQ(zp[0x300], 0);
}

/* Header fields that would wrap the kernel's end past 2^64 (issue 38): refused, not wrapped small. */
void test_linux_header_wrap(void)
{
	static uint8_t img[8192];
	struct linux_kernel k;
	char err[512];
	size_t n = make_bzimage(img, sizeof(img), 0x020f, 1);
	const uint64_t prefs[] = { 0ULL - 4096, 0ULL - (4ULL << 20), 0ULL - (64ULL << 20),
				   0x8000000000000000ULL, LINUX_MEM_MAX };

	for (size_t i = 0; i < ARRAY_SIZE(prefs); i++) {
		memcpy(img + BP_PREF_ADDRESS, &prefs[i], 8);
		err[0] = '\0';
		CHECK(linux_kernel_check(img, n, &k, err, sizeof(err)) == -ENOEXEC);
		CHECK_STR_CONTAINS(err, "header is inconsistent");
	}
	/* init_size up to 4 GiB - 1 from a high (unwrapped) base: past 3 GiB, refused. */
	{
		uint64_t pref = 0x1000000;
		uint32_t init = 0xffffffff;

		memcpy(img + BP_PREF_ADDRESS, &pref, 8);
		memcpy(img + BP_INIT_SIZE, &init, 4);
		CHECK(linux_kernel_check(img, n, &k, err, sizeof(err)) == -ENOEXEC);
		/* The largest that fits: the end exactly at LINUX_MEM_MAX. */
		init = (uint32_t)(LINUX_MEM_MAX - pref);
		memcpy(img + BP_INIT_SIZE, &init, 4);
		CHECK(linux_kernel_check(img, n, &k, err, sizeof(err)) == 0);
		CHECK_EQ(k.kernel_end, LINUX_MEM_MAX);
	}
}

/* Placing a kernel goes through the checked translator: what does not fit is an error, not a write. */
void test_linux_place(void)
{
	static uint8_t img[8192];
	struct linux_boot *lb = calloc(1, sizeof(*lb));
	struct guest_ram ram = { 0 };
	char err[512] = "";
	size_t n = make_bzimage(img, sizeof(img), 0x020f, 1);

	CHECK(lb != NULL);
	if (!lb)
		return;
	CHECK(linux_kernel_check(img, n, &lb->k, err, sizeof(err)) == 0);
	lb->kernel = img;
	lb->kernel_len = n;
	lb->vcpus = 1;
	snprintf(lb->cmdline, sizeof(lb->cmdline), "console=ttyS0 -- hello");
	ram.size = 64ULL << 20;
	ram.hva = mmap(NULL, ram.size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	CHECK(ram.hva != MAP_FAILED);
	lb->mem_bytes = ram.size;
	CHECK(linux_boot_place(lb, &ram, err, sizeof(err)) == 0);
	CHECK(!strcmp((char *)ram.hva + LINUX_CMDLINE_GPA, "console=ttyS0 -- hello"));
	CHECK(!memcmp(ram.hva + LINUX_ZERO_PAGE_GPA + BP_HEADER, "HdrS", 4));
	/* RAM smaller than where the kernel goes: refused with the piece named. */
	ram.size = LINUX_LOAD_GPA + 1024;
	CHECK(linux_boot_place(lb, &ram, err, sizeof(err)) == -EFAULT);
	CHECK_STR_CONTAINS(err, "the kernel (4096 bytes at 0x100000) does not fit");
	/* An initrd past RAM's end (a placement gone wrong): refused, nothing read past it. */
	ram.size = 64ULL << 20;
	lb->initrd = img;
	lb->initrd_len = sizeof(img);
	lb->initrd_gpa = ram.size - 4096;
	CHECK(linux_boot_place(lb, &ram, err, sizeof(err)) == -EFAULT);
	CHECK_STR_CONTAINS(err, "the initrd (8192 bytes at 0x3fff000)");
	lb->initrd_gpa = 0ULL - 4096; /* the sum wraps */
	CHECK(linux_boot_place(lb, &ram, err, sizeof(err)) == -EFAULT);
	munmap(ram.hva, 64ULL << 20);
	free(lb);
}

/* /init's words: as the kernel's next_arg() leaves them (lib/cmdline.c). */
static void words(const char *line, int want_n, const char *const *want)
{
	char buf[512], *args[9];
	int n;

	snprintf(buf, sizeof(buf), "%s", line);
	n = lx_cmdline_args(buf, args, 8);
	CHECK_EQ(n, want_n);
	for (int i = 0; i < n && i < want_n; i++)
		if (strcmp(args[i], want[i])) {
			fprintf(stderr, "    [%s] word %d: '%s', expected '%s'\n", line,
				i, args[i], want[i]);
			check_failures++;
		}
	if (n >= 0)
		CHECK(args[n] == NULL);
}

void test_linux_init_args(void)
{
	const char *two[] = { "hello", "two words", "x" };
	const char *empty[] = { "a", "", "b" };
	const char *mid[] = { "a\"b c\"d", "e" };
	const char *nv[] = { "k=v w", "k2=v2 w2", "=x y" };
	const char *tab[] = { "a\tb", "c" };
	const char *nbsp[] = { "\xc3\xa0", "x" };
	const char *dashes[] = { "hello", "--", "y" };
	const char *unclosed[] = { "a b c" };

	words("console=ttyS0 quiet -- hello \"two words\" x", 3, two);
	words("-- a \"\" b", 3, empty);
	/* A quote mid-word joins across the space and stays. */
	words("-- a\"b c\"d e", 2, mid);
	words("-- \"k=v w\" k2=\"v2 w2\" \"=x y\"", 3, nv);
	/* The kernel's spaces: tab, and 0xa0 (the second byte of UTF-8 'à'). */
	words("--\ta\"\tb\"x c", 2, (const char *[]){ "a\"\tb\"x", "c" });
	words("-- \"a\tb\" c", 2, tab);
	words("-- \"\xc3\xa0\" x", 2, nbsp);
	/* The first "--" only, quoted or not; before it, quotes hide one. */
	words("x=\"a -- b\" \"--\" hello -- y", 3, dashes);
	words("-- \"a b c", 1, unclosed);
	words("root=none quiet", -1, NULL);
	words("a --x b", -1, NULL);
	words("--=x", -1, NULL);
	words("", -1, NULL);
	words("  --  ", 0, NULL);
}

/* minivmm's quoting (linux_boot_read) and /init's unquoting give back the arguments. */
void test_linux_args_round_trip(void)
{
	static uint8_t img[8192];
	char path[] = "/tmp/minivmm-bz-XXXXXX", err[512];
	char *const argv[] = { "hello", "two words", "",  "a\tb", "\xc3\xa0",
			       "k=v w", "--",	     "x", "=y z" };
	const int argc = (int)ARRAY_SIZE(argv);
	struct linux_boot *lb = calloc(1, sizeof(*lb));
	char *args[16];
	size_t n = make_bzimage(img, sizeof(img), 0x020f, 1);
	int fd = mkstemp(path);

	CHECK(lb && fd >= 0);
	if (!lb || fd < 0)
		return;
	CHECK(write(fd, img, n) == (ssize_t)n);
	close(fd);
	CHECK(linux_boot_read(lb, path, NULL, "console=ttyS0 x=\"a -- b\"", argc, argv,
			      64ULL << 20, 1, err, sizeof(err)) == 0);
	CHECK_EQ(lx_cmdline_args(lb->cmdline, args, 15), argc);
	for (int i = 0; i < argc; i++)
		CHECK(!strcmp(args[i], argv[i]));
	/* What cannot travel is refused. */
	linux_boot_free(lb);
	CHECK(linux_boot_read(lb, path, NULL, NULL, 1, (char *const[]){ "a\"b" },
			      64ULL << 20, 1, err, sizeof(err)) == -EINVAL);
	CHECK_STR_CONTAINS(err, "cannot carry a double quote");
	linux_boot_free(lb);
	free(lb);
	unlink(path);
}

void test_linux_mptable(void)
{
	static uint8_t buf[8192];
	size_t n = linux_mptable(buf, sizeof(buf), 0x9fc00, 4);
	uint16_t len, count;
	uint32_t physptr;

	CHECK_EQ(n, linux_mptable_size(4));
	CHECK_EQ(n, 16 + 44 + 4 * 20 + 8 + 8 + 18 * 8);
	CHECK(!memcmp(buf, "_MP_", 4));
	memcpy(&physptr, buf + 4, 4);
	CHECK_EQ(physptr, 0x9fc00 + 16);
	CHECK_EQ(sum8(buf, 16), 0);
	CHECK(!memcmp(buf + 16, "PCMP", 4));
	memcpy(&len, buf + 16 + 4, 2);
	memcpy(&count, buf + 16 + 34, 2);
	CHECK_EQ(len, n - 16);
	CHECK_EQ(count, 4 + 1 + 1 + 16 + 2);
	CHECK_EQ(sum8(buf + 16, len), 0);
	/* CPU entries: APIC ids 0..3, enabled, vCPU 0 the BSP; the IOAPIC's id follows them. */
	CHECK_EQ(buf[60], 0);
	CHECK_EQ(buf[60 + 3], 3);
	CHECK_EQ(buf[60 + 3 * 20 + 1], 3);
	CHECK_EQ(buf[60 + 3 * 20 + 3], 1);
	CHECK_EQ(buf[60 + 80 + 8 + 1], 4);
	CHECK_EQ(linux_mptable(buf, 100, 0x9fc00, 4), 0);
	CHECK_EQ(linux_mptable(buf, sizeof(buf), 0x9fc00, 255), 0);
}

/* COM1's interrupt: raised by enabling THRI with THR empty, lowered by the IIR read and the THR write. */
static int levels[64], nlevels;
static void irq_line(void *cookie, unsigned line, int level)
{
	(void)cookie;
	CHECK_EQ(line, 4);
	if (nlevels < 64)
		levels[nlevels++] = level;
}

static uint8_t com1(const struct io_bus *bus, unsigned reg, int write, uint8_t v)
{
	const struct io_dev *d = io_bus_find(bus, MVM_COM1_PORT + reg);

	d->io(d->cookie, 0, MVM_COM1_PORT + reg, write, &v, 1);
	return v;
}

void test_uart_irq(void)
{
	struct io_bus bus;
	struct console *c = console_create(1, stdout, 1);

	io_bus_init(&bus, 0x10000);
	CHECK(console_register(c, &bus) == 0);
	console_set_irq(c, irq_line, NULL, 4);
	com1(&bus, 2, 1, 0x01);			    /* FCR: FIFOs on */
	CHECK_EQ(com1(&bus, 2, 0, 0) & 0xc1, 0xc1); /* a 16550A, nothing pending */
	com1(&bus, 1, 1, 0x02);			    /* IER: THRI */
	CHECK_EQ(nlevels, 1);
	CHECK_EQ(levels[0], 1);
	CHECK_EQ(com1(&bus, 2, 0, 0) & 0x0f,
		 0x02); /* IIR says THRI, and that clears it */
	CHECK_EQ(levels[nlevels - 1], 0);
	CHECK_EQ(com1(&bus, 2, 0, 0) & 0x0f, 0x01);
	com1(&bus, 0, 1, 'x'); /* THR: the byte goes at once, THR empty again: up */
	CHECK_EQ(levels[nlevels - 1], 1);
	com1(&bus, 0, 1, 'y'); /* down and up again: an edge per byte */
	CHECK_EQ(levels[nlevels - 2], 0);
	CHECK_EQ(levels[nlevels - 1], 1);
	com1(&bus, 1, 1, 0x00); /* THRI off: down */
	CHECK_EQ(levels[nlevels - 1], 0);
	CHECK_EQ(console_counts(c).irqs, 3);
	/* Loopback: MSR mirrors MCR (Linux's probe: 0x1a gives 0x90). */
	com1(&bus, 4, 1, 0x1a);
	CHECK_EQ(com1(&bus, 6, 0, 0) & 0xf0, 0x90);
	console_free(c);
}
