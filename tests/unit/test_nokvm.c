/* Unit tests: why there is no /dev/kvm, from fabricated machine facts; the emulated host's line. */
#include <errno.h>

#include "check.h"
#include "experiment.h"
#include "internal.h" /* struct kvm_facts, kvm_absence_explain */

#define PVM_REASON "kvm-pvm: this kernel is itself a kvm-pvm guest; not binding"

/* This machine (PLATFORM.md, Fifth look): kvm and kvm_pvm built in, not bound, a VM's CPU. */
static const struct kvm_facts pvm_guest = { .open_errno = ENOENT,
					    .module = 1,
					    .vendor = "kvm_pvm",
					    .cpu_known = 1,
					    .hypervisor = 1,
					    .kmsg = PVM_REASON };

void test_nokvm_kinds(void)
{
	char buf[KVM_ERR_BYTES];
	struct kvm_facts f;

	/* (b) KVM in the kernel, no device: the kernel's own reason quoted, then the CPU. */
	CHECK_EQ(kvm_absence_explain(&pvm_guest, buf, sizeof(buf)), KVM_ABSENT_UNBOUND);
	CHECK(!strcmp(
		buf,
		"open /dev/kvm: No such file or directory: the kernel has KVM (/sys/module/kvm, kvm_pvm) but made no KVM device (no /sys/class/misc/kvm); the kernel said \"" PVM_REASON
		"\"; the CPU has neither vmx nor svm (/proc/cpuinfo): a virtual machine without nested virtualization"));
	CHECK(!strchr(buf, '\n'));
	/* (b) with vmx and no vendor module loaded: what to load. */
	f = (struct kvm_facts){
		.open_errno = ENOENT, .module = 1, .cpu_known = 1, .vmx = 1
	};
	CHECK_EQ(kvm_absence_explain(&f, buf, sizeof(buf)), KVM_ABSENT_UNBOUND);
	CHECK_STR_CONTAINS(buf, "no module for the CPU is loaded: modprobe kvm_intel");
	CHECK(!strstr(buf, "neither"));
	/* (b) a vendor module, and nothing in the log minivmm could read. */
	f = (struct kvm_facts){ .open_errno = ENOENT, .module = 1, .vendor = "kvm_amd" };
	CHECK_EQ(kvm_absence_explain(&f, buf, sizeof(buf)), KVM_ABSENT_UNBOUND);
	CHECK_STR_CONTAINS(buf, "(/sys/module/kvm, kvm_amd) but made no KVM device");
	CHECK_STR_CONTAINS(buf, "its log (dmesg) may say why");

	/* (a) no KVM in the kernel: load it, the module for this CPU's flag. */
	f = (struct kvm_facts){ .open_errno = ENOENT, .cpu_known = 1, .svm = 1 };
	CHECK_EQ(kvm_absence_explain(&f, buf, sizeof(buf)), KVM_ABSENT_KERNEL);
	CHECK(!strcmp(
		buf,
		"open /dev/kvm: No such file or directory: this kernel has no KVM (no /sys/module/kvm): load it (modprobe kvm_amd), or boot a kernel built with it"));
	f.cpu_known = f.svm =
		0; /* /proc/cpuinfo unread: both named, the CPU not judged */
	kvm_absence_explain(&f, buf, sizeof(buf));
	CHECK_STR_CONTAINS(buf, "modprobe kvm_intel or kvm_amd");
	CHECK(!strstr(buf, "CPU"));

	/* (c) no vmx/svm and nothing to do without: the CPU first, the kernel after. */
	f = (struct kvm_facts){ .open_errno = ENOENT, .cpu_known = 1, .hypervisor = 1 };
	CHECK_EQ(kvm_absence_explain(&f, buf, sizeof(buf)), KVM_ABSENT_CPU);
	CHECK(!strcmp(
		buf,
		"open /dev/kvm: No such file or directory: this CPU has neither vmx nor svm (/proc/cpuinfo): it is a virtual machine without nested virtualization; nor has this kernel KVM (no /sys/module/kvm)"));
	f = (struct kvm_facts){ .open_errno = ENOENT,
				.module = 1,
				.cpu_known = 1,
				.kmsg = "kvm: no hardware support for 'kvm_amd'" };
	CHECK_EQ(kvm_absence_explain(&f, buf, sizeof(buf)), KVM_ABSENT_CPU);
	CHECK_STR_CONTAINS(buf,
			   "no hardware virtualization, or the firmware turned it off");
	CHECK_STR_CONTAINS(
		buf, "made no device, saying \"kvm: no hardware support for 'kvm_amd'\"");

	/* The kernel made the device; this /dev lacks it (a container, a private /dev). */
	f = (struct kvm_facts){
		.open_errno = ENOENT, .module = 1, .misc = 1, .devno = "10:232"
	};
	CHECK_EQ(kvm_absence_explain(&f, buf, sizeof(buf)), KVM_ABSENT_NODE);
	CHECK_STR_CONTAINS(
		buf, "(/sys/class/misc/kvm, 10:232) but this /dev has no node for it");
	CHECK_STR_CONTAINS(buf, "mknod -m 0660 /dev/kvm c 10 232");
	f.open_errno = ENXIO;
	kvm_absence_explain(&f, buf, sizeof(buf));
	CHECK_STR_CONTAINS(buf, "No such device or address: ");
	CHECK_STR_CONTAINS(buf, "/dev/kvm here is not that device");

	/* (d) permission: the messages as they were, with the device's group or without. */
	f = (struct kvm_facts){ .open_errno = EACCES, .group = "kvm" };
	CHECK_EQ(kvm_absence_explain(&f, buf, sizeof(buf)), KVM_ABSENT_PERMISSION);
	CHECK(!strcmp(
		buf,
		"open /dev/kvm: Permission denied: run minivmm as root, or as a member of its group 'kvm' (usermod -aG kvm USER, then log in again)"));
	f.group[0] = '\0';
	kvm_absence_explain(&f, buf, sizeof(buf));
	CHECK_STR_CONTAINS(
		buf, "Permission denied: run minivmm as root; here no group may open");

	/* Any other error: its name only. A short buffer ends cut short, terminated. */
	f = (struct kvm_facts){ .open_errno = EMFILE, .module = 1 };
	CHECK_EQ(kvm_absence_explain(&f, buf, sizeof(buf)), KVM_ABSENT_OTHER);
	CHECK(!strcmp(buf, "open /dev/kvm: Too many open files"));
	CHECK_EQ(kvm_absence_explain(&pvm_guest, buf, 40), KVM_ABSENT_UNBOUND);
	CHECK_EQ(strlen(buf), 39);
}

