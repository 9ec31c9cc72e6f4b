/* The environment record: what a reader needs to reproduce a run or see why two differ. */
#include "vmm.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "json.h"

#ifndef MINIVMM_REVISION
#define MINIVMM_REVISION "unknown"
#endif

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
static void module_params(struct json *j, const char *module)
{
	char dir[128], path[512], val[256];
	struct dirent *e;
	DIR *d;

	snprintf(dir, sizeof(dir), "/sys/module/%s/parameters", module);
	d = opendir(dir);
	if (!d)
		return;
	json_begin_object(j, module);
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (access(path, R_OK))
			continue;
		read_line(path, val, sizeof(val));
		json_string(j, e->d_name, val);
	}
	closedir(d);
	json_end_object(j);
}

#define ENV_MAX_POOLS 4

/* Memory as it was when minivmm started: it changes as runs come and go. */
struct env_start {
	char time[80]; /* "YYYY-MM-DDTHH:MM:SSZ"; sized for any int fields */
	uint64_t mem_total, mem_available;
	char thp_enabled[32], thp_defrag[32];
	struct {
		char size[32];
		uint64_t nr, free;
	} pool[ENV_MAX_POOLS];
	unsigned npools;
};

/*
 * What changes (memory) is read at start; what does not (kernel, CPU, KVM
 * module parameters: some 60 files) when the guest already runs, before the
 * main thread's sandbox, so that it costs nothing on the way to the guest.
 */
struct env {
	const struct config *cfg;
	struct env_start start;
	char *json; /* the whole record, once env_complete() rendered it */
};

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

static void hugetlb_pools(struct env_start *st)
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

static void build(struct json *j, const void *arg)
{
	const struct env *env = arg;
	const struct config *cfg = env->cfg;
	const struct env_start *st = &env->start;
	struct utsname u;
	char buf[512], host[256] = "";
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	json_begin_object(j, NULL);
	json_string(j, "minivmm_version", MINIVMM_VERSION);
	json_string(j, "source_revision", MINIVMM_REVISION);
	json_u64(j, "guest_abi", MVM_ABI_VERSION);
	json_begin_array(j, "command_line");
	for (int i = 0; i < cfg->argc; i++)
		json_string(j, NULL, cfg->argv[i]);
	json_end_array(j);
	json_string(j, "start_time", st->time);
	gethostname(host, sizeof(host) - 1);
	json_string(j, "hostname", host);
	if (!uname(&u)) {
		json_string(j, "kernel_release", u.release);
		json_string(j, "kernel_version", u.version);
		json_string(j, "machine", u.machine);
	}
	cpuinfo("model name", buf, sizeof(buf));
	json_string(j, "cpu_model", buf);
	cpuinfo("vendor_id", buf, sizeof(buf));
	json_string(j, "cpu_vendor", buf);
	cpuinfo("cpu family", buf, sizeof(buf));
	json_string(j, "cpu_family", buf);
	cpuinfo("model", buf, sizeof(buf));
	json_string(j, "cpu_model_number", buf);
	cpuinfo("stepping", buf, sizeof(buf));
	json_string(j, "cpu_stepping", buf);
	json_i64(j, "online_cpus", cpus);
	json_u64(j, "mem_total_bytes", st->mem_total);
	json_u64(j, "mem_available_bytes", st->mem_available);
	json_string(j, "thp_enabled", st->thp_enabled);
	json_string(j, "thp_defrag", st->thp_defrag);
	json_begin_array(j, "hugetlb_pools");
	for (unsigned i = 0; i < st->npools; i++) {
		json_begin_object(j, NULL);
		json_string(j, "size", st->pool[i].size);
		json_u64(j, "nr_hugepages", st->pool[i].nr);
		json_u64(j, "free_hugepages", st->pool[i].free);
		json_end_object(j);
	}
	json_end_array(j);
	/* Which KVM, and every parameter that can change how it pages (ept, npt, tdp_mmu, ...). */
	json_begin_object(j, "kvm_modules");
	module_params(j, "kvm");
	module_params(j, "kvm_intel");
	module_params(j, "kvm_amd");
	module_params(j, "kvm_pvm");
	json_end_object(j);
	json_end_object(j);
}

int env_start(const struct config *cfg, struct env **out)
{
	struct env *e = calloc(1, sizeof(*e));
	time_t now = time(NULL);
	struct tm tm;

	if (!e)
		return -ENOMEM;
	e->cfg = cfg;
	gmtime_r(&now, &tm); /* formatted by hand: strftime() would load the time zone */
	snprintf(e->start.time, sizeof(e->start.time), "%04d-%02d-%02dT%02d:%02d:%02dZ",
		 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
		 tm.tm_sec);
	meminfo(&e->start.mem_total, &e->start.mem_available);
	chosen("/sys/kernel/mm/transparent_hugepage/enabled", e->start.thp_enabled,
	       sizeof(e->start.thp_enabled));
	chosen("/sys/kernel/mm/transparent_hugepage/defrag", e->start.thp_defrag,
	       sizeof(e->start.thp_defrag));
	hugetlb_pools(&e->start);
	*out = e;
	return 0;
}

void env_complete(struct env *e)
{
	size_t len = 0;
	FILE *mem;
	struct json j;

	if (!e || e->json)
		return;
	mem = open_memstream(&e->json, &len);
	if (!mem)
		return;
	j = (struct json){ .f = mem };
	build(&j, e);
	if (fclose(mem)) {
		free(e->json);
		e->json = NULL;
	}
}

void env_write_json(const struct env *e, struct json *j)
{
	json_raw(j, "environment", e ? e->json : NULL);
}

void env_free(struct env *e)
{
	if (!e)
		return;
	free(e->json);
	free(e);
}
