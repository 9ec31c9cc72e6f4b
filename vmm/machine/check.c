/* Whether a vm_config can run on this machine, answered before any VM exists (--compare's modes). */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "kvm_compat.h"

/* The --eager-order names that are orders, not files (NULL: front to back). */
static int order_is_named(const char *order)
{
	return eager_order_of(order) != EAGER_ORDER_FILE;
}

/* /dev/kvm opens, speaks this API, and has KVM_PRE_FAULT_MEMORY if asked for. */
static int check_kvm(const struct vm_config *cfg, char *err, size_t errlen)
{
	int fd = open("/dev/kvm", O_RDWR | O_CLOEXEC), v, pre_fault, e;

	if (fd < 0) {
		e = errno;
		kvm_open_failed(e, err, errlen);
		return -e;
	}
	v = ioctl(fd, KVM_GET_API_VERSION, 0);
	/* On /dev/kvm, as on a VM: x86 answers from tdp_enabled, with or without one. */
	pre_fault = ioctl(fd, KVM_CHECK_EXTENSION, KVM_CAP_PRE_FAULT_MEMORY) > 0;
	close(fd);
	if (v != KVM_API_VERSION) {
		snprintf(err, errlen, "KVM_GET_API_VERSION is %d, expected %d", v,
			 KVM_API_VERSION);
		return -EPROTO;
	}
	if (cfg->kernel_path && !cfg->kernel_anyway) {
		struct platform p = { 0 };

		platform_kind(&p);
		if (!strcmp(p.kvm, "pvm")) {
			snprintf(
				err, errlen,
				"--kernel: this /dev/kvm is PVM, where guest kernel code is emulated (about 1.2 M instructions/s) and Debian's 6.12 kernel stops in its decompressor (an emulation failure on a BMI2 instruction KVM's emulator cannot decode); run the line in the AMD rig (make rig RIG=tdp ARGS='...'), or add --kernel-anyway");
			return -EOPNOTSUPP;
		}
	}
	if (cfg->eager == EAGER_PREFAULT && !pre_fault) {
		struct platform p = { 0 };

		platform_kind(&p);
		snprintf(
			err, errlen,
			"--eager=prefault: this KVM lacks KVM_CAP_PRE_FAULT_MEMORY (236; Linux >= 6.11 with EPT/NPT; platform here: %s, %s paging); use --eager=populate",
			p.kvm, p.tdp ? "tdp" : "shadow");
		return -EOPNOTSUPP;
	}
	return 0;
}

/* What paging_plan would open: the userfaultfds for this backing's mode (nothing recorded). */
static int check_uffd(const struct vm_config *cfg, char *err, size_t errlen)
{
	struct vm_config c = *cfg;
	struct paging *pg;
	int r;

	c.record_touch_path = NULL; /* the record file is the run's to create */
	r = paging_plan(&c, &pg, err, errlen);
	paging_free(pg);
	return r;
}

int vm_config_check(const struct vm_config *cfg, char *err, size_t errlen)
{
	int host_side = cfg->eager == EAGER_AUTO || cfg->eager == EAGER_POPULATE ||
			cfg->eager == EAGER_PREFAULT;
	int r;

	/* In the order a run's setup meets them: the userfaultfds before /dev/kvm. */
	if (cfg->paging == PAGING_UFFD) {
		r = check_uffd(cfg, err, errlen);
		if (r)
			return r;
	}
	r = check_kvm(cfg, err, errlen);
	if (r)
		return r;
	/* A file's holes and a lease are known once they are mapped: eager_plan checks those. */
	if (host_side && !cfg->mem_path && !cfg->reservoir) {
		r = mm_ram_check_capacity(cfg->backing, cfg->mem_bytes, NULL, err,
					  errlen);
		if (r)
			return r;
	}
	if (!order_is_named(cfg->eager_order)) {
		struct touch_order o;
		char why[384];

		r = touch_order_read(cfg->eager_order, cfg->mem_bytes, &o, why,
				     sizeof(why));
		if (r) {
			snprintf(err, errlen, "--eager-order %s", why);
			return r == -ENOMEM ? r : -EINVAL;
		}
		touch_order_free(&o);
	}
	return 0;
}
