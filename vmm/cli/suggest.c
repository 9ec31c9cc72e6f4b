/* What to type instead: the option name nearest a mistyped one, a command line to paste. */
#include "cli.h"

#include <string.h>

/*
 * Edit distance between a and b, with a swap of two neighbours one edit
 * ("eagre" is one from "eager"): the optimal string alignment distance.
 * Names longer than SUGGEST_NAME_MAX count as far from everything.
 */
#define SUGGEST_NAME_MAX 40
static unsigned distance(const char *a, const char *b)
{
	size_t n = strlen(a), m = strlen(b);
	unsigned d[SUGGEST_NAME_MAX + 1][SUGGEST_NAME_MAX + 1];

	if (n > SUGGEST_NAME_MAX || m > SUGGEST_NAME_MAX)
		return ~0u;
	for (size_t i = 0; i <= n; i++)
		d[i][0] = (unsigned)i;
	for (size_t j = 0; j <= m; j++)
		d[0][j] = (unsigned)j;
	for (size_t i = 1; i <= n; i++)
		for (size_t j = 1; j <= m; j++) {
			unsigned best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);

			if (d[i - 1][j] + 1 < best)
				best = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < best)
				best = d[i][j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] &&
			    a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < best)
				best = d[i - 2][j - 2] + 1;
			d[i][j] = best;
		}
	return d[n][m];
}

static int starts_with(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

const char *suggest_option(const char *typed, const char *const *names, unsigned n,
			   char *buf, size_t len)
{
	char name[SUGGEST_NAME_MAX + 1];
	size_t k = strcspn(typed, "="), at = 0;
	unsigned best = ~0u, which = 0, prefixes = 0;

	if (k >= sizeof(name))
		return NULL;
	memcpy(name, typed, k);
	name[k] = '\0';
	/* An unfinished name ("--mem-" of --mem-path, --mem-grow): every option it begins. */
	at = (size_t)snprintf(buf, len, "one of ");
	for (unsigned i = 0; i < n && k; i++)
		if (starts_with(names[i], name) && at < len)
			at += (size_t)snprintf(buf + at, len - at, "%s--%s",
					       prefixes++ ? ", " : "", names[i]);
	if (prefixes > 1)
		return buf;
	for (unsigned i = 0; i < n; i++) {
		unsigned d = distance(name, names[i]);

		/* One name inside the other ("--memory", "--mem") is near whatever the distance. */
		if (k >= 3 &&
		    (starts_with(name, names[i]) || starts_with(names[i], name)))
			d = d < 2 ? d : 2;
		if (d < best) {
			best = d;
			which = i;
		}
	}
	if (best > 2 || best >= k)
		return NULL;
	snprintf(buf, len, "--%s", names[which]);
	return buf;
}

const char *suggest_name(const char *typed, const char *const *names, unsigned n)
{
	size_t k = strlen(typed);
	unsigned best = ~0u, which = 0;

	for (unsigned i = 0; i < n; i++) {
		unsigned d = names[i] ? distance(typed, names[i]) : ~0u;

		if (d < best) {
			best = d;
			which = i;
		}
	}
	return best <= 2 && best < k ? names[which] : NULL;
}

/* Words a shell passes as they are; anything else is quoted. */
static int plain(const char *w)
{
	return *w && strspn(w, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
			       "0123456789_./=:,+@%-") == strlen(w);
}

/* Append to buf[len] at *at; nothing once it is full (the text ends truncated). */
static void put(char *buf, size_t len, size_t *at, const char *s, size_t n)
{
	if (*at + 1 >= len)
		return;
	if (n > len - 1 - *at)
		n = len - 1 - *at;
	memcpy(buf + *at, s, n);
	*at += n;
	buf[*at] = '\0';
}

const char *suggest_cmdline(char *buf, size_t len, const char *const *words, int n)
{
	size_t at = 0;

	buf[0] = '\0';
	for (int i = 0; i < n; i++) {
		const char *w = words[i];

		if (i)
			put(buf, len, &at, " ", 1);
		if (plain(w)) {
			put(buf, len, &at, w, strlen(w));
			continue;
		}
		put(buf, len, &at, "'", 1);
		for (; *w; w++)
			if (*w == '\'')
				put(buf, len, &at, "'\\''", 4);
			else
				put(buf, len, &at, w, 1);
		put(buf, len, &at, "'", 1);
	}
	return buf;
}

const char *suggest_emu_host(char *buf, size_t len, const char *script, unsigned mem_mib,
			     const char *const *words, int n)
{
	const char *line[n + 5];
	char mib[16];
	int k = 0;

	line[k++] = script ? script : "scripts/emu-host";
	if (mem_mib) {
		snprintf(mib, sizeof(mib), "%u", mem_mib);
		line[k++] = "--mem";
		line[k++] = mib;
	}
	line[k++] = "--";
	line[k++] = script && n > 0 ? words[0] : "./minivmm";
	for (int i = 1; i < n; i++)
		line[k++] = words[i];
	suggest_cmdline(buf, len, line, k);
	/* Full to the last byte: maybe cut short, and a cut command line would run something else. */
	return strlen(buf) + 1 < len ? buf : NULL;
}
