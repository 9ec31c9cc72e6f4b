/* CPL3 runtime: buffered console output, exit, and system-call wrappers. */
#include "guest.h"

/*
 * Output is buffered and flushed per line: each flush is one hypercall exit.
 * The buffer is shared by every vCPU, so it is locked: a vCPU parking (its
 * flush) while vCPU 0 printed used to send vCPU 0's half-built line a second
 * time (seen in the tdp rig's numa cases: a line's first 29 bytes twice).
 */
static char outbuf[MVM_CONSOLE_MAX_BYTES];
static size_t outlen;
static volatile int outlock;

static void out_lock(void)
{
	while (__atomic_exchange_n(&outlock, 1, __ATOMIC_ACQUIRE))
		__builtin_ia32_pause();
}

static void out_unlock(void)
{
	__atomic_store_n(&outlock, 0, __ATOMIC_RELEASE);
}

static void flush_locked(void)
{
	if (outlen)
		sys3(SYS_WRITE, (long)outbuf, (long)outlen, 0);
	outlen = 0;
}

void flush(void)
{
	out_lock();
	flush_locked();
	out_unlock();
}

void write_out(const char *buf, uint64_t len)
{
	out_lock();
	flush_locked();
	sys3(SYS_WRITE, (long)buf, (long)len, 0);
	out_unlock();
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
	out_lock();
	if (outlen + (size_t)n > sizeof(outbuf))
		flush_locked();
	memcpy(outbuf + outlen, line, (size_t)n);
	outlen += (size_t)n;
	if (n && line[n - 1] == '\n')
		flush_locked();
	out_unlock();
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

/*
 * As strtoul(s, &end, 0) over the whole string (0x: hex, a leading 0:
 * octal), but a value past 2^64 - 1 is refused, not wrapped.
 */
int parse_u64(const char *s, uint64_t *out)
{
	uint64_t v = 0, base = 10;
	char *end;

	if (!s || !*s || *s == '-')
		return -1;
	strtoul(s, &end, 0);
	if (*end)
		return -1;
	while (*s == ' ' || *s == '\t')
		s++;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X') && s[2]) {
		base = 16;
		s += 2;
	} else if (s[0] == '0') {
		base = 8;
	}
	for (; *s; s++) {
		uint64_t d = *s >= '0' && *s <= '9' ? (uint64_t)(*s - '0')
			     : *s >= 'a'	    ? (uint64_t)(*s - 'a' + 10)
						    : (uint64_t)(*s - 'A' + 10);

		if (v > (~0ULL - d) / base)
			return -1;
		v = v * base + d;
	}
	*out = v;
	return 0;
}

_Noreturn void usage_exit(const char *usage)
{
	printf("guest: usage: %s\n", usage);
	exit(MVM_EXIT_USAGE);
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

/* Does argument a name option `name`: "--name", or "--name=VALUE" (*value then points at VALUE)? */
static int names_opt(const char *a, const char *name, const char **value)
{
	*value = NULL;
	while (*name && *a == *name) {
		a++;
		name++;
	}
	if (*name)
		return 0;
	if (*a == '=')
		*value = a + 1;
	return *a == '\0' || *a == '=';
}

int parse_opts(const struct ctx *c, const struct opt *opts, const char *usage)
{
	for (int i = 1; i < c->argc; i++) {
		const char *a = c->argv[i], *v = NULL;
		const struct opt *o = opts;

		/* "--max-mib 4" and "--max-mib=4", as the VMM's own options take them. */
		while (o->name && !names_opt(a, o->name, &v))
			o++;
		if (!o->name) {
			printf("guest: %s: unknown option '%s'\n", c->argv[0], a);
			printf("usage: %s\n", usage);
			return -1;
		}
		if (o->flag) {
			if (v) {
				printf("guest: %s: %s takes no value ('%s')\n",
				       c->argv[0], o->name, a);
				printf("usage: %s\n", usage);
				return -1;
			}
			*o->flag = 1;
			continue;
		}
		if (!v && i + 1 < c->argc)
			v = c->argv[++i];
		if (!v || parse_u64(v, o->num) || *o->num < o->min || *o->num > o->max) {
			printf("guest: %s: %s needs a number from %lu to %lu, not '%s'\n",
			       c->argv[0], o->name, o->min, o->max, v ? v : "(nothing)");
			printf("usage: %s\n", usage);
			return -1;
		}
	}
	return 0;
}
