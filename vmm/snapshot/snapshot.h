/* The snapshot room: the snapshot format (state file, memory file, directory) and the restore modes. */
#ifndef MINIVMM_SNAPSHOT_H
#define MINIVMM_SNAPSHOT_H

/*
 * A snapshot is a directory of two files, written as the results are (a
 * temporary directory renamed into place: a killed or failed snapshot never
 * leaves a complete-looking one):
 *   state   the header (magic, format version, guest ABI, RAM size, backing
 *           page size, vCPU count, a checksum over the header and the
 *           rest: corruption, not authenticity), every vCPU's
 *           state, the devices' state, the records the guest sent so far,
 *           the boot info's options (format.c); a Linux guest's besides:
 *           what it booted, its in-kernel PICs, IOAPIC, PIT and kvmclock,
 *           COM1 and the PC devices
 *   memory  guest RAM as a sparse file: guest-physical address = file
 *           offset; untouched and all-zero pages are holes (mm/file/memfile.c)
 * May include: vmm/snapshot/, vmm/measure/, vmm/machine/, devices/, mm/, include/.
 */

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "machine.h"
#include "measure.h"
#include "mm.h"

#define SNAP_STATE_FILE	 "state"
#define SNAP_MEMORY_FILE "memory"

/* ---- format.c: the state file, built in memory and parsed from it (pure) ---- */
#define SNAP_MAGIC		"MVMSNAP" /* NUL-padded to 8 */
#define SNAP_FORMAT_VERSION	2	  /* 2: the checksum covers the header too */
#define SNAP_MIN_ABI		5 /* images older than the snapshot hypercall never ask */
#define SNAP_VCPUS_MAX		1024 /* vCPUs a state file may hold */
#define SNAP_RECORD_BATCHES_MAX 8192
#define SNAP_CONSOLE_BYTES \
	4096 /* the console's last output, for the restored run's report */

struct snap_header {
	char magic[8];
	uint32_t format_version; /* SNAP_FORMAT_VERSION */
	uint32_t abi_version;	 /* the guest image's */
	uint64_t ram_bytes;
	uint64_t page_bytes; /* the backing's page */
	uint32_t nvcpus;
	uint32_t vcpu_state_bytes; /* sizeof(struct vcpu_state): this build's layout */
	uint64_t body_bytes;	   /* what follows the header */
	uint64_t checksum; /* snap_state_checksum: the header (this 0) and the body */
	char backing[16];  /* mm_backends[] name */
};

/* Sections of the body, each a struct snap_section then its bytes, 8-aligned. */
enum snap_section_type {
	SNAP_SEC_CONFIG = 1, /* struct snap_config, once, first */
	SNAP_SEC_VCPU = 2,   /* struct vcpu_state, nvcpus of them, in index order */
	SNAP_SEC_RECORDS =
		3, /* struct snap_records then its records: one batch the guest sent */
	SNAP_SEC_CONSOLE =
		4, /* the console's last bytes (at most SNAP_CONSOLE_BYTES), optional */
	/* A Linux guest's (a PC), each once, all five or none: */
	SNAP_SEC_LINUX = 5, /* struct snap_linux: what it booted */
	SNAP_SEC_IRQCHIP =
		6,	  /* struct kvm_irqchip[VM_PC_CHIPS]: PIC master, slave, IOAPIC */
	SNAP_SEC_PIT = 7, /* struct kvm_pit_state2 */
	SNAP_SEC_CLOCK = 8,	 /* struct kvm_clock_data: kvmclock */
	SNAP_SEC_PC_DEVICES = 9, /* struct snap_pc_devices: COM1, CMOS, the boot timer */
	SNAP_SEC_COUNT
};
struct snap_section {
	uint32_t type;
	uint32_t pad;
	uint64_t bytes; /* of what follows (without the padding) */
};

