/* Small text as people and the kernel write it: /proc and /sys files, sizes. */
#include "mm.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int mm_read_text(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	size_t n;

	if (!f)
		return -errno;
	n = fread(buf, 1, len - 1, f);
	buf[n] = '\0';
	fclose(f);
	return 0;
}

long long mm_read_count(const char *path)
{
	char buf[64];
	char *end;
	long long v;

	if (mm_read_text(path, buf, sizeof(buf)))
		return -1;
	v = strtoll(buf, &end, 10);
	return end == buf || v < 0 ? -1 : v;
}

int mm_parse_size(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;
	unsigned shift = 0;

	if (!s || !isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -EINVAL;
	switch (toupper((unsigned char)*end)) {
	case 'K':
		shift = 10;
		break;
	case 'M':
		shift = 20;
		break;
	case 'G':
		shift = 30;
		break;
	case 'T':
		shift = 40;
		break;
	case '\0':
		break;
	default:
		return -EINVAL;
	}
	if (shift) {
		end++;
		if (!strcmp(end, "iB") || !strcmp(end, "B"))
			end += strlen(end);
	}
	if (*end || (shift && v > (UINT64_MAX >> shift)))
		return -EINVAL;
	*out = (uint64_t)v << shift;
	return 0;
}

uint64_t mm_meminfo_bytes(const char *meminfo, const char *key)
{
	size_t klen = strlen(key);
	unsigned long long kib;

	for (const char *p = meminfo; p; p = strchr(p, '\n')) {
		p += *p == '\n';
		if (!strncmp(p, key, klen) && p[klen] == ':')
			return sscanf(p + klen + 1, "%llu kB", &kib) == 1
				       ? (uint64_t)kib << 10
				       : 0;
	}
	return 0;
}

uint64_t mm_meminfo_available(const char *meminfo)
{
	return mm_meminfo_bytes(meminfo, "MemAvailable");
}
