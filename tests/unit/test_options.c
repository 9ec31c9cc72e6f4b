/* Unit tests: the size parser and the option parser. */
#include <errno.h>
#include <stdlib.h>

#include "check.h"
#include "app.h"

void test_parse_size(void)
{
	uint64_t v = 0;

	CHECK(parse_size("4096", &v) == 0 && v == 4096);
	CHECK(parse_size("64M", &v) == 0 && v == 64ULL << 20);
	CHECK(parse_size("64m", &v) == 0 && v == 64ULL << 20);
	CHECK(parse_size("1G", &v) == 0 && v == 1ULL << 30);
	CHECK(parse_size("16GiB", &v) == 0 && v == 16ULL << 30);
	CHECK(parse_size("2T", &v) == 0 && v == 2ULL << 40);
	CHECK(parse_size("8KB", &v) == 0 && v == 8192);
	CHECK(parse_size("0", &v) == 0 && v == 0);
	CHECK(parse_size("", &v) == -EINVAL);
	CHECK(parse_size(NULL, &v) == -EINVAL);
	CHECK(parse_size("G", &v) == -EINVAL);
	CHECK(parse_size("-1G", &v) == -EINVAL);
	CHECK(parse_size(" 1G", &v) == -EINVAL);
	CHECK(parse_size("1.5G", &v) == -EINVAL);
	CHECK(parse_size("1X", &v) == -EINVAL);
	CHECK(parse_size("1GG", &v) == -EINVAL);
	CHECK(parse_size("1Gi", &v) == -EINVAL);
	CHECK(parse_size("99999999999999999999", &v) == -EINVAL);
	CHECK(parse_size("17179869184T", &v) == -EINVAL); /* 2^34 T overflows */
	CHECK(parse_size("16777215T", &v) == 0 && v == 16777215ULL << 40);
}

static int parse(struct config *cfg, const char *const *args)
{
	char *argv[32];
	int argc = 0;

	for (; args[argc]; argc++)
		argv[argc] = (char *)args[argc];
	argv[argc] = NULL;
	return options_parse(argc, argv, cfg);
}

