/* Unit tests: the size parser and the option parser. */
#include <errno.h>
#include <stdlib.h>

#include "check.h"
#include "experiment.h"

void test_parse_size(void)
{
	uint64_t v = 0;

	CHECK(mm_parse_size("4096", &v) == 0 && v == 4096);
	CHECK(mm_parse_size("64M", &v) == 0 && v == 64ULL << 20);
	CHECK(mm_parse_size("64m", &v) == 0 && v == 64ULL << 20);
	CHECK(mm_parse_size("1G", &v) == 0 && v == 1ULL << 30);
	CHECK(mm_parse_size("16GiB", &v) == 0 && v == 16ULL << 30);
	CHECK(mm_parse_size("2T", &v) == 0 && v == 2ULL << 40);
	CHECK(mm_parse_size("8KB", &v) == 0 && v == 8192);
	CHECK(mm_parse_size("0", &v) == 0 && v == 0);
	CHECK(mm_parse_size("", &v) == -EINVAL);
	CHECK(mm_parse_size(NULL, &v) == -EINVAL);
	CHECK(mm_parse_size("G", &v) == -EINVAL);
	CHECK(mm_parse_size("-1G", &v) == -EINVAL);
	CHECK(mm_parse_size(" 1G", &v) == -EINVAL);
	CHECK(mm_parse_size("1.5G", &v) == -EINVAL);
	CHECK(mm_parse_size("1X", &v) == -EINVAL);
	CHECK(mm_parse_size("1GG", &v) == -EINVAL);
	CHECK(mm_parse_size("1Gi", &v) == -EINVAL);
	CHECK(mm_parse_size("99999999999999999999", &v) == -EINVAL);
	CHECK(mm_parse_size("17179869184T", &v) == -EINVAL); /* 2^34 T overflows */
	CHECK(mm_parse_size("16777215T", &v) == 0 && v == 16777215ULL << 40);
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
	CHECK(parse(&c, (const char *const[]){ "minivmm", "--mem", "lots", "g.bin",
					       NULL }) == -EINVAL);
	CHECK(parse(&c, (const char *const[]){ "minivmm", "--mem", "0", "g.bin",
					       NULL }) == -EINVAL);
	CHECK(parse(&c, (const char *const[]){ "minivmm", "--mem", "3M", "g.bin",
					       NULL }) == -EINVAL);
	CHECK(parse(&c, (const char *const[]){ "minivmm", "--mem", "9M", "g.bin",
					       NULL }) == -EINVAL);
	CHECK(parse(&c, (const char *const[]){ "minivmm", "--mem", "2T", "g.bin",
					       NULL }) == -EINVAL);
	CHECK(parse(&c, (const char *const[]){ "minivmm", "--vcpus", "0", "g.bin",
					       NULL }) == -EINVAL);
	CHECK(parse(&c, (const char *const[]){ "minivmm", "--vcpus", "x", "g.bin",
					       NULL }) == -EINVAL);
	/* Above any KVM's limit is KVM's to refuse (it says its limit); past 65536 is a typo. */
	CHECK(parse(&c, (const char *const[]){ "minivmm", "--vcpus", "65536", "g.bin",
					       NULL }) == 0 &&
	      c.vm.vcpus == 65536);
	CHECK(parse(&c, (const char *const[]){ "minivmm", "--vcpus", "65537", "g.bin",
					       NULL }) == -EINVAL);
	CHECK(parse(&c, (const char *const[]){ "minivmm", "--timeout", "-1", "g.bin",
					       NULL }) == -EINVAL);
	CHECK(parse(&c, (const char *const[]){ "minivmm", "--bogus", "g.bin", NULL }) ==
	      -EINVAL);
	CHECK(parse(&c, (const char *const[]){ "minivmm", "g", "extra", NULL }) ==
	      -EINVAL);
	CHECK(parse(&c, (const char *const[]){ "minivmm", "--mem", NULL }) == -EINVAL);

	/* Flags set their own field and no other; --warmup defaults by --repeat. */
	CHECK(parse(&c, (const char *const[]){ "minivmm", "--strict-io", "--raw", "g.bin",
					       NULL }) == 0);
	CHECK(c.vm.strict_io && c.vm.raw && !c.no_sandbox && !c.explain && !c.quiet &&
	      !c.compare && c.warmup == 0);
	CHECK(parse(&c, (const char *const[]){ "minivmm", "--no-sandbox", "--explain",
					       "--compare", "--repeat", "3", "g.bin",
					       NULL }) == 0);
	CHECK(c.no_sandbox && c.explain && c.compare && !c.vm.strict_io && !c.vm.raw &&
	      c.warmup == 1);
	CHECK(parse(&c, (const char *const[]){ "minivmm", "--repeat", "3", "--warmup",
					       "0", "g.bin", NULL }) == 0);
	CHECK(c.warmup == 0);
	CHECK(parse(&c, (const char *const[]){ "minivmm", "--warmup", "5", "g.bin",
					       NULL }) == 0);
	CHECK(c.warmup == 5);

	/* --paging: the kernel's by default; uffd takes one handler per vCPU, as RAM allows. */
	CHECK(parse(&c, (const char *const[]){ "minivmm", "g.bin", NULL }) == 0);
	CHECK(c.vm.paging == PAGING_KERNEL && c.vm.uffd_threads == 0 &&
	      c.vm.uffd_delay_us == 0);
	CHECK(parse(&c, (const char *const[]){ "minivmm", "--paging", "uffd", "-c", "3",
					       "-m", "64M", "--uffd-delay-us", "30",
					       "g.bin", NULL }) == 0);
	CHECK(c.vm.paging == PAGING_UFFD && c.vm.uffd_threads == 3 &&
	      c.vm.uffd_delay_us == 30);
	CHECK(parse(&c, (const char *const[]){ "minivmm", "--paging", "uffd", "-c", "8",
					       "-m", "8M", "g.bin", NULL }) == 0);
	CHECK_EQ(c.vm.uffd_threads, 4); /* 8 MiB: four 2 MiB slices */
	CHECK(parse(&c, (const char *const[]){ "minivmm", "--paging", "uffd",
					       "--uffd-threads", "5", "-m", "8M", "g.bin",
					       NULL }) == -EINVAL);
	CHECK(parse(&c, (const char *const[]){ "minivmm", "--paging", "uffd",
					       "--record-touch", "f", "g.bin", NULL }) ==
	      0);
	CHECK(c.vm.record_touch_path && !strcmp(c.vm.record_touch_path, "f"));
	/* Options of uffd paging without it, and what uffd paging cannot go with. */
	const char *const *const wrong[] = {
		(const char *const[]){ "minivmm", "--paging", "nope", "g.bin", NULL },
		(const char *const[]){ "minivmm", "--uffd-threads", "2", "g.bin", NULL },
		(const char *const[]){ "minivmm", "--uffd-delay-us", "0", "g.bin", NULL },
		(const char *const[]){ "minivmm", "--record-touch", "f", "g.bin", NULL },
		(const char *const[]){ "minivmm", "--paging", "uffd", "--compare",
				       "g.bin", NULL },
		(const char *const[]){ "minivmm", "--paging", "uffd", "--eager", "g.bin",
				       NULL },
		(const char *const[]){ "minivmm", "--paging", "uffd", "--record-touch",
				       "f", "--repeat", "2", "g.bin", NULL },
		(const char *const[]){ "minivmm", "--paging", "uffd", "--uffd-delay-us",
				       "1000001", "g.bin", NULL },
	};
	for (size_t i = 0; i < ARRAY_SIZE(wrong); i++)
		CHECK(parse(&c, wrong[i]) == -EINVAL);
	CHECK(parse(&c, (const char *const[]){ "minivmm", "--paging", "uffd",
					       "--eager=touch", "g.bin", NULL }) == 0);
}

