/*
 * mm/roofline: this machine's populate ceilings, read from bench/roofline's
 * TSV, and the ceiling they predict for a populate. Uses the base alone.
 */
#ifndef MINIVMM_MM_ROOFLINE_H
#define MINIVMM_MM_ROOFLINE_H

#include "mm.h"

/* ---- roofline.c: this machine's populate ceilings (bench/roofline's TSV) ---- */
struct mm_roofline;
/* Read a roofline file. 0, or -EINVAL / -errno with the reason in err. */
int mm_roofline_load(const char *path, struct mm_roofline **out, char *err,
		     size_t errlen);
int mm_roofline_parse(const char *text, struct mm_roofline **out, char *err,
		      size_t errlen);
void mm_roofline_free(struct mm_roofline *r);

/*
 * The ceiling for populating `bytes` of backing `backing` with `threads`
 * threads, `prezeroed` of them allocated already: those cost page tables
 * only (op "map"), the rest clearing (op "clear"). The combined ceiling is
 * bytes over the predicted time. found = 0 (and why in missing) when the
 * roofline has no row for what is needed.
 */
struct mm_ceiling {
	int found;
	const char *op;		/* "clear", "map" or "mixed" */
	double clear_gib_per_s; /* 0 when not needed */
	double map_gib_per_s;
	double gib_per_s; /* bytes / predicted_s */
	double predicted_s;
	char missing[160];
	char source[MM_PATH_BYTES]; /* the roofline file */
};
void mm_roofline_ceiling(const struct mm_roofline *r, const char *backing,
			 unsigned threads, uint64_t bytes, uint64_t prezeroed,
			 struct mm_ceiling *c);

#endif /* MINIVMM_MM_ROOFLINE_H */