/* What the restore needs of the saved run, and what the report says of it. */
struct snap_config {
	uint64_t mem_bytes;
	uint32_t vcpus;
	uint32_t tsc_khz;
	uint32_t guest_argc;
	uint32_t args_bytes;		 /* of args, NULs included */
	char args[MVM_GUEST_ARGS_BYTES]; /* the guest's arguments, each NUL-terminated */
	char image[256];		 /* the image's path when saved */
	uint64_t result_gpa;		 /* the guest's MVM_HC_SNAPSHOT result word */
	uint64_t guest_checksum;	 /* what the guest sent */
	uint64_t guest_pass;		 /* passes done before it */
	uint32_t snapshot_vcpu;		 /* who asked */
	uint32_t pad;
	uint64_t console_bytes; /* written before the snapshot */
};
struct snap_records {
	uint32_t kind; /* enum mvm_rec_kind */
	uint32_t count;
};
/*
 * What a Linux guest booted: a restore must run the kernel and initrd that
 * built the RAM it restores (their sizes and FNV-1a 64 digests) with the
 * same command line (its digest, " -- ARGS" included).
 */
#define SNAP_PATH_BYTES	   256
#define SNAP_CMDLINE_BYTES 1024
struct snap_linux {
	uint64_t kernel_bytes, initrd_bytes; /* initrd 0: none */
	uint64_t kernel_digest, initrd_digest, cmdline_digest;
	char kernel[SNAP_PATH_BYTES], initrd[SNAP_PATH_BYTES]; /* the paths when saved */
	char cmdline[SNAP_CMDLINE_BYTES]; /* --cmdline as given ("": the default) */
};
struct snap_pc_devices {
	struct console_uart_state com1;
	struct pc_devices_state pc;
};

/* A growing buffer the state file is built in. */
struct snap_buf {
	uint8_t *p;
	size_t len, cap;
};
/* Start with the header's room. 0 or -ENOMEM. */
int snap_buf_init(struct snap_buf *b);
/* Append a section. 0 or -ENOMEM. */
int snap_buf_section(struct snap_buf *b, uint32_t type, const void *a, size_t alen,
		     const void *c, size_t clen);
/* Append len bytes as they are (sections built elsewhere). 0 or -ENOMEM. */
int snap_buf_reserve_copy(struct snap_buf *b, const void *p, size_t len);
/* Fill the header (its sizes and checksum over the body). */
void snap_buf_finish(struct snap_buf *b, const struct snap_header *h);
void snap_buf_free(struct snap_buf *b);

/* A parsed state file: pointers into the buffer it was parsed from. */
struct snap_view {
	const struct snap_header *hdr;
	const struct snap_config *cfg;
	const struct vcpu_state *vcpu[SNAP_VCPUS_MAX];
	const uint8_t *console;
	size_t console_len;
	/* A Linux guest's (all or none): */
	const struct snap_linux *lx;
	const struct kvm_irqchip *chips; /* VM_PC_CHIPS of them */
	const struct kvm_pit_state2 *pit;
	const struct kvm_clock_data *clock;
	const struct snap_pc_devices *pcdev;
	size_t nbatches;
	struct snap_batch {
		uint32_t kind, count;
		const void *recs;
	} * batches; /* malloc'ed: snap_view_free */
};
/*
 * Check and index a whole state file (buf, len; buf 8-aligned). 0, or
 * -EINVAL with what is wrong in err (truncated, not a snapshot, another
 * format version or ABI, a checksum that does not match, a section that
 * does not fit), -ENOMEM. Pure: fuzzed and unit-tested.
 */
int snap_parse(const uint8_t *buf, size_t len, struct snap_view *v, char *err,
	       size_t errlen);
void snap_view_free(struct snap_view *v);
/*
 * The state file's checksum (buf, len >= the header): FNV-1a 64 of the
 * header with its checksum field as 0, then the body. It finds corruption;
 * it authenticates nothing (anyone can recompute it).
 */
