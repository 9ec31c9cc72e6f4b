/*
 * The Linux guest's ABI client, checked on the host (tests/linux.sh, as
 * root): mvm_pagemap_gpa against pages whose frame the kernel names another
 * way. A memfd page mapped at two addresses must translate to one frame that
 * /proc/kpagecount says is mapped twice; a private page to another frame,
 * anonymous in /proc/kpageflags; the offset inside the page is kept; a page
 * never touched has no frame. Prints PASS/FAIL lines; exit 1 on a failure.
 */
#include "mvm.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define PAGE	     4096u
#define KPF_ANON_BIT (1ULL << 12) /* Documentation/admin-guide/mm/pagemap.rst */

static int failed;

static void check(int ok, const char *what)
{
	printf("%s lx-pagemap: %s\n", ok ? "PASS" : "FAIL", what);
	failed |= !ok;
}

static uint64_t kpage(const char *file, uint64_t pfn)
{
	uint64_t v = ~0ULL;
	int fd = open(file, O_RDONLY);

	if (fd >= 0) {
		if (pread(fd, &v, sizeof(v), (off_t)(pfn * sizeof(v))) != sizeof(v))
			v = ~0ULL;
		close(fd);
	}
	return v;
}

int main(void)
{
	int pm = open("/proc/self/pagemap", O_RDONLY),
	    mfd = memfd_create("lx-pagemap", 0);
	char *a, *b, *priv, *untouched;
	uint64_t ga, gb, gp, gu, goff;

	if (pm < 0 || mfd < 0 || ftruncate(mfd, PAGE)) {
		perror("lx-pagemap: setup");
		return 1;
	}
	a = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
	b = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
	priv = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		    -1, 0);
	if (a == MAP_FAILED || b == MAP_FAILED || priv == MAP_FAILED) {
		perror("lx-pagemap: mmap");
		return 1;
	}
	untouched = priv + PAGE;
	memset(a, 0x5a, PAGE);
	check(b[100] == 0x5a, "the memfd page is shared by its two mappings");
	b[0] = 1; /* present in b's page table too */
	priv[0] = 2;
	if (mlock(a, PAGE) || mlock(priv, PAGE))
		perror("lx-pagemap: mlock");
	check(mvm_pagemap_gpa(pm, a, &ga) == 0 && mvm_pagemap_gpa(pm, b, &gb) == 0,
	      "both mappings of the shared page translate");
	check(ga == gb && ga % PAGE == 0, "they name one frame, page-aligned");
	check(kpage("/proc/kpagecount", ga / PAGE) == 2,
	      "/proc/kpagecount: that frame is mapped twice");
	check(mvm_pagemap_gpa(pm, a + 123, &goff) == 0 && goff == ga + 123,
	      "an address inside the page keeps its offset");
	check(mvm_pagemap_gpa(pm, priv, &gp) == 0 && gp != ga,
	      "the private page translates to another frame");
	check(kpage("/proc/kpageflags", gp / PAGE) != ~0ULL &&
		      (kpage("/proc/kpageflags", gp / PAGE) & KPF_ANON_BIT),
	      "/proc/kpageflags: that frame is anonymous");
	check(mvm_pagemap_gpa(pm, untouched, &gu) == -ENOENT,
	      "a page never touched has no frame (-ENOENT)");
	return failed;
}