/* What to type instead: the nearest option, refused abbreviations, a command line to paste. */
void test_suggest(void)
{
	const char *const names[] = { "mem",   "mem-path",	"mem-grow",
				      "eager", "eager-threads", "vcpus" };
	char buf[256];
	struct config c;

	CHECK(!strcmp(suggest_option("memory", names, 6, buf, sizeof(buf)), "--mem"));
	CHECK(!strcmp(suggest_option("memory=64M", names, 6, buf, sizeof(buf)), "--mem"));
	CHECK(!strcmp(suggest_option("eagre", names, 6, buf, sizeof(buf)), "--eager"));
	CHECK(!strcmp(suggest_option("vcpux", names, 6, buf, sizeof(buf)), "--vcpus"));
	CHECK(!strcmp(suggest_option("mem-", names, 6, buf, sizeof(buf)),
		      "one of --mem-path, --mem-grow"));
	CHECK(!suggest_option("frobnicate", names, 6, buf, sizeof(buf)));
	CHECK(!suggest_option("x", names, 6, buf, sizeof(buf)));
	CHECK(!strcmp(suggest_cmdline(buf, sizeof(buf),
				      (const char *const[]){ "./minivmm", "--", "hello",
							     "a b", "it's", "" },
				      6),
		      "./minivmm -- hello 'a b' 'it'\\''s' ''"));
	/* A line longer than the buffer ends cut short, terminated. */
	CHECK(strlen(suggest_cmdline(buf, 8, (const char *const[]){ "0123456789", "x" },
				     2)) == 7);

	fprintf(stderr, "    (expected usage errors follow)\n");
	/* Full names only: getopt_long's abbreviations are refused. */
	CHECK(parse(&c, (const char *const[]){ "minivmm", "--vcpu", "2", "g.bin",
					       NULL }) == -EINVAL);
	CHECK(parse(&c, (const char *const[]){ "minivmm", "--vcpu=2", "g.bin", NULL }) ==
	      -EINVAL);
	CHECK(parse(&c, (const char *const[]){ "minivmm", "--vcpus=2", "g.bin", NULL }) ==
		      0 &&
	      c.vm.vcpus == 2);
	/* A size without a unit is bytes: 64 is below the minimum. */
	CHECK(parse(&c, (const char *const[]){ "minivmm", "--mem", "64", "g.bin",
					       NULL }) == -EINVAL);
	/* Options after the image, and a workload that lost its "--". */
	CHECK(parse(&c, (const char *const[]){ "minivmm", "g.bin", "--mem", "64M",
					       NULL }) == -EINVAL);
	CHECK(parse(&c, (const char *const[]){ "minivmm", "--mem", "64M",
					       "no-such-workload", NULL }) == -EINVAL);
}

