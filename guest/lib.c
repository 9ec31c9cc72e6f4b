/* CPL3 runtime: buffered console output, exit, and system-call wrappers. */
#include "guest.h"

/* Output is buffered and flushed per line: each flush is one hypercall exit. */
static char outbuf[MVM_CONSOLE_MAX_BYTES];
static size_t outlen;

void flush(void)
{
	if (outlen)
		sys3(SYS_WRITE, (long)outbuf, (long)outlen, 0);
	outlen = 0;
}

void write_out(const char *buf, uint64_t len)
{
	flush();
	sys3(SYS_WRITE, (long)buf, (long)len, 0);
}

int printf(const char *fmt, ...)
{
	char line[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = fw_vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n >= (int)sizeof(line))
		n = sizeof(line) - 1;
	if (outlen + (size_t)n > sizeof(outbuf))
		flush();
	memcpy(outbuf + outlen, line, (size_t)n);
	outlen += (size_t)n;
	if (n && line[n - 1] == '\n')
		flush();
	return n;
}

_Noreturn void exit(int status)
{
	flush();
	sys3(SYS_EXIT, status, 0, 0);
	for (;;)
		;
}

_Noreturn void fail(const char *file, int line, const char *fmt, ...)
{
	char msg[192];
	va_list ap;

	va_start(ap, fmt);
	fw_vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	flush();
	sys3(SYS_ABORT, (long)file, line, (long)msg);
	for (;;)
		;
}

int parse_u64(const char *s, uint64_t *out)
{
	char *end;

	if (!s || !*s || *s == '-')
		return -1;
	*out = strtoul(s, &end, 0);
	return *end ? -1 : 0;
}

void *mmap_anon(uint64_t len, uint64_t flags)
{
	long r = sys3(SYS_MMAP, (long)len, (long)flags, 0);

	return r < 0 ? NULL : (void *)r;
}

int munmap(void *addr, uint64_t len)
{
	return (int)sys3(SYS_MUNMAP, (long)addr, (long)len, 0);
}

void get_info(struct fw_info *info)
{
	sys3(SYS_INFO, (long)info, 0, 0);
}

void get_stats(struct fw_stats *st)
{
	sys3(SYS_STATS, (long)st, 0, 0);
}

void mark(uint32_t what)
{
	sys3(SYS_MARK, what, (long)rdtsc(), 0);
}

_Noreturn void park(void)
{
	flush();
	sys3(SYS_PARK, 0, 0, 0);
	for (;;)
		;
}

void *phys_region(uint64_t len)
{
	long r = sys3(SYS_PHYS, (long)len, 0, 0);

	return r < 0 ? NULL : (void *)r;
}

void send_records(uint32_t kind, const void *recs, uint32_t count)
{
	if (sys3(SYS_RECORDS, kind, (long)recs, count) < 0)
		FAIL("records hypercall refused (%u records)", count);
}
