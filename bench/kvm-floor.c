/*
 * The floor under a VMM's start-up: the KVM calls minivmm makes to reach the
 * guest's first instruction, and nothing else, timed step by step in a loop.
 *   kvm-floor [--loops N] [--mem BYTES]
 * Each loop opens /dev/kvm, creates a VM with BYTES of lazy anonymous RAM
 * (default 1 GiB, like the start-up comparison), one vCPU in 64-bit mode whose
 * first instruction writes port 0xf4, runs it to that exit, and tears it all
 * down. Prints one line per loop and step, "loop<TAB>step<TAB>seconds"; the
 * caller takes medians (bench_stats). Run with --loops 1 as a process, it is
 * the smallest program that gets from exec to a guest instruction here.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define NSEC_PER_SEC	      1e9
#define CODE_GPA	      0x100000ULL
#define PT_GPA		      0x1000ULL /* PML4, PDPT, PD: three pages */
#define EXIT_PORT	      0xf4
#define PTE_P_W		      0x3ULL
#define PDE_2M		      0x80ULL
#define SEL_CODE	      0x10 /* the Linux GDT layout PVM expects */
#define SEL_DATA	      0x18
#define CR0_PE_PG_WP_NE_ET_MP 0x80050033ULL
#define CR4_PAE		      (1ULL << 5)
#define EFER_LME_LMA	      ((1ULL << 8) | (1ULL << 10))

/* mov $0x2a, %al; out %al, $0xf4; hlt */
static const uint8_t guest_code[] = { 0xb0, 0x2a, 0xe6, EXIT_PORT, 0xf4 };

enum step {
	OPEN,
	CREATE_VM,
	SET_MEMORY,
	LOAD,
	GET_CPUID,
	CREATE_VCPU,
	SET_STATE,
	FIRST_RUN,
	TEARDOWN,
	STEPS
};
static const char *const step_names[STEPS] = {
	"open+api_version",
	"create_vm",
	"mmap+set_user_memory_region",
	"write_code+page_tables",
	"get_supported_cpuid",
	"create_vcpu+mmap_run",
	"set_cpuid2+sregs+regs",
	"first_kvm_run_to_exit",
	"teardown",
};

struct kvm_vm {
	int kvm, vm, vcpu;
	uint8_t *ram;
	uint64_t mem;
	struct kvm_run *run;
	size_t run_size;
};

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / NSEC_PER_SEC;
}

static void die(const char *what)
{
	fprintf(stderr, "kvm-floor: %s: %s\n", what, strerror(errno));
	exit(1);
}

static struct kvm_segment seg(uint16_t sel, uint8_t type, int code)
{
	return (struct kvm_segment){ .limit = 0xffffffff,
				     .selector = sel,
				     .type = type,
				     .present = 1,
				     .s = 1,
				     .l = code,
				     .db = !code,
				     .g = 1 };
}

