/* System calls from CPL3 workloads (INT3, vector FW_SYSCALL_VECTOR; numbers in firmware.h). */
#include "kernel.h"

static char console_bounce[MVM_CONSOLE_MAX_BYTES];
static volatile int console_lock;

/*
 * The console hypercall takes a guest-physical address. Buffers in the
 * identity-mapped image go as they are; others (the mmap region) are copied
 * to a bounce buffer first.
 */
static long sys_write(const char *buf, uint64_t len)
{
	uint64_t done = 0;

	while (done < len) {
		uint64_t n = len - done < MVM_CONSOLE_MAX_BYTES ? len - done
								: MVM_CONSOLE_MAX_BYTES;
		const char *p = buf + done;

		if ((uintptr_t)p + n > fw_boot.mem_bytes) {
			while (__atomic_exchange_n(&console_lock, 1, __ATOMIC_ACQUIRE))
				__builtin_ia32_pause();
			memcpy(console_bounce, p, n);
			hc_console(console_bounce, n);
			__atomic_store_n(&console_lock, 0, __ATOMIC_RELEASE);
		} else {
			hc_console(p, n);
		}
		done += n;
	}
	return (long)len;
}

static long sys_info(struct fw_info *out)
{
	out->mem_bytes = fw_boot.mem_bytes;
	out->free_bytes = pmm_free_bytes();
	out->mmap_base = MMAP_BASE;
	out->vcpus = fw_boot.vcpus;
	out->tsc_khz = fw_boot.tsc_khz;
	out->argc = fw_boot.argc;
	out->argv = fw_boot.argv;
	out->eager_touch = fw_boot.eager_touch;
	out->snapshot = fw_boot.snapshot;
	out->numa_nodes = fw_boot.numa_nodes;
	out->numa = fw_boot.numa;
	out->numa_policy = fw_boot.numa_policy;
	return 0;
}

static long sys_records(uint32_t kind, const void *recs, uint64_t count)
{
	if (count > MVM_RECORDS_MAX || (uintptr_t)recs >= fw_boot.mem_bytes)
		return -FW_EINVAL; /* the VMM takes a guest-physical address: direct map only */
	hc_records(kind, recs, (uint32_t)count);
	return 0;
}

long syscall_dispatch(struct trapframe *tf)
{
	uint64_t a = tf->rdi, b = tf->rsi, c = tf->rdx;
	uint32_t lo, hi;

	switch (tf->rax) {
	case SYS_WRITE:
		return sys_write((const char *)a, b);
	case SYS_EXIT:
		hc_exit((int)a);
	case SYS_MMAP:
		return vm_mmap(a, b);
	case SYS_MUNMAP:
		return vm_munmap(a, b);
	case SYS_CLOCK:
		__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
		return (long)((uint64_t)hi << 32 | lo);
	case SYS_INFO:
		return sys_info((struct fw_info *)a);
	case SYS_RECORDS:
		return sys_records((uint32_t)a, (const void *)b, c);
	case SYS_STATS:
		vm_stats((struct fw_stats *)a);
		return 0;
	case SYS_PHYS:
		a = pmm_alloc_fresh(a);
		return a ? (long)a : -FW_ENOMEM;
	case SYS_PARK:
		hc_park();
	case SYS_MARK:
		if (a == 0 || a >= MVM_MARK_COUNT || a == MVM_MARK_FIRMWARE_READY)
			return -FW_EINVAL;
		hc_mark((uint32_t)a, b);
		return 0;
	case SYS_SNAPSHOT:
		return hc_snapshot(a, b);
	case SYS_ABORT:
		hc_abort_frame((const char *)a, (int)b, (const char *)c, 0, 0);
	default:
		return -FW_EINVAL;
	}
}
