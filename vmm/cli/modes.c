/* --compare's modes: one row each, a function from the options given to the mode's machine. */
#include "cli.h"

#include <errno.h>
#include <string.h>

/* The --eager-order names that are orders, not files (NULL: front to back). */
static int order_is_named(const char *order)
{
	return eager_order_of(order) != EAGER_ORDER_FILE;
}

/* What every mode starts from: the options given, without paging or eager of their own. */
static void plain(const struct vm_config *base, struct vm_config *out)
{
	*out = *base;
	out->eager = EAGER_NONE;
	out->eager_threads = 0;
	out->eager_background = 0;
	out->eager_order = NULL;
	out->roofline_path = NULL;
	out->paging = PAGING_KERNEL;
	out->uffd_threads = 0;
	out->uffd_delay_us = 0;
	out->record_touch_path = NULL;
}

static int lazy(const struct vm_config *base, struct vm_config *out, char *err,
		size_t errlen)
{
	(void)err;
	(void)errlen;
	plain(base, out);
	return 0;
}

/* --eager's HOW (options_parse made it auto when none was given). */
static int eager(const struct vm_config *base, struct vm_config *out, char *err,
		 size_t errlen)
{
	(void)err;
	(void)errlen;
	plain(base, out);
	out->eager = base->eager == EAGER_NONE ? EAGER_AUTO : base->eager;
	out->eager_threads = base->eager_threads;
	out->roofline_path = base->roofline_path;
	return 0;
}

/* --eager=background:HOW: HOW is the host's (populate, prefault, auto), never the guest's touch. */
static int background(const struct vm_config *base, struct vm_config *out, char *err,
		      size_t errlen)
{
	eager(base, out, err, errlen);
	if (out->eager == EAGER_TOUCH) {
		snprintf(
			err, errlen,
			"--compare: mode background populates from host threads while the guest runs; --eager=touch is the guest's own pass before its workload: give --eager=populate, prefault or auto (or none)");
		return -EINVAL;
	}
	out->eager_background = 1;
	/* An order by name (back, frontier) is background's; a FILE is replay's. */
	out->eager_order = order_is_named(base->eager_order) ? base->eager_order : NULL;
	return 0;
}

static int uffd(const struct vm_config *base, struct vm_config *out, char *err,
		size_t errlen)
{
	(void)err;
	(void)errlen;
	plain(base, out);
	out->paging = PAGING_UFFD;
	out->uffd_delay_us = base->uffd_delay_us;
	out->uffd_threads =
		base->uffd_threads ? base->uffd_threads : paging_default_threads(out);
	return 0;
}

/* Background in the order of --eager-order FILE, or (none given) of the experiment's recording. */
static int replay(const struct vm_config *base, struct vm_config *out, char *err,
		  size_t errlen)
{
	int r = background(base, out, err, errlen);

	if (r)
		return r;
	out->eager_order = order_is_named(base->eager_order) ? NULL : base->eager_order;
	return 0;
}

const struct compare_mode_row compare_modes[] = {
	{ MODE_LAZY, "lazy", { "the kernel backs each page on first touch" }, lazy },
	{ MODE_EAGER, "eager", { "--eager=HOW (auto), before the guest runs" }, eager },
	{ MODE_BACKGROUND,
	  "background",
	  { "--eager=background:HOW, while the guest runs" },
	  background },
	{ MODE_UFFD,
	  "uffd",
	  { "--paging uffd: minivmm's userfaultfd",
	    "handlers back each page on first touch" },
	  uffd },
	{ MODE_REPLAY,
	  "replay",
	  { "background in the order of --eager-order",
	    "FILE, or of a uffd run's recording made", "first (not counted)" },
	  replay },
};
_Static_assert(ARRAY_SIZE(compare_modes) == COMPARE_MODE_COUNT,
	       "one row per enum compare_mode");