/* --compare=LIST: the modes' names, each mode's machine, and the list that lost its '='. */
void test_compare_modes(void)
{
	struct config c;
	struct vm_config m;
	unsigned modes[COMPARE_MAX_MODES], n;
	char err[256];

	CHECK(compare_modes_parse("lazy,eager,background,uffd,replay", modes, &n, err,
				  sizeof(err)) == 0);
	CHECK(n == 5 && modes[0] == MODE_LAZY && modes[2] == MODE_BACKGROUND &&
	      modes[4] == MODE_REPLAY);
	CHECK(compare_modes_parse("lazy,nope", modes, &n, err, sizeof(err)) == -EINVAL);
	CHECK_STR_CONTAINS(
		err, "no mode 'nope'; modes are lazy, eager, background, uffd, replay");
	CHECK(compare_modes_parse("lazy,egaer", modes, &n, err, sizeof(err)) == -EINVAL);
	CHECK_STR_CONTAINS(err, "no mode 'egaer' (did you mean eager?)");
	/* "--compare=lazy, eager": the list ends at the space; the next word is no image. */
	CHECK(parse(&c, (const char *const[]){ "minivmm", "--compare=lazy,", "eager",
					       NULL }) == -EINVAL);
	CHECK(compare_modes_parse("lazy", modes, &n, err, sizeof(err)) == -EINVAL);
	CHECK(compare_modes_parse("lazy,,eager", modes, &n, err, sizeof(err)) == -EINVAL);
	CHECK(compare_modes_parse("eager,lazy,eager", modes, &n, err, sizeof(err)) ==
	      -EINVAL);
	CHECK_STR_CONTAINS(err, "eager twice");

	/* No list: lazy, eager (today's --compare); a list needs '='. */
	CHECK(parse(&c, (const char *const[]){ "minivmm", "--compare", "g.bin", NULL }) ==
	      0);
	CHECK(c.compare && c.ncompare_modes == 2 && c.compare_modes[0] == MODE_LAZY &&
	      c.compare_modes[1] == MODE_EAGER && c.vm.eager == EAGER_AUTO);
	CHECK(parse(&c, (const char *const[]){ "minivmm", "--compare=uffd,lazy",
					       "--uffd-delay-us", "30", "g.bin",
					       NULL }) == 0);
	CHECK(c.ncompare_modes == 2 && c.compare_modes[0] == MODE_UFFD &&
	      c.vm.paging == PAGING_KERNEL && c.vm.uffd_delay_us == 30);
	CHECK(parse(&c, (const char *const[]){ "minivmm", "--compare", "lazy,uffd", "--",
					       "flat", NULL }) == -EINVAL);
	CHECK(parse(&c, (const char *const[]){ "minivmm", "--compare", "eager", NULL }) ==
	      -EINVAL);
	/* Not the uffd options without a uffd mode, nor --record-touch in a compare. */
	CHECK(parse(&c, (const char *const[]){ "minivmm", "--compare", "--uffd-threads",
					       "1", "g.bin", NULL }) == -EINVAL);
	CHECK(parse(&c, (const char *const[]){ "minivmm", "--compare=lazy,uffd",
					       "--record-touch", "f", "g.bin", NULL }) ==
	      -EINVAL);

	/* Each mode's machine from the same options: what it sets, and what it clears. */
	CHECK(parse(&c, (const char *const[]){ "minivmm", "--compare", "--eager=populate",
					       "--eager-threads", "2", "-c", "2", "g.bin",
					       NULL }) == 0);
	CHECK(compare_modes[MODE_LAZY].apply(&c.vm, &m, err, sizeof(err)) == 0);
	CHECK(m.eager == EAGER_NONE && !m.eager_threads && !m.eager_background &&
	      m.paging == PAGING_KERNEL && m.vcpus == 2);
	CHECK(compare_modes[MODE_EAGER].apply(&c.vm, &m, err, sizeof(err)) == 0);
	CHECK(m.eager == EAGER_POPULATE && m.eager_threads == 2 && !m.eager_background);
	CHECK(compare_modes[MODE_BACKGROUND].apply(&c.vm, &m, err, sizeof(err)) == 0);
	CHECK(m.eager == EAGER_POPULATE && m.eager_background && !m.eager_order);
	CHECK(compare_modes[MODE_UFFD].apply(&c.vm, &m, err, sizeof(err)) == 0);
	CHECK(m.eager == EAGER_NONE && m.paging == PAGING_UFFD && m.uffd_threads == 2);
	CHECK(compare_modes[MODE_REPLAY].apply(&c.vm, &m, err, sizeof(err)) == 0);
	CHECK(m.eager_background && !m.eager_order &&
	      compare_mode_needs_recording(MODE_REPLAY, &c.vm) &&
	      !compare_mode_needs_recording(MODE_BACKGROUND, &c.vm));
	compare_recording_config(&c.vm, "r.touch", &m);
	CHECK(m.paging == PAGING_UFFD && m.eager == EAGER_NONE &&
	      !strcmp(m.record_touch_path, "r.touch") && m.uffd_delay_us == 0);
	/* An order file is replay's; an order's name is background's. */
	c.vm.eager_order = "order.touch";
	CHECK(compare_modes[MODE_REPLAY].apply(&c.vm, &m, err, sizeof(err)) == 0);
	CHECK(m.eager_order && !strcmp(m.eager_order, "order.touch") &&
	      !compare_mode_needs_recording(MODE_REPLAY, &c.vm));
	CHECK(compare_modes[MODE_BACKGROUND].apply(&c.vm, &m, err, sizeof(err)) == 0 &&
	      !m.eager_order);
	c.vm.eager_order = "back";
	CHECK(compare_modes[MODE_BACKGROUND].apply(&c.vm, &m, err, sizeof(err)) == 0 &&
	      m.eager_order && !strcmp(m.eager_order, "back"));
	/* Background is the host's: not with the guest's own touch pass. */
	CHECK(parse(&c, (const char *const[]){ "minivmm", "--compare=lazy,background",
					       "--eager=touch", "g.bin", NULL }) == 0);
	CHECK(compare_modes[MODE_BACKGROUND].apply(&c.vm, &m, err, sizeof(err)) ==
	      -EINVAL);
}

