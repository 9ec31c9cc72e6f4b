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
	uint64_t row_bytes; /* the size the (clear) ceiling was measured at; 0: unknown */
	double min_gib_per_s; /* that row's slowest run; 0: unknown */
	/* What a 2 MiB reservoir would cost: its map (the lease) and clear (made once) rates; 0: none. */
	double lease_map_gib_per_s, lease_clear_gib_per_s;
	int free_page_reporting; /* mm_free_page_reporting(), at the time of the ceiling */
	char balloon[16];
	char missing[160];
	char source[MM_PATH_BYTES]; /* the roofline file */
};
void mm_roofline_ceiling(const struct mm_roofline *r, const char *backing,
			 unsigned threads, uint64_t bytes, uint64_t prezeroed,
			 struct mm_ceiling *c);
/* A row's rate (op "clear" or "map"), the closest thread count at or below threads; 0 if none. */
double mm_roofline_rate(const struct mm_roofline *r, const char *backing, const char *op,
			unsigned threads);
/*
 * Does this machine's balloon hand freed memory back to its host (virtio
 * balloon, VIRTIO_BALLOON_F_REPORTING, /sys/bus/virtio/devices/<N>/features
 * bit 5)? 1, 0, or -1 when there is no balloon to ask; dev names it ("virtio0").
 */
int mm_free_page_reporting(char *dev, size_t len);

#endif /* MINIVMM_MM_ROOFLINE_H */