uint64_t snap_state_checksum(const uint8_t *buf, size_t len);
uint32_t snap_record_size(uint32_t kind); /* 0 for an unknown kind */

/* ---- dir.c: the snapshot directory, written whole or not at all ---- */
struct snap_dir {
	char path[MM_PATH_BYTES]; /* as given */
	char tmp[MM_PATH_BYTES];  /* the temporary directory beside it, for messages */
	char name[MM_PATH_BYTES]; /* path's last component */
	char tmp_name[MM_PATH_BYTES]; /* tmp's: NAME.minivmm-PID.tmp */
	int dir_fd;		      /* the directory both are in, open */
	int tmp_fd;		      /* the temporary directory, open */
	int state_fd, mem_fd;	      /* its two files */
	int pagemap_fd; /* /proc/self/pagemap, opened before the filter (-1: none) */
};
/*
 * Before the guest runs: refuse a path that exists, remove the temporaries
 * of snapshots to the same path whose process is gone (never following a
 * link), make the temporary directory beside it (NAME.minivmm-PID.tmp) and
 * open its files. 0, or -errno with err set (-EEXIST, -EACCES, ...: a
 * usage error); on failure nothing is left and nothing stays open.
 */
int snap_dir_begin(struct snap_dir *d, const char *path, char *err, size_t errlen);
/*
 * Write the state, fsync both files and the directory, rename it to the
 * path without replacing anything there (RENAME_NOREPLACE; where the file
 * system lacks it, the name is claimed by mkdir first). 0, or -errno with
 * err (-EEXIST: something took the path while the guest ran); d is
 * discarded either way.
 */
int snap_dir_commit(struct snap_dir *d, const struct snap_buf *state, char *err,
		    size_t errlen);
void snap_dir_discard(struct snap_dir *d); /* the temporary goes, nothing is left */
/*
 * On the way out at once (a second SIGINT): the temporary goes, with calls
 * relative to the directories opened at the start only (async-signal-safe,
 * and what the main thread's filter allows).
 */
void snap_dir_unlink_now(const struct snap_dir *d);

/* A snapshot read back for --restore: the state parsed, the memory file open. */
struct snapshot {
	char dir[MM_PATH_BYTES];
	uint8_t *state; /* the state file, whole */
	size_t state_len;
	struct snap_view v;
	int mem_fd;
	uint64_t mem_bytes;			  /* the memory file's size */
	const char *argv[MVM_MAX_GUEST_ARGS + 1]; /* the guest's arguments, into state */
	int argc;
};
/*
 * Read and check dir's snapshot: dir a directory (not a link to one), both
 * files in it regular files (not links, FIFOs or devices: opened without
 * following or blocking, checked on the descriptor), the state whole and
 * valid (its records too, as a guest's call's would be), the memory file
 * as long as RAM. 0, or -errno with one message in err: -EINVAL, -ENOENT
 * (bad input: exit 2), others (the host). snapshot_free cleans up either way.
 */
int snapshot_load(const char *dir, struct snapshot *s, char *err, size_t errlen);
void snapshot_free(struct snapshot *s);

/* ---- save.c: what the run keeps for a snapshot, and the saving ---- */
/* The record batches the guest sent so far, as it sent them (bounded by the ABI's limits). */
struct snap_log;
struct snap_log *snap_log_create(void); /* NULL: ENOMEM */
/* Keep a copy of one checked batch. 0 or -ENOMEM (the snapshot then fails, saying so). */
int snap_log_add(struct snap_log *l, uint32_t kind, const void *recs, uint32_t n);
void snap_log_free(struct snap_log *l);