/* One step of the bring-up; the loop times each. */
static void do_step(struct kvm_vm *k, enum step s)
{
	static struct {
		struct kvm_cpuid2 c;
		struct kvm_cpuid_entry2 e[256];
	} cpuid;
	struct kvm_userspace_memory_region r;
	struct kvm_sregs sr;
	struct kvm_regs regs = { .rip = CODE_GPA, .rflags = 0x2 };
	uint64_t *pt;
	int sz;

	switch (s) {
	case OPEN:
		k->kvm = open("/dev/kvm", O_RDWR | O_CLOEXEC);
		if (k->kvm < 0 ||
		    ioctl(k->kvm, KVM_GET_API_VERSION, 0) != KVM_API_VERSION)
			die("/dev/kvm");
		break;
	case CREATE_VM:
		k->vm = ioctl(k->kvm, KVM_CREATE_VM, 0);
		if (k->vm < 0)
			die("KVM_CREATE_VM");
		break;
	case SET_MEMORY:
		k->ram = mmap(NULL, k->mem, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (k->ram == MAP_FAILED)
			die("mmap of guest RAM");
		r = (struct kvm_userspace_memory_region){ .memory_size = k->mem,
							  .userspace_addr =
								  (uintptr_t)k->ram };
		if (ioctl(k->vm, KVM_SET_USER_MEMORY_REGION, &r))
			die("KVM_SET_USER_MEMORY_REGION");
		break;
	case LOAD:
		memcpy(k->ram + CODE_GPA, guest_code, sizeof(guest_code));
		pt = (uint64_t *)(k->ram + PT_GPA);
		pt[0] = (PT_GPA + 0x1000) | PTE_P_W;   /* PML4[0] -> PDPT */
		pt[512] = (PT_GPA + 0x2000) | PTE_P_W; /* PDPT[0] -> PD */
		pt[1024] = 0 | PDE_2M | PTE_P_W;       /* PD[0]: 0-2 MiB */
		break;
	case GET_CPUID:
		cpuid.c.nent = 256;
		if (ioctl(k->kvm, KVM_GET_SUPPORTED_CPUID, &cpuid))
			die("KVM_GET_SUPPORTED_CPUID");
		break;
	case CREATE_VCPU:
		sz = ioctl(k->kvm, KVM_GET_VCPU_MMAP_SIZE, 0);
		k->vcpu = ioctl(k->vm, KVM_CREATE_VCPU, 0);
		if (sz <= 0 || k->vcpu < 0)
			die("KVM_CREATE_VCPU");
		k->run_size = (size_t)sz;
		k->run = mmap(NULL, k->run_size, PROT_READ | PROT_WRITE, MAP_SHARED,
			      k->vcpu, 0);
		if (k->run == MAP_FAILED)
			die("mmap of kvm_run");
		break;
	case SET_STATE:
		if (ioctl(k->vcpu, KVM_SET_CPUID2, &cpuid.c) ||
		    ioctl(k->vcpu, KVM_GET_SREGS, &sr))
			die("KVM_SET_CPUID2/KVM_GET_SREGS");
		sr.cs = seg(SEL_CODE, 11, 1);
		sr.ds = sr.es = sr.ss = seg(SEL_DATA, 3, 0);
		sr.fs = sr.gs = seg(0, 3, 0);
		sr.cr0 = CR0_PE_PG_WP_NE_ET_MP;
		sr.cr3 = PT_GPA;
		sr.cr4 = CR4_PAE;
		sr.efer = EFER_LME_LMA;
		if (ioctl(k->vcpu, KVM_SET_SREGS, &sr) ||
		    ioctl(k->vcpu, KVM_SET_REGS, &regs))
			die("KVM_SET_SREGS/KVM_SET_REGS");
		break;
	case FIRST_RUN:
		while (ioctl(k->vcpu, KVM_RUN, 0) < 0)
			if (errno != EINTR && errno != EAGAIN)
				die("KVM_RUN");
		if (k->run->exit_reason != KVM_EXIT_IO || k->run->io.port != EXIT_PORT) {
			fprintf(stderr,
				"kvm-floor: first exit is reason %u, not port 0x%x\n",
				k->run->exit_reason, EXIT_PORT);
			exit(1);
		}
		break;
	case TEARDOWN:
		munmap(k->run, k->run_size);
		close(k->vcpu);
		close(k->vm);
		munmap(k->ram, k->mem);
		close(k->kvm);
		break;
	case STEPS:
		break;
	}
}

int main(int argc, char **argv)
{
	unsigned long loops = 1;
	struct kvm_vm k = { .mem = 1ULL << 30 };

	for (int i = 1; i < argc; i++) {
		char *end = NULL;

		if (i + 1 < argc && !strcmp(argv[i], "--loops"))
			loops = strtoul(argv[++i], &end, 0);
		else if (i + 1 < argc && !strcmp(argv[i], "--mem"))
			k.mem = strtoull(argv[++i], &end, 0);
		if (!end || *end || !loops || k.mem < (4ULL << 20) || k.mem % 4096) {
			fprintf(stderr,
				"usage: kvm-floor [--loops N] [--mem BYTES (>= 4 MiB, "
				"page multiple)]\n");
			return 2;
		}
	}
	for (unsigned long l = 1; l <= loops; l++) {
		double t[STEPS + 1];

		t[0] = now_s();
		for (int s = 0; s < STEPS; s++) {
			do_step(&k, (enum step)s);
			t[s + 1] = now_s();
		}
		for (int s = 0; s < STEPS; s++)
			printf("%lu\t%s\t%.9f\n", l, step_names[s], t[s + 1] - t[s]);
		printf("%lu\tto_first_exit\t%.9f\n", l, t[TEARDOWN] - t[0]);
	}
	return 0;
}
