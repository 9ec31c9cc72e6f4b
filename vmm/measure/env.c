/* The environment record: what a reader needs to reproduce a run or see why two differ. */
#include "measure.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

/*
 * Up to len - 1 bytes of a small file (sysfs, procfs), NUL-terminated ("" if
 * unreadable); -1 when it cannot be opened. open and read only: stdio would
 * add an fstat and a buffer each.
 */
static int read_text(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t n = 0;
	ssize_t r = 1;

	while (fd >= 0 && n + 1 < len && r > 0) {
		r = read(fd, buf + n, len - 1 - n);
		n += r > 0 ? (size_t)r : 0;
	}
	buf[n] = '\0';
	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

/*
 * The first line of a small text file, without its newline ("" if unreadable);
 * -1 when it cannot be opened. One read: a sysfs attribute comes whole in one.
 */
static int read_line(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, len - 1) : 0;

	buf[n > 0 ? n : 0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	if (fd < 0)
		return -1;
	close(fd);
	return 0;
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

/* A value from the first processor's block of /proc/cpuinfo (text), "" when absent. */
static void cpuinfo(const char *text, const char *key, char *buf, size_t len)
{
	size_t klen = strlen(key);

	buf[0] = '\0';
	for (const char *line = text; *line && *line != '\n';) {
		const char *end = strchr(line, '\n'), *colon = strchr(line, ':');

		if (!end)
			break; /* a line cut off by the buffer */
		if (colon && colon < end && !strncmp(line, key, klen) &&
		    (line[klen] == '\t' || line[klen] == ' ')) {
			colon++;
			colon += strspn(colon, " \t");
			snprintf(buf, len, "%.*s", (int)(end - colon), colon);
			return;
		}
		line = end + 1; /* an empty line ends the first processor's block */
	}
}

/* MemTotal and MemAvailable, in one read of /proc/meminfo (it is not cheap to make). */
static void meminfo(uint64_t *total, uint64_t *available)
{
	char text[8192];

	read_text("/proc/meminfo", text, sizeof(text));
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
		if (read_line(path, e->param[e->nparams].value,
			      sizeof(e->param[0].value)))
			continue; /* not readable (write-only) */
		snprintf(e->param[e->nparams].module, sizeof(e->param[0].module), "%s",
			 module);
		snprintf(e->param[e->nparams].name, sizeof(e->param[0].name), "%s",
			 d->d_name);
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

	if (!e)
		return -ENOMEM;
	e->argc = argc;
	e->argv = argv;
	e->start = time(NULL); /* the vDSO: no system call */
	*out = e;
	return 0;
}

void env_sample(struct env *e)
{
	if (!e || e->sampled)
		return;
	e->sampled = 1;
	meminfo(&e->mem_total, &e->mem_available);
	chosen("/sys/kernel/mm/transparent_hugepage/enabled", e->thp_enabled,
	       sizeof(e->thp_enabled));
	chosen("/sys/kernel/mm/transparent_hugepage/defrag", e->thp_defrag,
	       sizeof(e->thp_defrag));
	hugetlb_pools(e);
}

/*
 * What does not change (kernel, CPU, KVM module parameters: some 60 files)
 * is read when the guest already runs, before the main thread's sandbox,
 * so that it costs nothing on the way to the guest.
 */
void env_complete(struct env *e)
{
	struct utsname u;
	struct tm tm;
	char text[8192];

	if (!e || e->complete)
		return;
	e->complete = 1;
	env_sample(e);
	gmtime_r(&e->start,
		 &tm); /* formatted by hand: strftime() would load the time zone */
	snprintf(e->start_time, sizeof(e->start_time), "%04d-%02d-%02dT%02d:%02d:%02dZ",
		 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
		 tm.tm_sec);
	gethostname(e->hostname, sizeof(e->hostname) - 1);
	if (!uname(&u)) {
		snprintf(e->kernel_release, sizeof(e->kernel_release), "%s", u.release);
		snprintf(e->kernel_version, sizeof(e->kernel_version), "%s", u.version);
		snprintf(e->machine, sizeof(e->machine), "%s", u.machine);
	}
	read_text("/proc/cpuinfo", text, sizeof(text)); /* the first processor's block */
	cpuinfo(text, "model name", e->cpu_model, sizeof(e->cpu_model));
	cpuinfo(text, "vendor_id", e->cpu_vendor, sizeof(e->cpu_vendor));
	cpuinfo(text, "cpu family", e->cpu_family, sizeof(e->cpu_family));
	cpuinfo(text, "model", e->cpu_model_number, sizeof(e->cpu_model_number));
	cpuinfo(text, "stepping", e->cpu_stepping, sizeof(e->cpu_stepping));
	e->online_cpus = sysconf(_SC_NPROCESSORS_ONLN);
	/* Which KVM, and every parameter that can change how it pages (ept, npt, tdp_mmu, ...). */
	e->param = calloc(ENV_MAX_PARAMS, sizeof(*e->param));
	if (!e->param)
		return; /* the record says nothing of the modules rather than fail the run */
	module_params(e, "kvm");
	module_params(e, "kvm_intel");
	module_params(e, "kvm_amd");
	module_params(e, "kvm_pvm");
}

void env_free(struct env *e)
{
	if (e)
		free(e->param);
	free(e);
}
