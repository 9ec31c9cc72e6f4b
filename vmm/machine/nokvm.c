/* Why /dev/kvm cannot be opened, said from facts read off the machine (pure: nokvm_read.c reads them). */
#include "internal.h"

#include <errno.h>
#include <string.h>

/* The prefixes KVM's own modules print with (pr_fmt); not kvm-clock's or kvm-guest's. */
static const char *const kmsg_prefixes[] = { "kvm",	"kvm_intel", "kvm-intel",
					     "kvm_amd", "kvm-amd",   "kvm_pvm",
					     "kvm-pvm" };

int kmsg_kvm_line(const char *rec, size_t n, char *out, size_t len)
{
	const char *text = memchr(rec, ';', n), *end, *colon;
	size_t k;

	if (!text || !len)
		return 0;
	text++;
	end = memchr(text, '\n', n - (size_t)(text - rec));
	if (!end)
		end = rec + n;
	colon = memchr(text, ':', (size_t)(end - text));
	if (!colon)
		return 0;
	for (k = 0; k < ARRAY_SIZE(kmsg_prefixes); k++)
		if (strlen(kmsg_prefixes[k]) == (size_t)(colon - text) &&
		    !memcmp(text, kmsg_prefixes[k], (size_t)(colon - text)))
			break;
	if (k == ARRAY_SIZE(kmsg_prefixes))
		return 0;
	snprintf(out, len, "%.*s", (int)(end - text), text);
	return 1;
}

int cpuinfo_flags_parse(const char *line, struct kvm_facts *f)
{
	char word[32];
	const char *p;
	size_t n;

	if (strncmp(line, "flags", 5) || !(p = strchr(line, ':')))
		return 0;
	for (p++; *p; p += n) {
		p += strspn(p, " \t\n");
		n = strcspn(p, " \t\n");
		if (!n || n >= sizeof(word))
			continue;
		memcpy(word, p, n);
		word[n] = '\0';
		f->vmx |= !strcmp(word, "vmx");
		f->svm |= !strcmp(word, "svm");
		f->hypervisor |= !strcmp(word, "hypervisor");
	}
	f->cpu_known = 1;
	return 1;
}

/* Append to buf[len] at *at, printf-style; nothing once it is full (the text ends cut short). */
static void add(char *buf, size_t len, size_t *at, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void add(char *buf, size_t len, size_t *at, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (*at + 1 >= len)
		return;
	va_start(ap, fmt);
	n = vsnprintf(buf + *at, len - *at, fmt, ap);
	va_end(ap);
	if (n > 0)
		*at = *at + (size_t)n < len ? *at + (size_t)n : len - 1;
}

/* What the CPU flags say, after a clause: nothing when they show vmx or svm or were not read. */
static void cpu_clause(const struct kvm_facts *f, char *buf, size_t len, size_t *at)
{
	if (!f->cpu_known || f->vmx || f->svm)
		return;
	add(buf, len, at, "; the CPU has neither vmx nor svm (/proc/cpuinfo)%s",
	    f->hypervisor
		    ? ": a virtual machine without nested virtualization"
		    : ": no hardware virtualization, or the firmware turned it off");
}

/* The module that would serve this CPU, by its flags ("kvm_intel or kvm_amd" when unknown). */
static const char *vendor_module(const struct kvm_facts *f)
{
	return f->vmx ? "kvm_intel" : f->svm ? "kvm_amd" : "kvm_intel or kvm_amd";
}

static enum kvm_absence permission(const struct kvm_facts *f, char *buf, size_t len)
{
	const char *e = strerror(f->open_errno);

	if (f->group[0])
		snprintf(
			buf, len,
			"open /dev/kvm: %s: run minivmm as root, or as a member of its group '%s' (usermod -aG %s USER, then log in again)",
			e, f->group, f->group);
	else
		snprintf(
			buf, len,
			"open /dev/kvm: %s: run minivmm as root; here no group may open /dev/kvm (Debian's udev rule gives it to the group 'kvm', mode 0660: then join that group)",
			e);
	return KVM_ABSENT_PERMISSION;
}

/* The kernel made the device, but this /dev has no (working) node for it. */
static enum kvm_absence no_node(const struct kvm_facts *f, char *buf, size_t len)
{
	char nums[sizeof(f->devno)];
	char *colon;

	snprintf(nums, sizeof(nums), "%s", f->devno[0] ? f->devno : "10:232");
	colon = strchr(nums, ':');
	if (colon)
		*colon = ' ';
	snprintf(
		buf, len,
		"open /dev/kvm: %s: the kernel has a KVM device (/sys/class/misc/kvm, %s) but %s: make one (mknod -m 0660 /dev/kvm c %s), or have the container given it (docker run --device /dev/kvm)",
		strerror(f->open_errno), f->devno[0] ? f->devno : "its number unread",
		f->open_errno == ENOENT ? "this /dev has no node for it"
					: "/dev/kvm here is not that device",
		nums);
	return KVM_ABSENT_NODE;
}

enum kvm_absence kvm_absence_explain(const struct kvm_facts *f, char *buf, size_t len)
{
	int e = f->open_errno;
	size_t at = 0;

	if (!len)
		return KVM_ABSENT_OTHER;
	buf[0] = '\0';
	if (e == EACCES || e == EPERM)
		return permission(f, buf, len);
	if (e != ENOENT && e != ENXIO && e != ENODEV) {
		snprintf(buf, len, "open /dev/kvm: %s", strerror(e));
		return KVM_ABSENT_OTHER;
	}
	if (f->misc)
		return no_node(f, buf, len);
	add(buf, len, &at, "open /dev/kvm: %s: ", strerror(e));
	/* The CPU first when nothing in the kernel could use it (PVM needs no vmx or svm). */
	if (f->cpu_known && !f->vmx && !f->svm && strcmp(f->vendor, "kvm_pvm")) {
		add(buf, len, &at, "this CPU has neither vmx nor svm (/proc/cpuinfo)%s",
		    f->hypervisor
			    ? ": it is a virtual machine without nested virtualization"
			    : ": no hardware virtualization, or the firmware turned it off");
		if (!f->module)
			add(buf, len, &at,
			    "; nor has this kernel KVM (no /sys/module/kvm)");
		else if (f->kmsg[0])
			add(buf, len, &at,
			    "; the kernel's KVM made no device, saying \"%s\"", f->kmsg);
		else
			add(buf, len, &at,
			    "; the kernel's KVM made no device (no /sys/class/misc/kvm)");
		return KVM_ABSENT_CPU;
	}
	if (!f->module) {
		add(buf, len, &at,
		    "this kernel has no KVM (no /sys/module/kvm): load it (modprobe %s), or boot a kernel built with it",
		    vendor_module(f));
		cpu_clause(f, buf, len, &at);
		return KVM_ABSENT_KERNEL;
	}
	add(buf, len, &at,
	    "the kernel has KVM (/sys/module/kvm%s%s) but made no KVM device (no /sys/class/misc/kvm)",
	    f->vendor[0] ? ", " : "", f->vendor);
	if (f->kmsg[0])
		add(buf, len, &at, "; the kernel said \"%s\"", f->kmsg);
	else if (!f->vendor[0])
		add(buf, len, &at, "; no module for the CPU is loaded: modprobe %s",
		    vendor_module(f));
	else
		add(buf, len, &at, "; its log (dmesg) may say why");
	cpu_clause(f, buf, len, &at);
	return KVM_ABSENT_UNBOUND;
}