/* What the saved run says of itself. */
struct snap_save_in {
	const struct snap_log *log;
	struct console *console;
	const struct mvm_hc_snapshot *req; /* the guest's call */
	uint64_t result_gpa;
	const char *backing;
	uint64_t page_bytes;
	int guest_argc;
	char *const *guest_argv;
	const char *image;
	int (*stop)(void *cookie); /* asked as RAM is written: 1 ends the save (-EINTR) */
	void *stop_cookie;
	uint32_t abi; /* the guest's ABI (a Linux guest's programs: this header's) */
	/* A Linux guest: what it booted and its PC devices (NULL: the minivmm guest). */
	const struct snap_linux *lx;
	struct pc_devices *pc;
};
/* What the snapshot cost, for the report and the results. */
struct snapshot_facts {
	int taken;				      /* written and renamed into place */
	const char *path;			      /* the directory */
	double seconds;				      /* from the pause to the rename */
	double memory_s;			      /* of which the memory file */
	uint64_t ram_bytes;			      /* guest RAM */
	uint64_t resident_bytes, data_bytes, extents; /* the memory file's */
	uint64_t state_bytes;
	uint32_t vcpu; /* who asked */
	uint64_t pass; /* passes done */
	uint64_t guest_checksum;
	uint32_t asks; /* snapshot calls the guest made */
	uint32_t msrs; /* MSRs saved per vCPU (vCPU 0's) */
};
/*
 * Every vCPU thread joined after vm_pause: finish their exits, read their
 * state, write the memory file and the state file into d and rename it
 * into place. 0 with f filled, or -errno with err set (nothing complete is
 * left: d is discarded).
 */
int snapshot_save(struct vm *vm, const struct snap_save_in *in, struct snap_dir *d,
		  struct snapshot_facts *f, char *err, size_t errlen);

/* ---- restore.c: a saved VM back on fresh KVM vCPUs ---- */
struct restore_facts {
	const char *mode;
	const char *dir;
	uint64_t data_bytes, extents;	 /* the memory file's */
	uint32_t msrs_set, msrs_skipped; /* vCPU 0's */
	uint32_t skipped[8];		 /* the first MSRs KVM refused */
	uint64_t pass;			 /* passes the guest had done */
	uint64_t guest_checksum;	 /* the checksum it sent with the snapshot */
	double state_s, memory_s;	 /* setting the vCPUs, the mode's prepare */
};
/* Set every vCPU of vm (created, never run) to its saved state. 0 or -errno with err. */
int snapshot_set_vcpus(struct vm *vm, const struct snapshot *s, struct restore_facts *f,
		       char *err, size_t errlen);

/*
 * A Linux guest's platform (v.lx set): its PICs, IOAPIC, PIT and kvmclock,
 * COM1 and the PC devices, once every vCPU holds its saved state and
 * before any runs. 0 or -errno with err.
 */
int snapshot_set_platform(struct vm *vm, const struct snapshot *s, struct console *con,
			  struct pc_devices *pc, char *err, size_t errlen);

/* ---- modes.c: the restore modes (--restore-mode), one row each ---------- */

/*
 * What a restore mode is given to make guest RAM hold the memory file's
 * content. ram is fresh guest RAM of the snapshot's size and backing,
 * already a memslot, never touched; a mode may map over it (MAP_FIXED: the
 * memslot follows the mapping). extents are the file's data (SEEK_DATA /
 * SEEK_HOLE), in order, gpa = file offset; everything else reads as zero.
 */
struct restore_ctx {
	struct vm *vm; /* its vCPUs exist and hold their saved state; none runs yet */
	struct guest_ram *ram;
	int mem_fd;	 /* the memory file, O_RDONLY; the mode may dup it */
	const char *dir; /* the snapshot directory (replay keeps its recording here) */
	uint64_t file_bytes; /* the memory file's size (== ram->size) */
	const struct gpa_range *extents;
	size_t nextents;
	uint64_t data_bytes;	     /* sum of the extents */
	struct timeline *tl;	     /* a mode may mark its own phases (PHASE_MEMORY_*) */
	int sandbox;		     /* threads a mode starts enter their sandbox */
	void *priv;		     /* the mode's own state, from prepare to finish */
	const struct vm_config *cfg; /* the run's (the snapshot's RAM, vCPUs, backing) */
	struct paging *
		*paging; /* the run's pager slot: a uffd mode fills it in prepare */
	int quiet;	 /* -q: a mode prints nothing of its own */
	char *err;	 /* where a mode says what went wrong */
	size_t errlen;
	/* replay's recording, written when the run ends: the pager and the report read it until then. */
	char recording[PATH_MAX];
};