void test_options(void)
{
	struct config c;

	CHECK(parse(&c, (const char *const[]){ "minivmm", "g.bin", NULL }) == 0);
	CHECK_EQ(c.vm.mem_bytes, 1ULL << 30);
	CHECK_EQ(c.vm.vcpus, 1);
	CHECK(c.vm.guest_argc == 0 && !strcmp(c.vm.guest_path, "g.bin"));

	CHECK(parse(&c, (const char *const[]){ "minivmm", "-m", "64M", "-c", "2",
					       "--timeout", "1.5", "-q", "-o", "r.json",
					       "g.bin", "--", "hello", "--x", NULL }) ==
	      0);
	CHECK_EQ(c.vm.mem_bytes, 64ULL << 20);
	CHECK_EQ(c.vm.vcpus, 2);
	CHECK(c.vm.timeout_s == 1.5 && c.quiet && !strcmp(c.results_path, "r.json"));
	CHECK(c.vm.guest_argc == 2 && !strcmp(c.vm.guest_argv[0], "hello") &&
	      !strcmp(c.vm.guest_argv[1], "--x"));

	/* A parse that stops inside a cluster must not leave getopt in that argv (fuzz find). */
	{
		char *bad = strdup("-Vq"), *prog = strdup("minivmm");
		char *argv1[] = { prog, bad, NULL };

		fprintf(stderr, "    (expected usage errors follow)\n");
		CHECK(options_parse(2, argv1, &c) ==
		      1);	     /* -V answered, 'q' left unread */
		memset(bad, 'X', 3); /* the buffer reused for something else */
		CHECK(parse(&c, (const char *const[]){ "minivmm", "-q", "g.bin",
						       NULL }) == 0);
		CHECK(c.quiet && !strcmp(c.vm.guest_path, "g.bin"));
		free(bad);
		free(prog);
	}
	CHECK(parse(&c, (const char *const[]){ "minivmm", NULL }) == -EINVAL);
	CHECK(parse(&c, (const char *const[]){ "minivmm", "--mem", "lots", "g", NULL }) ==
	      -EINVAL);
	CHECK(parse(&c, (const char *const[]){ "minivmm", "--mem", "0", "g", NULL }) ==
	      -EINVAL);
	CHECK(parse(&c, (const char *const[]){ "minivmm", "--mem", "3M", "g", NULL }) ==
	      -EINVAL);
	CHECK(parse(&c, (const char *const[]){ "minivmm", "--mem", "9M", "g", NULL }) ==
	      -EINVAL);
	CHECK(parse(&c, (const char *const[]){ "minivmm", "--mem", "2T", "g", NULL }) ==
	      -EINVAL);
	CHECK(parse(&c, (const char *const[]){ "minivmm", "--vcpus", "0", "g", NULL }) ==
	      -EINVAL);
	CHECK(parse(&c, (const char *const[]){ "minivmm", "--vcpus", "x", "g", NULL }) ==
	      -EINVAL);
	CHECK(parse(&c, (const char *const[]){ "minivmm", "--timeout", "-1", "g",
					       NULL }) == -EINVAL);
	CHECK(parse(&c, (const char *const[]){ "minivmm", "--bogus", "g", NULL }) ==
	      -EINVAL);
	CHECK(parse(&c, (const char *const[]){ "minivmm", "g", "extra", NULL }) ==
	      -EINVAL);
	CHECK(parse(&c, (const char *const[]){ "minivmm", "--mem", NULL }) == -EINVAL);

	/* Flags set their own field and no other; --warmup defaults by --repeat. */
	CHECK(parse(&c, (const char *const[]){ "minivmm", "--strict-io", "--raw", "g",
					       NULL }) == 0);
	CHECK(c.vm.strict_io && c.vm.raw && !c.no_sandbox && !c.explain && !c.quiet &&
	      !c.compare && c.warmup == 0);
	CHECK(parse(&c, (const char *const[]){ "minivmm", "--no-sandbox", "--explain",
					       "--compare", "--repeat", "3", "g",
					       NULL }) == 0);
	CHECK(c.no_sandbox && c.explain && c.compare && !c.vm.strict_io && !c.vm.raw &&
	      c.warmup == 1);
	CHECK(parse(&c, (const char *const[]){ "minivmm", "--repeat", "3", "--warmup",
					       "0", "g", NULL }) == 0);
	CHECK(c.warmup == 0);
	CHECK(parse(&c, (const char *const[]){ "minivmm", "--warmup", "5", "g", NULL }) ==
	      0);
	CHECK(c.warmup == 5);

	/* --paging: the kernel's by default; uffd takes one handler per vCPU, as RAM allows. */
	CHECK(parse(&c, (const char *const[]){ "minivmm", "g", NULL }) == 0);
	CHECK(c.vm.paging == PAGING_KERNEL && c.vm.uffd_threads == 0 &&
	      c.vm.uffd_delay_us == 0);
	CHECK(parse(&c, (const char *const[]){ "minivmm", "--paging", "uffd", "-c", "3",
					       "-m", "64M", "--uffd-delay-us", "30", "g",
					       NULL }) == 0);
	CHECK(c.vm.paging == PAGING_UFFD && c.vm.uffd_threads == 3 &&
	      c.vm.uffd_delay_us == 30);
	CHECK(parse(&c, (const char *const[]){ "minivmm", "--paging", "uffd", "-c", "8",
					       "-m", "8M", "g", NULL }) == 0);
	CHECK_EQ(c.vm.uffd_threads, 4); /* 8 MiB: four 2 MiB slices */
	CHECK(parse(&c, (const char *const[]){ "minivmm", "--paging", "uffd",
					       "--uffd-threads", "5", "-m", "8M", "g",
					       NULL }) == -EINVAL);
	CHECK(parse(&c, (const char *const[]){ "minivmm", "--paging", "uffd",
					       "--record-touch", "f", "g", NULL }) == 0);
	CHECK(c.vm.record_touch_path && !strcmp(c.vm.record_touch_path, "f"));
	/* Options of uffd paging without it, and what uffd paging cannot go with. */
	const char *const *const wrong[] = {
		(const char *const[]){ "minivmm", "--paging", "nope", "g", NULL },
		(const char *const[]){ "minivmm", "--uffd-threads", "2", "g", NULL },
		(const char *const[]){ "minivmm", "--uffd-delay-us", "0", "g", NULL },
		(const char *const[]){ "minivmm", "--record-touch", "f", "g", NULL },
		(const char *const[]){ "minivmm", "--paging", "uffd", "--compare", "g",
				       NULL },
		(const char *const[]){ "minivmm", "--paging", "uffd", "--eager", "g",
				       NULL },
		(const char *const[]){ "minivmm", "--paging", "uffd", "--record-touch",
				       "f", "--repeat", "2", "g", NULL },
		(const char *const[]){ "minivmm", "--paging", "uffd", "--uffd-delay-us",
				       "1000001", "g", NULL },
	};
	for (size_t i = 0; i < ARRAY_SIZE(wrong); i++)
		CHECK(parse(&c, wrong[i]) == -EINVAL);
	CHECK(parse(&c, (const char *const[]){ "minivmm", "--paging", "uffd",
					       "--eager=touch", "g", NULL }) == 0);
}

