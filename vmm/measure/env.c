/* The environment record: what a reader needs to reproduce a run or see why two differ. */
#include "measure.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

/* The first line of a small text file, without its newline; "" if unreadable. */
static void read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");

	buf[0] = '\0';
	if (!f)
		return;
	if (fgets(buf, (int)len, f))
		buf[strcspn(buf, "\n")] = '\0';
	fclose(f);
}

/* "always [madvise] never" -> "madvise": the setting sysfs marks as chosen. */
static void chosen(const char *path, char *buf, size_t len)
{
	char line[256], *a, *b;

	read_line(path, line, sizeof(line));
	a = strchr(line, '[');
	b = a ? strchr(a, ']') : NULL;
	if (a && b) {
		*b = '\0';
		snprintf(buf, len, "%.*s", (int)len - 1, a + 1);
	} else {
		snprintf(buf, len, "%.*s", (int)len - 1, line);
	}
}

/* A value from /proc/cpuinfo's first processor, "" when absent. */
static void cpuinfo(const char *key, char *buf, size_t len)
{
	FILE *f = fopen("/proc/cpuinfo", "re");
	char line[512];
	size_t klen = strlen(key);

	buf[0] = '\0';
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':');

		if (line[0] == '\n')
			break; /* the first processor's block ends */
		if (!colon || strncmp(line, key, klen) ||
		    (line[klen] != '\t' && line[klen] != ' '))
			continue;
		colon++;
		colon += strspn(colon, " \t");
		colon[strcspn(colon, "\n")] = '\0';
		snprintf(buf, len, "%s", colon);
		break;
	}
	fclose(f);
}

/* MemTotal and MemAvailable, in one read of /proc/meminfo (it is not cheap to make). */
static void meminfo(uint64_t *total, uint64_t *available)
{
	FILE *f = fopen("/proc/meminfo", "re");
	char text[8192];
	size_t n = f ? fread(text, 1, sizeof(text) - 1, f) : 0;

	text[n] = '\0';
	if (f)
		fclose(f);
	*total = mm_meminfo_bytes(text, "MemTotal");
	*available = mm_meminfo_bytes(text, "MemAvailable");
}

/* Every readable parameter of a loaded module: name -> value. */
static void module_params(struct env *e, const char *module)
{
	char dir[128], path[512];
	struct dirent *d;
	DIR *dir_p;

	snprintf(dir, sizeof(dir), "/sys/module/%s/parameters", module);
	dir_p = opendir(dir);
	if (!dir_p)
		return;
	while ((d = readdir(dir_p)) && e->nparams < ENV_MAX_PARAMS) {
		if (d->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, d->d_name);
		if (access(path, R_OK))
			continue;
		snprintf(e->param[e->nparams].module, sizeof(e->param[0].module), "%s",
			 module);
		snprintf(e->param[e->nparams].name, sizeof(e->param[0].name), "%s",
			 d->d_name);
		read_line(path, e->param[e->nparams].value, sizeof(e->param[0].value));
		e->nparams++;
	}
	closedir(dir_p);
}

static uint64_t read_u64(const char *path)
{
	char val[64];

	read_line(path, val, sizeof(val));
	return strtoull(val, NULL, 10);
}

static uint64_t pool_file(const char *pool, const char *file)
{
	char path[512];

	snprintf(path, sizeof(path), "/sys/kernel/mm/hugepages/%s/%s", pool, file);
	return read_u64(path);
}

static void hugetlb_pools(struct env *st)
{
	struct dirent *e;
	DIR *d = opendir("/sys/kernel/mm/hugepages");

	while (d && (e = readdir(d)) && st->npools < ENV_MAX_POOLS) {
		if (strncmp(e->d_name, "hugepages-", 10))
			continue;
		snprintf(st->pool[st->npools].size, sizeof(st->pool[0].size), "%s",
			 e->d_name + 10);
		st->pool[st->npools].nr = pool_file(e->d_name, "nr_hugepages");
		st->pool[st->npools].free = pool_file(e->d_name, "free_hugepages");
		st->npools++;
	}
	if (d)
		closedir(d);
}

int env_start(int argc, char **argv, struct env **out)
{
	struct env *e = calloc(1, sizeof(*e));
	time_t now = time(NULL);
	struct tm tm;

	if (!e)
		return -ENOMEM;
	e->argc = argc;
	e->argv = argv;
	gmtime_r(&now, &tm); /* formatted by hand: strftime() would load the time zone */
	snprintf(e->start_time, sizeof(e->start_time), "%04d-%02d-%02dT%02d:%02d:%02dZ",
		 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
		 tm.tm_sec);
	meminfo(&e->mem_total, &e->mem_available);
	chosen("/sys/kernel/mm/transparent_hugepage/enabled", e->thp_enabled,
	       sizeof(e->thp_enabled));
	chosen("/sys/kernel/mm/transparent_hugepage/defrag", e->thp_defrag,
	       sizeof(e->thp_defrag));
	hugetlb_pools(e);
	*out = e;
	return 0;
}

/*
 * What does not change (kernel, CPU, KVM module parameters: some 60 files)
 * is read when the guest already runs, before the main thread's sandbox,
 * so that it costs nothing on the way to the guest.
 */
void env_complete(struct env *e)
{
	struct utsname u;

	if (!e || e->complete)
		return;
	e->complete = 1;
	gethostname(e->hostname, sizeof(e->hostname) - 1);
	if (!uname(&u)) {
		snprintf(e->kernel_release, sizeof(e->kernel_release), "%s", u.release);
		snprintf(e->kernel_version, sizeof(e->kernel_version), "%s", u.version);
		snprintf(e->machine, sizeof(e->machine), "%s", u.machine);
	}
	cpuinfo("model name", e->cpu_model, sizeof(e->cpu_model));
	cpuinfo("vendor_id", e->cpu_vendor, sizeof(e->cpu_vendor));
	cpuinfo("cpu family", e->cpu_family, sizeof(e->cpu_family));
	cpuinfo("model", e->cpu_model_number, sizeof(e->cpu_model_number));
	cpuinfo("stepping", e->cpu_stepping, sizeof(e->cpu_stepping));
	e->online_cpus = sysconf(_SC_NPROCESSORS_ONLN);
	/* Which KVM, and every parameter that can change how it pages (ept, npt, tdp_mmu, ...). */
	module_params(e, "kvm");
	module_params(e, "kvm_intel");
	module_params(e, "kvm_amd");
	module_params(e, "kvm_pvm");
}

void env_free(struct env *e)
{
	free(e);
}