/* What a mode needs of the platform, checked before anything runs (exit 3 if absent). */
enum restore_need {
	RESTORE_NEEDS_UFFD = 1u << 0,	    /* userfaultfd, MISSING mode */
	RESTORE_NEEDS_UFFD_MINOR = 1u << 1, /* userfaultfd MINOR mode (UFFDIO_CONTINUE) */
	RESTORE_NEEDS_SHMEM_FILE = 1u << 2, /* the memory file on tmpfs or hugetlbfs */
	RESTORE_NEEDS_POPULATE = 1u << 3,   /* MADV_POPULATE_WRITE */
};

struct restore_mode {
	const char *name;
	const char *help[2]; /* --help lines (the second may be NULL) */
	unsigned needs;	     /* enum restore_need bits */
	/*
	 * Optional, before anything runs (with the snapshot's header read):
	 * can this mode restore it here? 0; -EOPNOTSUPP (exit 3) or -EINVAL
	 * (exit 2) with err set. The needs bits are checked before it.
	 */
	int (*check)(const char *dir, char *err, size_t errlen);
	/*
	 * Before the vCPUs resume: guest RAM holds (or will, on demand) the
	 * memory file's content. 0, or -errno with ctx->err set (the run ends,
	 * exit 3). Between state_loaded and memory_ready on the timeline.
	 */
	int (*prepare)(struct restore_ctx *ctx);
	/* Optional: the vCPU threads run (background fill). 0 or -errno with ctx->err. */
	int (*resumed)(struct restore_ctx *ctx);
	/* Optional: every vCPU thread joined: stop the mode's threads, free ctx->priv. */
	void (*finish)(struct restore_ctx *ctx);
};

extern const struct restore_mode restore_modes[];
extern const unsigned restore_mode_count;
const struct restore_mode *restore_mode_find(const char *name); /* NULL: no such mode */
/*
 * The needs and the check of mode m for the loaded snapshot, before
 * anything runs: 0, -EOPNOTSUPP (the platform lacks it: exit 3) or -EINVAL
 * (exit 2), with err set.
 */
struct snapshot;
int restore_mode_usable(const struct restore_mode *m, const struct snapshot *snap,
			char *err, size_t errlen);

/* The modes built here (modes.c); others live beside their mechanism. */
int restore_copy(struct restore_ctx *ctx);    /* read every extent into RAM */
int restore_private(struct restore_ctx *ctx); /* map the file MAP_PRIVATE over RAM */

/*
 * restore_lazy.c: the modes minivmm's userfaultfd handlers page from the
 * memory file (mm/paging/uffd_fill.c), and populate. replay keeps its
 * recording in the snapshot directory as SNAP_TOUCH_FILE.
 */
#define SNAP_TOUCH_FILE "touch-order"
/*
 * replay's recording in the snapshot directory dir: its path in path, and
 * whether anything is there (a link too: restore_replay then refuses it).
 */
int snap_recording(const char *dir, char *path, size_t len);
int restore_uffd(struct restore_ctx *ctx); /* each first touch from the file */
int restore_background_resumed(struct restore_ctx *ctx); /* fillers beside the guest */
int restore_replay(struct restore_ctx *ctx);   /* the recorded working set first */
int restore_minor(struct restore_ctx *ctx);    /* private + MINOR faults (tmpfs) */
int restore_populate(struct restore_ctx *ctx); /* private + populate (+ prefault) */

#endif /* MINIVMM_SNAPSHOT_H */
