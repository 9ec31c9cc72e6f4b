/* Where guest RAM came from (fresh memory, a --mem-path file, a reservoir lease), reported. */
#include "report.h"

#define MIB(x) ((unsigned long long)((x) >> 20))

const char *ram_backing_name(const struct guest_ram *ram, const struct vm_config *cfg)
{
	if (ram->backend)
		return ram->backend->name;
	/* RAM never existed: what was asked; "auto" when the file system was to decide. */
	return cfg->backing_set || !(cfg->mem_path || cfg->reservoir) ? cfg->backing->name
								      : "auto";
}

uint64_t ram_backing_page_bytes(const struct guest_ram *ram, const struct vm_config *cfg)
{
	if (ram->backend)
		return ram->backend->page_bytes;
	return cfg->backing_set || !(cfg->mem_path || cfg->reservoir)
		       ? cfg->backing->page_bytes
		       : 0;
}

void ram_print(const struct guest_ram *ram, FILE *f)
{
	const struct mm_file *m = ram->file;

	if (!m || !ram->backend)
		return;
	if (m->lease.leased)
		fprintf(f, "guest RAM: leased %llu MiB at %llu MiB of the reservoir %s",
			MIB(ram->size), MIB(m->offset), m->lease.dir);
	else
		fprintf(f, "guest RAM: %llu MiB at %llu MiB of %s%s", MIB(ram->size),
			MIB(m->offset), m->path,
			m->tmpfile ? " (an unlinked file of its own)" : "");
	fprintf(f, ", on %s%s%s%s, %llu KiB pages: --backing %s%s; mapped shared", m->fs,
		m->mount[0] ? " (" : "", m->mount, m->mount[0] ? ")" : "",
		(unsigned long long)(m->fs_page_bytes >> 10), ram->backend->name,
		m->backing_inferred ? " (from the file system)" : "");
	fprintf(f, "; %llu MiB allocated before the run%s", MIB(m->allocated_before),
		m->allocated_exact ? ""
				   : " (at most: its file system does not say where)");
	if (m->grew)
		fprintf(f, "; grown from %llu MiB", MIB(m->file_bytes_before));
	if (!m->lease.leased && !m->tmpfile && m->allocated_before)
		fprintf(f, " (the guest starts with what it holds: not zeroed)");
	fputc('\n', f);
	if (m->lease.leased) {
		fprintf(f, "  lease: keeper pid %d scrubs it once the run ends",
			m->lease.keeper_pid);
		if (m->lease.scrubbed_bytes)
			fprintf(f,
				"; scrubbed %llu MiB an earlier lease left dirty (%.3f s)",
				MIB(m->lease.scrubbed_bytes), m->lease.scrub_s);
		if (m->lease.waited_s > 0.05)
			fprintf(f, "; waited %.2f s for a scrub", m->lease.waited_s);
		fputc('\n', f);
	}
}

void ram_write_json(const struct guest_ram *ram, const struct vm_config *cfg,
		    struct json *j)
{
	const struct mm_file *m = ram->file;

	json_begin_object(j, "ram");
	/* What was asked: also where guest RAM never came to exist. */
	json_string(j, "source",
		    cfg->reservoir  ? "reservoir"
		    : cfg->mem_path ? "file"
				    : "anonymous");
	json_string(j, "backing", ram_backing_name(ram, cfg));
	json_string(j, "backing_from",
		    cfg->backing_set		      ? "option"
		    : cfg->reservoir || cfg->mem_path ? "file system"
						      : "default");
	if (m) {
		json_begin_object(j, "file");
		json_bytes(j, "path", m->path);
		json_bytes(j, "mount", m->mount);
		json_string(j, "fs", m->fs ? m->fs : "");
		json_u64(j, "fs_page_bytes", m->fs_page_bytes);
		json_u64(j, "offset", m->offset);
		json_u64(j, "file_bytes_before", m->file_bytes_before);
		json_u64(j, "allocated_bytes_before", m->allocated_before);
		json_bool(j, "allocated_exact", m->allocated_exact);
		json_bool(j, "tmpfile", m->tmpfile);
		json_bool(j, "grew", m->grew);
		json_bool(j, "locked", m->locked || m->lease.leased);
		json_bool(j, "disk", m->disk);
		json_end_object(j);
	}
	if (m && m->lease.leased) {
		json_begin_object(j, "lease");
		json_bytes(j, "reservoir", m->lease.dir);
		json_u64(j, "offset", m->offset);
		json_u64(j, "bytes", cfg->mem_bytes);
		json_i64(j, "keeper_pid", m->lease.keeper_pid);
		json_seconds(j, "waited_s", m->lease.waited_s);
		json_u64(j, "scrubbed_at_lease_bytes", m->lease.scrubbed_bytes);
		json_seconds(j, "scrubbed_at_lease_s", m->lease.scrub_s);
		json_end_object(j);
	}
	json_end_object(j);
}