/* --eager=background[:HOW] and --eager-order. */
void test_eager_options(void)
{
	struct config c;

	CHECK(parse(&c, (const char *const[]){ "minivmm", "--eager=background", "g.bin",
					       NULL }) == 0);
	CHECK(c.vm.eager == EAGER_AUTO && c.vm.eager_background && !c.vm.eager_order);
	CHECK(parse(&c, (const char *const[]){ "minivmm", "--eager=background:populate",
					       "--eager-threads", "3", "--eager-order",
					       "frontier", "g.bin", NULL }) == 0);
	CHECK(c.vm.eager == EAGER_POPULATE && c.vm.eager_background &&
	      c.vm.eager_threads == 3 && !strcmp(c.vm.eager_order, "frontier"));
	CHECK(parse(&c, (const char *const[]){ "minivmm", "--eager=background:prefault",
					       "g.bin", NULL }) == 0);
	CHECK(c.vm.eager == EAGER_PREFAULT && c.vm.eager_background);
	/* A later --eager replaces an earlier one whole. */
	CHECK(parse(&c, (const char *const[]){ "minivmm", "--eager=background",
					       "--eager=populate", "--eager-order",
					       "back", "g.bin", NULL }) == 0);
	CHECK(c.vm.eager == EAGER_POPULATE && !c.vm.eager_background);
	CHECK(parse(&c, (const char *const[]){ "minivmm", "--eager", "--eager-order",
					       "/tmp/order", "g.bin", NULL }) == 0);
	CHECK(!strcmp(c.vm.eager_order, "/tmp/order"));
	fprintf(stderr, "    (expected usage errors follow)\n");
	const char *const *const wrong[] = {
		(const char *const[]){ "minivmm", "--eager=background:touch", "g.bin",
				       NULL },
		(const char *const[]){ "minivmm", "--eager=background:", "g.bin", NULL },
		(const char *const[]){ "minivmm", "--eager=background:sideways", "g.bin",
				       NULL },
		(const char *const[]){ "minivmm", "--eager=backgroundx", "g.bin", NULL },
		(const char *const[]){ "minivmm", "--eager-order", "back", "g.bin",
				       NULL },
		(const char *const[]){ "minivmm", "--eager=touch", "--eager-order",
				       "back", "g.bin", NULL },
		(const char *const[]){ "minivmm", "--eager", "--eager-order", "frontier",
				       "g.bin", NULL },
		(const char *const[]){ "minivmm", "--eager", "--eager-order", "", "g.bin",
				       NULL },
		(const char *const[]){ "minivmm", "--eager=background", "--paging",
				       "uffd", "g.bin", NULL },
		(const char *const[]){ "minivmm", "--eager", "background", "--", "hello",
				       NULL },
	};
	for (size_t i = 0; i < ARRAY_SIZE(wrong); i++)
		CHECK(parse(&c, wrong[i]) == -EINVAL);
}
