/* The Intel MP table a Linux guest finds its CPUs and its IOAPIC in (--vcpus N). */
#include "boot.h"

#include <string.h>

#define MP_LAPIC_GPA	0xfee00000u /* KVM's in-kernel local APIC */
#define MP_IOAPIC_GPA	0xfec00000u /* ... and IOAPIC */
#define MP_SPEC_REV	4	    /* MultiProcessor Specification 1.4 */
#define MP_APIC_VERSION 0x14
#define MP_IOAPIC_VER	0x11
#define MP_ISA_IRQS	16
#define MP_CPU_ENABLED	0x01
#define MP_CPU_BSP	0x02
#define MP_CPU_SIG	0x600 /* family 6: a signature Linux only prints */
#define MP_CPU_FEATURES 0x201 /* FPU, APIC */

enum { MP_PROCESSOR, MP_BUS, MP_IOAPIC, MP_INTSRC, MP_LINTSRC };
enum { MP_INT, MP_NMI, MP_SMI, MP_EXTINT };

struct mpf { /* the floating pointer */
	char signature[4];
	uint32_t physptr;
	uint8_t length, specification, checksum, feature[5];
} __attribute__((packed));

struct mpc { /* the configuration table's header */
	char signature[4];
	uint16_t length;
	uint8_t spec, checksum;
	char oem[8], product[12];
	uint32_t oemptr;
	uint16_t oemsize, count;
	uint32_t lapic;
	uint16_t extlen;
	uint8_t extcsum, reserved;
} __attribute__((packed));

struct mpc_cpu {
	uint8_t type, apicid, apicver, cpuflag;
	uint32_t cpufeature_sig, featureflag, reserved[2];
} __attribute__((packed));

struct mpc_bus {
	uint8_t type, busid;
	char bustype[6];
} __attribute__((packed));

struct mpc_ioapic {
	uint8_t type, apicid, apicver, flags;
	uint32_t apicaddr;
} __attribute__((packed));

struct mpc_intsrc { /* also a local interrupt (MP_LINTSRC): the same layout */
	uint8_t type, irqtype;
	uint16_t irqflag;
	uint8_t srcbus, srcbusirq, dstapic, dstirq;
} __attribute__((packed));

_Static_assert(sizeof(struct mpf) == 16 && sizeof(struct mpc) == 44 &&
		       sizeof(struct mpc_cpu) == 20 && sizeof(struct mpc_bus) == 8 &&
		       sizeof(struct mpc_ioapic) == 8 && sizeof(struct mpc_intsrc) == 8,
	       "MP table entries as the specification lays them out");

static uint8_t checksum(const uint8_t *p, size_t len)
{
	uint8_t sum = 0;

	for (size_t i = 0; i < len; i++)
		sum = (uint8_t)(sum + p[i]);
	return (uint8_t)-sum;
}

size_t linux_mptable_size(unsigned ncpus)
{
	return sizeof(struct mpf) + sizeof(struct mpc) + ncpus * sizeof(struct mpc_cpu) +
	       sizeof(struct mpc_bus) + sizeof(struct mpc_ioapic) +
	       (MP_ISA_IRQS + 2) * sizeof(struct mpc_intsrc);
}

size_t linux_mptable(uint8_t *buf, size_t size, uint64_t gpa, unsigned ncpus)
{
	size_t len = linux_mptable_size(ncpus),
	       at = sizeof(struct mpf) + sizeof(struct mpc);
	struct mpf *f = (struct mpf *)buf;
	struct mpc *c = (struct mpc *)(buf + sizeof(*f));
	uint8_t ioapic = (uint8_t)ncpus;
	uint16_t count = 0;

	if (len > size || ncpus == 0 || ncpus > 254)
		return 0;
	memset(buf, 0, len);
	for (unsigned i = 0; i < ncpus; i++, count++, at += sizeof(struct mpc_cpu))
		*(struct mpc_cpu *)(buf + at) = (struct mpc_cpu){
			.type = MP_PROCESSOR,
			.apicid = (uint8_t)i,
			.apicver = MP_APIC_VERSION,
			.cpuflag = MP_CPU_ENABLED | (i == 0 ? MP_CPU_BSP : 0),
			.cpufeature_sig = MP_CPU_SIG,
			.featureflag = MP_CPU_FEATURES,
		};
	*(struct mpc_bus *)(buf + at) = (struct mpc_bus){ .type = MP_BUS, .busid = 0 };
	memcpy(((struct mpc_bus *)(buf + at))->bustype, "ISA   ", 6);
	at += sizeof(struct mpc_bus);
	count++;
	*(struct mpc_ioapic *)(buf + at) =
		(struct mpc_ioapic){ .type = MP_IOAPIC,
				     .apicid = ioapic,
				     .apicver = MP_IOAPIC_VER,
				     .flags = 1,
				     .apicaddr = MP_IOAPIC_GPA };
	at += sizeof(struct mpc_ioapic);
	count++;
	/* ISA IRQ i on IOAPIC pin i: KVM's default routing (GSI i, pin i). */
	for (unsigned i = 0; i < MP_ISA_IRQS;
	     i++, count++, at += sizeof(struct mpc_intsrc))
		*(struct mpc_intsrc *)(buf + at) = (struct mpc_intsrc){
			.type = MP_INTSRC,
			.irqtype = MP_INT,
			.srcbusirq = (uint8_t)i,
			.dstapic = ioapic,
			.dstirq = (uint8_t)i,
		};
	/* The 8259's output on every local APIC's LINT0, NMI on LINT1. */
	for (unsigned i = 0; i < 2; i++, count++, at += sizeof(struct mpc_intsrc))
		*(struct mpc_intsrc *)(buf + at) = (struct mpc_intsrc){
			.type = MP_LINTSRC,
			.irqtype = i ? MP_NMI : MP_EXTINT,
			.dstapic = 0xff,
			.dstirq = (uint8_t)i,
		};
	memcpy(c->signature, "PCMP", 4);
	c->length = (uint16_t)(len - sizeof(*f));
	c->spec = MP_SPEC_REV;
	memcpy(c->oem, "MINIVMM ", 8);
	memcpy(c->product, "LINUX GUEST ", 12);
	c->count = count;
	c->lapic = MP_LAPIC_GPA;
	c->checksum = checksum((const uint8_t *)c, c->length);
	memcpy(f->signature, "_MP_", 4);
	f->physptr = (uint32_t)(gpa + sizeof(*f));
	f->length = 1; /* in 16-byte units */
	f->specification = MP_SPEC_REV;
	f->checksum = checksum((const uint8_t *)f, sizeof(*f));
	return len;
}