/* --eager=background[:HOW] and --eager-order. */
void test_eager_options(void)
{
	struct config c;

	CHECK(parse(&c, (const char *const[]){ "minivmm", "--eager=background", "g",
					       NULL }) == 0);
	CHECK(c.vm.eager == EAGER_AUTO && c.vm.eager_background && !c.vm.eager_order);
	CHECK(parse(&c, (const char *const[]){ "minivmm", "--eager=background:populate",
					       "--eager-threads", "3", "--eager-order",
					       "frontier", "g", NULL }) == 0);
	CHECK(c.vm.eager == EAGER_POPULATE && c.vm.eager_background &&
	      c.vm.eager_threads == 3 && !strcmp(c.vm.eager_order, "frontier"));
	CHECK(parse(&c, (const char *const[]){ "minivmm", "--eager=background:prefault",
					       "g", NULL }) == 0);
	CHECK(c.vm.eager == EAGER_PREFAULT && c.vm.eager_background);
	/* A later --eager replaces an earlier one whole. */
	CHECK(parse(&c, (const char *const[]){ "minivmm", "--eager=background",
					       "--eager=populate", "--eager-order",
					       "back", "g", NULL }) == 0);
	CHECK(c.vm.eager == EAGER_POPULATE && !c.vm.eager_background);
	CHECK(parse(&c, (const char *const[]){ "minivmm", "--eager", "--eager-order",
					       "/tmp/order", "g", NULL }) == 0);
	CHECK(!strcmp(c.vm.eager_order, "/tmp/order"));
	fprintf(stderr, "    (expected usage errors follow)\n");
	const char *const *const wrong[] = {
		(const char *const[]){ "minivmm", "--eager=background:touch", "g", NULL },
		(const char *const[]){ "minivmm", "--eager=background:", "g", NULL },
		(const char *const[]){ "minivmm", "--eager=background:sideways", "g",
				       NULL },
		(const char *const[]){ "minivmm", "--eager=backgroundx", "g", NULL },
		(const char *const[]){ "minivmm", "--eager-order", "back", "g", NULL },
		(const char *const[]){ "minivmm", "--eager=touch", "--eager-order",
				       "back", "g", NULL },
		(const char *const[]){ "minivmm", "--eager", "--eager-order", "frontier",
				       "g", NULL },
		(const char *const[]){ "minivmm", "--eager", "--eager-order", "", "g",
				       NULL },
		(const char *const[]){ "minivmm", "--eager=background", "--paging",
				       "uffd", "g", NULL },
		(const char *const[]){ "minivmm", "--eager", "background", "--", "hello",
				       NULL },
	};
	for (size_t i = 0; i < ARRAY_SIZE(wrong); i++)
		CHECK(parse(&c, wrong[i]) == -EINVAL);
}