void test_nokvm_sources(void)
{
	char out[224];
	struct kvm_facts f = { 0 };

	/* /dev/kmsg records: KVM's modules' lines, not the guest clock's or the command line's. */
#define REC(s) s, sizeof(s) - 1
	CHECK(kmsg_kvm_line(REC("6,255,285566,-;" PVM_REASON "\n"), out, sizeof(out)) &&
	      !strcmp(out, PVM_REASON));
	CHECK(kmsg_kvm_line(
		      REC("3,9,1,-;kvm_intel: VMX not supported by CPU 0\n SUBSYSTEM=x\n"),
		      out, sizeof(out)) &&
	      !strcmp(out, "kvm_intel: VMX not supported by CPU 0"));
	CHECK(kmsg_kvm_line(REC("4,2,3,-;kvm: disabled by bios"), out, sizeof(out)) &&
	      !strcmp(out, "kvm: disabled by bios"));
	strcpy(out, "kept");
	CHECK(!kmsg_kvm_line(
		REC("6,13,0,-;kvm-clock: Using msrs 4b564d01 and 4b564d00\n"), out,
		sizeof(out)));
	CHECK(!kmsg_kvm_line(REC("6,1,0,-;Command line: clocksource=kvm-clock\n"), out,
			     sizeof(out)));
	CHECK(!kmsg_kvm_line(REC("6,3,0,-;kvm-guest: PV spinlocks enabled\n"), out,
			     sizeof(out)));
	CHECK(!kmsg_kvm_line(REC("no header at all kvm: x"), out, sizeof(out)));
	CHECK(!strcmp(out, "kept")); /* a line that is not KVM's leaves the last one */
#undef REC

	/* /proc/cpuinfo: only the flags line, whole words. */
	CHECK(!cpuinfo_flags_parse("model name\t: AMD EPYC svm\n", &f) && !f.cpu_known);
	CHECK(cpuinfo_flags_parse("flags\t\t: fpu vme svm_lock hypervisor lahf_lm\n",
				  &f));
	CHECK(f.cpu_known && !f.svm && !f.vmx && f.hypervisor);
	f = (struct kvm_facts){ 0 };
	CHECK(cpuinfo_flags_parse("flags\t\t: fpu vmx ept\n", &f) && f.vmx &&
	      !f.hypervisor);
}

void test_nokvm_emu_line(void)
{
	const char *const argv[] = { "./minivmm", "--mem", "64M", "guest/guest.bin",
				     "--",	  "hello", "a b" };
	char buf[256];

	CHECK(!strcmp(
		suggest_emu_host(buf, sizeof(buf), "scripts/emu-host", 0, argv, 7),
		"scripts/emu-host -- ./minivmm --mem 64M guest/guest.bin -- hello 'a b'"));
	CHECK(!strcmp(suggest_emu_host(
			      buf, sizeof(buf), "../x/scripts/emu-host", 6144,
			      (const char *const[]){ "../x/minivmm", "--mem", "4G" }, 3),
		      "../x/scripts/emu-host --mem 6144 -- ../x/minivmm --mem 4G"));
	/* No checkout beside minivmm: the line for a checkout's top, its own ./minivmm. */
	CHECK(!strcmp(suggest_emu_host(buf, sizeof(buf), NULL, 0,
				       (const char *const[]){ "/usr/bin/minivmm", "-q" },
				       2),
		      "scripts/emu-host -- ./minivmm -q"));
	/* A line that does not fit is not given cut short. */
	CHECK(!suggest_emu_host(buf, 30, "scripts/emu-host", 0, argv, 7));
}
