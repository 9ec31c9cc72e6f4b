/* The Linux guest's command line, split and unquoted as the kernel splits it (cmdline.h). */
#include "cmdline.h"

#include <string.h>

#include "minivmm_abi.h"

/* The kernel's isspace(): its table also marks 0xa0. */
static int space(char c)
{
	return c && strchr(MVM_CMDLINE_SPACES, c);
}

static char *skip_spaces(char *s)
{
	while (space(*s))
		s++;
	return s;
}

char *lx_cmdline_next(char *s, char **word)
{
	size_t i, equals = 0;
	int in_quote = 0, quoted = 0;
	char *val = NULL, *next;

	if (*s == '"') {
		s++;
		in_quote = quoted = 1;
	}
	for (i = 0; s[i]; i++) {
		if (space(s[i]) && !in_quote)
			break;
		if (!equals && s[i] == '=')
			equals =
				i; /* as the kernel: a '=' first in the word is not one */
		if (s[i] == '"')
			in_quote = !in_quote;
	}
	*word = s;
	if (equals) {
		s[equals] = '\0';
		val = s + equals + 1;
		if (*val == '"') { /* NAME="VALUE": not the value's quotes */
			val++;
			if (s[i - 1] == '"')
				s[i - 1] = '\0';
		}
	}
	if (quoted && i > 0 && s[i - 1] == '"')
		s[i - 1] = '\0';
	if (s[i]) {
		s[i] = '\0';
		next = s + i + 1;
	} else {
		next = s + i;
	}
	/* repair_env_string(): NAME=VALUE in one piece again. */
	if (val) {
		s[equals] = '=';
		if (val != s + equals + 1)
			memmove(s + equals + 1, val, strlen(val) + 1);
	}
	return skip_spaces(next);
}

int lx_cmdline_args(char *cmdline, char **args, size_t max)
{
	char *p = skip_spaces(cmdline), *w = NULL;
	size_t n = 0;

	/* The kernel's parse_args(): the first word "--" (no '=') ends its options. */
	while (*p) {
		p = lx_cmdline_next(p, &w);
		if (!strcmp(w, "--"))
			break;
	}
	if (!w || strcmp(w, "--"))
		return -1;
	while (*p && n < max) {
		p = lx_cmdline_next(p, &args[n]);
		n++;
	}
	args[n] = NULL;
	return (int)n;
}
