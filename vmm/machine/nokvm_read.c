/* The facts nokvm.c explains a missing /dev/kvm with, read off this machine: sysfs, /proc, /dev/kmsg. */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* /dev/kmsg is read up to this many records (its ring holds a few thousand). */
#define KMSG_MAX_RECORDS  16384
#define KMSG_RECORD_BYTES 8192 /* a record longer than this is skipped (EINVAL) */

/*
 * The name of group gid from /etc/group, or NULL. Read by hand, not with
 * getgrgid(3): minivmm is linked statically, and glibc's NSS would load
 * shared libraries of its own version at run time to answer.
 */
static const char *group_name(gid_t gid, char *buf, size_t len)
{
	FILE *f = fopen("/etc/group", "re");
	const char *found = NULL;

	while (f && !found && fgets(buf, (int)len, f)) {
		char *name = strtok(buf, ":\n"), *pw = strtok(NULL, ":\n"),
		     *id = strtok(NULL, ":\n");

		if (name && pw && id && strtoul(id, NULL, 10) == gid)
			found = name;
	}
	if (f)
		fclose(f);
	return found;
}

/* The group that may open /dev/kvm (rw for the group, not root's), into f->group. */
static void device_group(struct kvm_facts *f)
{
	struct stat st;
	char line[512];
	const char *g = NULL;

	if (stat("/dev/kvm", &st) == 0 && (st.st_mode & 0060) == 0060 && st.st_gid != 0)
		g = group_name(st.st_gid, line, sizeof(line));
	if (g)
		snprintf(f->group, sizeof(f->group), "%s", g);
}

/* The first line of a small file, without its newline, into buf ("" when unreadable). */
static void first_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");

	buf[0] = '\0';
	if (f && fgets(buf, (int)len, f))
		buf[strcspn(buf, "\n")] = '\0';
	if (f)
		fclose(f);
}

static void cpu_flags(struct kvm_facts *f)
{
	FILE *c = fopen("/proc/cpuinfo", "re");
	char *line = NULL;
	size_t cap = 0;

	while (c && getline(&line, &cap, c) > 0 && !cpuinfo_flags_parse(line, f))
		;
	free(line);
	if (c)
		fclose(c);
}

/*
 * The kernel's last line from KVM in its log. Non-blocking (the end of the
 * log is EAGAIN) and bounded; a record overwritten while reading (EPIPE) is
 * skipped; no log to read (no /dev/kmsg, dmesg_restrict) leaves it empty.
 */
static void kmsg_last_kvm_line(struct kvm_facts *f)
{
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	char *rec = malloc(KMSG_RECORD_BYTES);

	for (unsigned i = 0; fd >= 0 && rec && i < KMSG_MAX_RECORDS; i++) {
		ssize_t n = read(fd, rec, KMSG_RECORD_BYTES);

		if (n < 0 && (errno == EPIPE || errno == EINVAL))
			continue;
		if (n <= 0)
			break;
		kmsg_kvm_line(rec, (size_t)n, f->kmsg, sizeof(f->kmsg));
	}
	free(rec);
	if (fd >= 0)
		close(fd);
}

void kvm_facts_read(int open_errno, struct kvm_facts *f)
{
	static const char *const vendors[] = { "kvm_intel", "kvm_amd", "kvm_pvm" };
	char path[64];

	*f = (struct kvm_facts){ .open_errno = open_errno };
	if (open_errno == EACCES || open_errno == EPERM) {
		device_group(f);
		return;
	}
	f->module = access("/sys/module/kvm", F_OK) == 0;
	for (size_t i = 0; i < ARRAY_SIZE(vendors) && !f->vendor[0]; i++) {
		snprintf(path, sizeof(path), "/sys/module/%s", vendors[i]);
		if (access(path, F_OK) == 0)
			snprintf(f->vendor, sizeof(f->vendor), "%s", vendors[i]);
	}
	f->misc = access("/sys/class/misc/kvm", F_OK) == 0;
	if (f->misc)
		first_line("/sys/class/misc/kvm/dev", f->devno, sizeof(f->devno));
	cpu_flags(f);
	if (f->module && !f->misc)
		kmsg_last_kvm_line(f);
}