/* Mode names, the boot modes' or --restore's, as one table to parse a list against. */
struct names {
	const char *v[COMPARE_MAX_MODES];
	unsigned n;
	const char *ctx;  /* after "--compare=LIST" in messages: "" or " --restore" */
	const char *kind; /* "mode" or "restore mode" */
	const char *eg;	  /* an example list */
};

static int find(const struct names *t, const char *name, size_t len)
{
	for (unsigned i = 0; i < t->n; i++)
		if (strlen(t->v[i]) == len && !strncmp(name, t->v[i], len))
			return (int)i;
	return -1;
}

static const char *mode_names(const struct names *t, char *buf, size_t len)
{
	size_t at = 0;

	buf[0] = '\0';
	for (unsigned i = 0; i < t->n && at < len; i++)
		at += (size_t)snprintf(buf + at, len - at, "%s%s", i ? ", " : "",
				       t->v[i]);
	return buf;
}

static int parse(const struct names *t, const char *list, unsigned *modes, unsigned *n,
		 char *err, size_t errlen)
{
	char names[160];
	const char *p = list;

	*n = 0;
	for (;;) {
		size_t len = strcspn(p, ",");
		int m = find(t, p, len);

		if (m < 0) {
			const char *near;
			char typed[32];

			snprintf(typed, sizeof(typed), "%.*s", (int)len, p);
			near = len ? suggest_name(typed, t->v, t->n) : NULL;
			if (!len)
				snprintf(
					err, errlen,
					"--compare=%s%s: an empty mode name (two commas, or one at an end); %ss are %s, e.g. --compare=%s",
					list, t->ctx, t->kind,
					mode_names(t, names, sizeof(names)), t->eg);
			else
				snprintf(err, errlen,
					 "--compare=%s%s: no %s '%.*s'%s%s%s; %ss are %s",
					 list, t->ctx, t->kind, (int)len, p,
					 near ? " (did you mean " : "", near ? near : "",
					 near ? "?)" : "", t->kind,
					 mode_names(t, names, sizeof(names)));
			return -EINVAL;
		}
		for (unsigned i = 0; i < *n; i++)
			if (modes[i] == (unsigned)m) {
				snprintf(err, errlen, "--compare=%s: mode %s twice", list,
					 t->v[m]);
				return -EINVAL;
			}
		modes[(*n)++] = (unsigned)m; /* each at most once: never more than t->n */
		if (!p[len])
			break;
		p += len + 1;
	}
	if (*n < 2) {
		snprintf(
			err, errlen,
			"--compare=%s%s: a comparison needs two modes or more (%ss are %s)",
			list, t->ctx, t->kind, mode_names(t, names, sizeof(names)));
		return -EINVAL;
	}
	return 0;
}

int compare_modes_parse(const char *list, unsigned *modes, unsigned *n, char *err,
			size_t errlen)
{
	struct names t = {
		.n = COMPARE_MODE_COUNT, .ctx = "", .kind = "mode", .eg = "lazy,eager"
	};

	for (unsigned i = 0; i < t.n; i++)
		t.v[i] = compare_modes[i].name;
	return parse(&t, list, modes, n, err, errlen);
}

int compare_restore_modes_parse(const char *list, unsigned *modes, unsigned *n, char *err,
				size_t errlen)
{
	struct names t = { .ctx = " --restore",
			   .kind = "restore mode",
			   .eg = "copy,uffd" };

	for (; t.n < restore_mode_count && t.n < COMPARE_MAX_MODES; t.n++)
		t.v[t.n] = restore_modes[t.n].name;
	return parse(&t, list, modes, n, err, errlen);
}

int compare_mode_needs_recording(enum compare_mode m, const struct vm_config *base)
{
	return m == MODE_REPLAY && order_is_named(base->eager_order);
}

void compare_recording_config(const struct vm_config *base, const char *path,
			      struct vm_config *out)
{
	uffd(base, out, NULL, 0);
	out->uffd_delay_us = 0; /* the order is the same; the wait would only cost time */
	out->record_touch_path = path;
}
