/* --clones N: one snapshot restored by N processes at once; each one's first useful work, their tail, and the host memory they hold together. */
#include "experiment.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define CLONE_OVERHEAD_BYTES \
	(24ULL << 20) /* a clone's process, KVM and its tables, roughly */
#define CLONE_LINE_BYTES 256

struct clone_mem {
	uint64_t rss, pss, anon, file, shmem; /* bytes, /proc/PID/smaps_rollup */
};

struct clone {
	pid_t pid;
	int fd;	  /* the parent's end of its channel; -1 once it hung up */
	int held; /* reported, and holds its memory */
	int reaped, wstatus;
	int status; /* as it reported it; -1: it never did */
	double fuw_ms, restore_ms;
	unsigned long long faults;
	int emulated; /* its KVM is the emulated host's: its times are emulation */
	struct clone_mem mem;
	char line[CLONE_LINE_BYTES];
	size_t len;
	char results[PATH_MAX], log[PATH_MAX];
};

struct burst {
	const struct config *cfg;
	struct env *env;
	unsigned n;
	struct clone *c;
	char dir[PATH_MAX -
		 64]; /* the clones' results and logs (room for a name in it) */
	int dir_temporary;
	uint64_t ram_bytes, data_bytes, cached_bytes;
	double spawn_ms; /* the first fork to the last exec released */
	double t0;
	struct uffd_server
		*server;  /* --clone-handler shared, uffd mode: this process's */
	unsigned threads; /* the shared handler's */
	int status;	  /* the parent's exit status, once the clones ended */
	void *map;	  /* its one mapping of the memory file */
};

/*
 * SIGINT or SIGTERM to the parent: passed on to every clone as SIGTERM (a
 * terminal's ^C reaches them itself), and the parent ends as they do, with
 * what they reported written and its status EXIT_INTERRUPTED.
 */
static volatile sig_atomic_t stop_signal;
static const struct clone *volatile stop_clones;
static volatile unsigned stop_n;

static void on_stop(int sig)
{
	const struct clone *c = stop_clones;

	stop_signal = sig;
	for (unsigned i = 0; c && i < stop_n; i++)
		if (c[i].pid > 0)
			kill(c[i].pid, SIGTERM);
}

static void catch_stop(const struct burst *b)
{
	struct sigaction sa = { .sa_handler = on_stop };

	stop_clones = b->c;
	stop_n = b->n;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

enum clone_handler clones_handler(const struct config *cfg)
{
	if (!cfg->restore_mode || strcmp(cfg->restore_mode->name, "uffd"))
		return CLONE_HANDLER_NONE;
	return cfg->clone_handler_own ? CLONE_HANDLER_OWN : CLONE_HANDLER_SHARED;
}

/* The memory file's bytes with data (its allocated blocks: holes read as zeros). */
static uint64_t data_bytes(int fd)
{
	struct stat st;

	return fstat(fd, &st) ? 0 : (uint64_t)st.st_blocks * 512;
}

/*
 * What one clone can come to hold of its own, and what all hold once
 * (the page cache of a file they map): copy reads the file's data into
 * its own RAM; populate writes every page; background fills every page;
 * uffd and replay copy in what is touched (at most the data, and what the
 * guest writes after); private and minor map the one file and own only
 * what they write after. Plus each process and its KVM.
 */
static void need(const struct burst *b, uint64_t *per_clone, uint64_t *shared)
{
	const char *m = b->cfg->restore_mode->name;

	*shared = 0;
	if (!strcmp(m, "populate") || !strcmp(m, "background"))
		*per_clone = b->ram_bytes;
	else if (!strcmp(m, "private") || !strcmp(m, "minor"))
		*per_clone = 0, *shared = !strcmp(m, "private") ? b->data_bytes : 0;
	else
		*per_clone = b->data_bytes;
	*per_clone += CLONE_OVERHEAD_BYTES + b->ram_bytes / 256;
}

static uint64_t mem_available(void)
{
	char text[8192];

	return mm_read_text("/proc/meminfo", text, sizeof(text))
		       ? 0
		       : mm_meminfo_available(text);
}

/* Refused before any clone starts: more than this machine's memory holds. 0 or EXIT_HOST. */
static int check_fit(const struct burst *b)
{
	uint64_t per, shared, avail = mem_available(), fits;

	need(b, &per, &shared);
	if (!avail)
		return 0; /* no /proc/meminfo: nothing to say */
	fits = avail > shared ? (avail - shared) / per : 0;
	if (b->n <= fits)
		return 0;
	char also[96] = "";

	if (shared)
		snprintf(also, sizeof(also),
			 ", and all share the memory file's page cache, %llu MiB",
			 (unsigned long long)(shared >> 20));
	fprintf(stderr,
		"minivmm: --clones %u: --restore-mode %s holds about %llu MiB per clone (%llu MiB of the snapshot's %llu MiB of RAM has data)%s; this host has %llu MiB available (MemAvailable): at most %llu clone%s fit%s; nothing was started\n",
		b->n, b->cfg->restore_mode->name, (unsigned long long)(per >> 20),
		(unsigned long long)(b->data_bytes >> 20),
		(unsigned long long)(b->ram_bytes >> 20), also,
		(unsigned long long)(avail >> 20), (unsigned long long)fits,
		fits == 1 ? "" : "s", fits == 1 ? "s" : "");
	return EXIT_HOST;
}

/* Where the clones write: beside -o FILE (FILE without .json, then .clones/), else a temporary directory. */
static int make_dir(struct burst *b)
{
	const char *o = b->cfg->results_path;

	if (o && strcmp(o, "-")) {
		size_t n = strlen(o);

		if (n > 5 && !strcmp(o + n - 5, ".json"))
			n -= 5;
		if ((size_t)snprintf(b->dir, sizeof(b->dir), "%.*s.clones", (int)n, o) >=
		    sizeof(b->dir))
			return -ENAMETOOLONG;
		if (mkdir(b->dir, 0755) && errno != EEXIST)
			return -errno;
		return 0;
	}
	snprintf(b->dir, sizeof(b->dir), "%s/minivmm-clones-XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(b->dir))
		return -errno;
	b->dir_temporary = 1;
	return 0;
}

/* Clone i's command line: minivmm's own, less --clones and -o, plus its channel and results file. */
static char **clone_argv(const struct burst *b, unsigned i, int fd, char *fdbuf,
			 size_t len)
{
	const struct config *cfg = b->cfg;
	char **v = calloc((size_t)cfg->argc + 6, sizeof(*v));
	int k = 0;

	if (!v)
		return NULL;
	snprintf(fdbuf, len, "%d", fd);
	v[k++] = cfg->argv[0];
	v[k++] = "--clone-hold";
	v[k++] = fdbuf;
	v[k++] = "-o";
	v[k++] = (char *)b->c[i].results;
	for (int a = 1; a < cfg->argc; a++) {
		if ((a >= cfg->argv_clones[0] && a < cfg->argv_clones[1]) ||
		    (a >= cfg->argv_results[0] && a < cfg->argv_results[1]))
			continue;
		v[k++] = cfg->argv[a];
	}
	return v;
}

/* In the child, between fork and exec: its output to its log, its channel kept open, the start awaited. */
static void child(const struct burst *b, unsigned i, int fd, int gate, char **argv)
{
	int log = open(b->c[i].log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	char byte;

	signal(SIGINT, SIG_DFL); /* the parent's on_stop is not the clone's */
	signal(SIGTERM, SIG_DFL);
	if (log < 0 || dup2(log, STDOUT_FILENO) < 0 || dup2(log, STDERR_FILENO) < 0 ||
	    fcntl(fd, F_SETFD, 0) < 0)
		_exit(EXIT_HOST);
	while (read(gate, &byte, 1) < 0 && errno == EINTR)
		;
	execv("/proc/self/exe", argv);
	fprintf(stderr, "minivmm: --clones: exec of /proc/self/exe: %s\n",
		strerror(errno));
	_exit(EXIT_HOST);
}

static int spawn(struct burst *b)
{
	int gate[2], e = 0;
	char fdbuf[16];
	unsigned i;

	if (pipe2(gate, O_CLOEXEC))
		return -errno;
	b->t0 = now_s();
	for (i = 0; i < b->n && !e; i++) {
		struct clone *c = &b->c[i];
		int sv[2];
		char **argv;

		snprintf(c->results, sizeof(c->results), "%s/clone-%u.json", b->dir, i);
		snprintf(c->log, sizeof(c->log), "%s/clone-%u.log", b->dir, i);
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)) {
			e = -errno;
			break;
		}
		argv = clone_argv(b, i, sv[1], fdbuf, sizeof(fdbuf));
		c->pid = argv ? fork() : -1;
		if (c->pid == 0) {
			close(gate[1]);
			child(b, i, sv[1], gate[0], argv);
		}
		e = !argv ? -ENOMEM : c->pid < 0 ? -errno : 0;
		free(argv);
		close(sv[1]);
		c->fd = sv[0];
		if (e) {
			close(sv[0]);
			c->fd = -1;
			c->pid = 0;
		}
	}
	/* All at once: every clone waits at the gate until it closes. */
	close(gate[0]);
	close(gate[1]);
	b->spawn_ms = (now_s() - b->t0) * 1e3;
	return e;
}

static void parse_line(struct clone *c)
{
	if (sscanf(c->line,
		   "clone status %d first_useful_work_ms %lf restore_ms %lf handler_faults %llu emulated %d",
		   &c->status, &c->fuw_ms, &c->restore_ms, &c->faults, &c->emulated) == 5)
		c->held = 1;
}

static void reap(struct clone *c)
{
	while (!c->reaped && c->pid > 0) {
		if (waitpid(c->pid, &c->wstatus, 0) == c->pid)
			c->reaped = 1;
		else if (errno != EINTR)
			break;
	}
}

/*
 * What clone i sent: its uffds (SCM_RIGHTS, with their slices' text) go to
 * the shared handler; the rest into its line. The bytes read, 0 at its
 * end, -1 with errno.
 */
static ssize_t receive(struct burst *b, unsigned i)
{
	struct clone *c = &b->c[i];
	union {
		char buf[CMSG_SPACE(sizeof(int) * UFFD_SERVE_MAX)];
		struct cmsghdr align;
	} u;
	struct iovec iov = { c->line + c->len, sizeof(c->line) - 1 - c->len };
	struct msghdr m = { .msg_iov = &iov,
			    .msg_iovlen = 1,
			    .msg_control = u.buf,
			    .msg_controllen = sizeof(u.buf) };
	ssize_t got = recvmsg(c->fd, &m, MSG_CMSG_CLOEXEC);
	int fds[UFFD_SERVE_MAX];
	unsigned nfds = 0;

	if (got <= 0)
		return got;
	for (struct cmsghdr *h = CMSG_FIRSTHDR(&m); h; h = CMSG_NXTHDR(&m, h))
		if (h->cmsg_level == SOL_SOCKET && h->cmsg_type == SCM_RIGHTS)
			for (size_t k = 0; k < (h->cmsg_len - CMSG_LEN(0)) / sizeof(int);
			     k++) {
				int fd = ((int *)(void *)CMSG_DATA(h))[k];

				if (nfds < UFFD_SERVE_MAX)
					fds[nfds++] = fd;
				else
					close(fd);
			}
	c->len += (size_t)got;
	c->line[c->len] = 0;
	if (nfds) {
		int used = b->server ? uffd_server_add(b->server, i, c->line, c->len, fds,
						       nfds)
				     : -EINVAL;

		if (used < 0) {
			/* Its faults would wait forever: it ends here. */
			for (unsigned k = 0; !b->server && k < nfds; k++)
				close(fds[k]);
			fprintf(stderr,
				"minivmm: --clones: clone %u sent uffds the shared handler cannot serve; it is stopped\n",
				i);
			kill(c->pid, SIGKILL);
			c->len = 0;
		} else {
			memmove(c->line, c->line + used, c->len - (size_t)used + 1);
			c->len -= (size_t)used;
		}
	}
	return got;
}

/* Until every clone has reported (and holds) or ended. */
static void gather(struct burst *b)
{
	struct pollfd *p = calloc(b->n, sizeof(*p));
	unsigned *who = calloc(b->n, sizeof(*who));

	while (p && who) {
		nfds_t n = 0;

		for (unsigned i = 0; i < b->n; i++)
			if (b->c[i].fd >= 0 && !b->c[i].held) {
				p[n] = (struct pollfd){ .fd = b->c[i].fd,
							.events = POLLIN };
				who[n++] = i;
			}
		if (!n)
			break;
		if (poll(p, n, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		for (nfds_t k = 0; k < n; k++) {
			struct clone *c = &b->c[who[k]];
			ssize_t got;

			if (!p[k].revents)
				continue;
			got = receive(b, who[k]);
			if (got > 0) {
				if (strchr(c->line, '\n') ||
				    c->len == sizeof(c->line) - 1)
					parse_line(c);
				if (!c->held && c->len == sizeof(c->line) - 1)
					c->len = 0; /* not our line: drop it */
			} else if (got == 0 || errno != EINTR) {
				/* It ended (or was killed) without holding. */
				close(c->fd);
				c->fd = -1;
				reap(c);
			}
		}
	}
	free(p);
	free(who);
}

static void smaps_rollup(pid_t pid, struct clone_mem *m)
{
	char path[64], line[256];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/smaps_rollup", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long kb;
		char key[64];

		if (sscanf(line, "%63[^:]: %llu kB", key, &kb) != 2)
			continue;
		if (!strcmp(key, "Rss"))
			m->rss = kb << 10;
		else if (!strcmp(key, "Pss"))
			m->pss = kb << 10;
		else if (!strcmp(key, "Pss_Anon"))
			m->anon = kb << 10;
		else if (!strcmp(key, "Pss_File"))
			m->file = kb << 10;
		else if (!strcmp(key, "Pss_Shmem"))
			m->shmem = kb << 10;
	}
	fclose(f);
}

/* Every holding clone's memory, and the file's page cache, at one moment; then all are let go. */
static void measure_and_release(struct burst *b)
{
	for (unsigned i = 0; i < b->n; i++)
		if (b->c[i].held)
			smaps_rollup(b->c[i].pid, &b->c[i].mem);
	if (restore_cache_bytes(b->cfg->restore->mem_fd, b->ram_bytes, &b->cached_bytes))
		b->cached_bytes = 0;
	for (unsigned i = 0; b->server && i < b->n; i++)
		b->c[i].faults = uffd_server_faults(b->server, i);
	for (unsigned i = 0; i < b->n; i++) {
		if (b->c[i].fd >= 0)
			close(b->c[i].fd); /* the clone's poll wakes: it ends */
		b->c[i].fd = -1;
	}
	for (unsigned i = 0; i < b->n; i++)
		reap(&b->c[i]);
	uffd_server_stop(b->server);
	b->server = NULL;
	if (b->map)
		munmap(b->map, b->ram_bytes);
	b->map = NULL;
}

/* --clone-handler shared with uffd: this process maps the memory file once and serves every clone. */
static int start_server(struct burst *b)
{
	const struct config *cfg = b->cfg;

	if (clones_handler(cfg) != CLONE_HANDLER_SHARED)
		return 0;
	b->map = mmap(NULL, b->ram_bytes, PROT_READ, MAP_SHARED, cfg->restore->mem_fd, 0);
	if (b->map == MAP_FAILED) {
		b->map = NULL;
		return -errno;
	}
	/*
	 * One thread per clone by default: the scheduler shares the CPUs among
	 * runnable threads, and one thread for N clones' faults gets 1/(N+1)
	 * of them for N times the work (the bench's uffd-1 shows it).
	 */
	b->threads = cfg->clone_handler_threads ? cfg->clone_handler_threads
		     : b->n < 64		? b->n
						: 64;
	return uffd_server_start(b->map, b->ram_bytes, cfg->restore->v.hdr->page_bytes,
				 b->n, b->threads, &b->server);
}

/* The nearest-rank percentile (p in (0, 1]) of v[0..n), sorted in place. */
static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double percentile(double *v, unsigned n, double p)
{
	unsigned k;

	if (!n)
		return -1;
	qsort(v, n, sizeof(*v), cmp_double);
	k = (unsigned)ceil(p * n);
	return v[(k ? k : 1) - 1];
}

struct tail {
	double p50, p95, max;
	unsigned n;
};

static struct tail tail_of(const struct burst *b, int restore)
{
	double *v = calloc(b->n ? b->n : 1, sizeof(*v));
	struct tail t = { -1, -1, -1, 0 };

	for (unsigned i = 0; v && i < b->n; i++)
		if (b->c[i].held && b->c[i].status == EXIT_GUEST_OK)
			v[t.n++] = restore ? b->c[i].restore_ms : b->c[i].fuw_ms;
	if (t.n) {
		t.p50 = percentile(v, t.n, 0.50);
		t.p95 = percentile(v, t.n, 0.95);
		t.max = v[t.n - 1];
	}
	free(v);
	return t;
}

/* How clone c ended, for a person: NULL if it finished its guest (status 0). */
static const char *ending(const struct clone *c, char *buf, size_t len)
{
	if (c->reaped && WIFSIGNALED(c->wstatus))
		snprintf(buf, len, "killed by signal %d (%s)%s", WTERMSIG(c->wstatus),
			 strsignal(WTERMSIG(c->wstatus)),
			 c->held ? " after its guest ended" : " before its guest ended");
	else if (!c->held && c->reaped)
		snprintf(buf, len, "exited with status %d before its guest ended",
			 WEXITSTATUS(c->wstatus));
	else if (!c->held)
		snprintf(buf, len, "never started");
	else if (c->status != EXIT_GUEST_OK)
		snprintf(buf, len, "its run ended with status %d", c->status);
	else
		return NULL;
	return buf;
}

/* What a clone's ending makes of the parent's status: a clone killed by a signal is the host's doing. */
static int parent_status(const struct clone *c, int st)
{
	return c->reaped && WIFSIGNALED(c->wstatus) ? EXIT_HOST : st;
}

static int clone_status(const struct clone *c)
{
	if (c->reaped && WIFSIGNALED(c->wstatus))
		return 128 + WTERMSIG(c->wstatus);
	if (c->held)
		return c->status   ? c->status
		       : c->reaped ? WEXITSTATUS(c->wstatus)
				   : EXIT_HOST;
	return c->reaped ? WEXITSTATUS(c->wstatus) : EXIT_HOST;
}

/* Whether any clone's KVM was the emulated host's (its times are emulation). */
static int emulated(const struct burst *b)
{
	for (unsigned i = 0; i < b->n; i++)
		if (b->c[i].emulated)
			return 1;
	return 0;
}

/* The clones' memory and handler faults, summed. */
static void totals(const struct burst *b, struct clone_mem *sum,
		   unsigned long long *faults)
{
	*sum = (struct clone_mem){ 0 };
	*faults = 0;
	for (unsigned i = 0; i < b->n; i++) {
		const struct clone_mem *m = &b->c[i].mem;

		sum->rss += m->rss, sum->pss += m->pss, sum->anon += m->anon;
		sum->file += m->file, sum->shmem += m->shmem;
		*faults += b->c[i].faults;
	}
}

static double mib(uint64_t b)
{
	return (double)b / (1 << 20);
}

static void print(const struct burst *b)
{
	struct tail f = tail_of(b, 0), r = tail_of(b, 1);
	enum clone_handler h = clones_handler(b->cfg);
	struct clone_mem sum;
	unsigned long long faults;
	char why[160], threads[16];

	totals(b, &sum, &faults);
	snprintf(threads, sizeof(threads), "%u", b->threads);
	printf("clones: %u restores of %s (--restore-mode %s%s%s), started together (%.1f ms from the first fork to the last released); their files in %s\n",
	       b->n, b->cfg->restore_dir, b->cfg->restore_mode->name,
	       h == CLONE_HANDLER_SHARED
		       ? ", one shared handler process, this one, threads "
	       : h == CLONE_HANDLER_OWN ? ", each clone its own handlers"
					: "",
	       h == CLONE_HANDLER_SHARED ? threads : "", b->spawn_ms,
	       b->dir_temporary ? "a temporary directory, removed" : b->dir);
	printf("%6s %8s %7s %12s %12s %9s %10s %10s %10s\n", "clone", "pid", "status",
	       "restore_ms", "first_uw_ms", "h_faults", "Pss_MiB", "anon_MiB",
	       "file_MiB");
	for (unsigned i = 0; i < b->n; i++) {
		const struct clone *c = &b->c[i];

		if (ending(c, why, sizeof(why))) {
			printf("%6u %8d %7d  %s\n", i, (int)c->pid, clone_status(c), why);
			continue;
		}
		printf("%6u %8d %7d %12.1f %12.1f %9llu %10.1f %10.1f %10.1f\n", i,
		       (int)c->pid, 0, c->restore_ms, c->fuw_ms, c->faults,
		       mib(c->mem.pss), mib(c->mem.anon),
		       mib(c->mem.file + c->mem.shmem));
	}
	if (emulated(b))
		printf("EMULATED host (QEMU TCG): the memory and KVM's counts are real, the times are an emulated machine's\n");
	printf("first useful work (exec to the guest's first pass done), of %u clones: p50 %.1f ms, p95 %.1f ms, max %.1f ms\n",
	       f.n, f.p50, f.p95, f.max);
	printf("restore latency (exec to the guest resumed): p50 %.1f ms, p95 %.1f ms, max %.1f ms; handler faults %llu in all\n",
	       r.p50, r.p95, r.max, faults);
	printf("host memory, measured while every clone held its RAM after its guest ended: summed Pss %.1f MiB (anon %.1f, file %.1f, shmem %.1f), summed Rss %.1f MiB; the memory file's page cache %.1f MiB; one guest's working set (the snapshot's data) %.1f MiB, times %u: %.1f MiB (summed Pss over it: %.2f)\n",
	       mib(sum.pss), mib(sum.anon), mib(sum.file), mib(sum.shmem), mib(sum.rss),
	       mib(b->cached_bytes), mib(b->data_bytes), b->n, mib(b->data_bytes * b->n),
	       b->data_bytes ? (double)sum.pss / (double)(b->data_bytes * b->n) : 0.0);
	fflush(stdout);
}

static void json_tail(struct json *j, const char *key, struct tail t)
{
	json_begin_flat_object(j, key);
	json_ms(j, "p50", t.p50);
	json_ms(j, "p95", t.p95);
	json_ms(j, "max", t.max);
	json_end_object(j);
}

static void build_json(struct json *j, const void *arg)
{
	const struct burst *b = arg;
	enum clone_handler h = clones_handler(b->cfg);
	struct clone_mem sum;
	unsigned long long faults;
	unsigned ok = 0;

	totals(b, &sum, &faults);
	for (unsigned i = 0; i < b->n; i++)
		ok += clone_status(&b->c[i]) == EXIT_GUEST_OK;
	json_begin_object(j, NULL);
	results_header_json(b->env, j);
	json_begin_object(j, "clones");
	json_bytes(j, "snapshot", b->cfg->restore_dir);
	json_string(j, "restore_mode", b->cfg->restore_mode->name);
	json_string(j, "handler",
		    h == CLONE_HANDLER_SHARED ? "shared"
		    : h == CLONE_HANDLER_OWN  ? "own"
					      : NULL);
	if (h == CLONE_HANDLER_SHARED)
		json_u64(j, "handler_threads", b->threads);
	json_bool(j, "emulated", emulated(b));
	json_u64(j, "n", b->n);
	json_u64(j, "finished", ok);
	json_ms(j, "spawn_ms", b->spawn_ms);
	json_u64(j, "ram_bytes", b->ram_bytes);
	json_u64(j, "working_set_bytes", b->data_bytes);
	json_tail(j, "first_useful_work_ms", tail_of(b, 0));
	json_tail(j, "restore_ms", tail_of(b, 1));
	json_u64(j, "handler_faults", faults);
	json_begin_object(j, "memory");
	json_u64(j, "pss_bytes", sum.pss);
	json_u64(j, "pss_anon_bytes", sum.anon);
	json_u64(j, "pss_file_bytes", sum.file);
	json_u64(j, "pss_shmem_bytes", sum.shmem);
	json_u64(j, "rss_bytes", sum.rss);
	json_u64(j, "file_cache_bytes", b->cached_bytes);
	json_end_object(j);
	json_begin_array(j, "per_clone");
	for (unsigned i = 0; i < b->n; i++) {
		const struct clone *c = &b->c[i];
		char why[160];

		json_begin_flat_object(j, NULL);
		json_u64(j, "index", i);
		json_i64(j, "pid", c->pid);
		json_i64(j, "status", clone_status(c));
		json_string(j, "ending", ending(c, why, sizeof(why)));
		json_ms(j, "first_useful_work_ms", c->held ? c->fuw_ms : -1);
		json_ms(j, "restore_ms", c->held ? c->restore_ms : -1);
		json_u64(j, "handler_faults", c->faults);
		json_u64(j, "pss_bytes", c->mem.pss);
		json_u64(j, "rss_bytes", c->mem.rss);
		json_bytes(j, "results", b->dir_temporary ? NULL : c->results);
		json_end_object(j);
	}
	json_end_array(j);
	json_end_object(j);
	json_begin_flat_object(j, "exit");
	json_i64(j, "status", b->status);
	json_end_object(j);
	json_end_object(j);
}

/* The temporary directory's files, when nothing is to be kept. */
static void remove_dir(const struct burst *b)
{
	for (unsigned i = 0; i < b->n; i++) {
		unlink(b->c[i].results);
		unlink(b->c[i].log);
	}
	rmdir(b->dir);
}

int clones_main(const struct config *cfg, struct env *env, struct outputs *o)
{
	struct burst b = { .cfg = cfg, .env = env, .n = cfg->clones };
	int status = EXIT_GUEST_OK, e;
	char why[160];

	if (cfg->argv_clones[0] < 0 || cfg->argv_results[0] < 0) {
		fprintf(stderr,
			"minivmm: --clones: write -o FILE as a word of its own (not among other short options): each clone's command line is this one without it\n");
		return EXIT_USAGE;
	}
	b.ram_bytes = cfg->restore->v.hdr->ram_bytes;
	b.data_bytes = data_bytes(cfg->restore->mem_fd);
	status = check_fit(&b);
	if (status)
		return status;
	b.c = calloc(b.n, sizeof(*b.c));
	if (!b.c) {
		fprintf(stderr, "minivmm: out of memory\n");
		return EXIT_HOST;
	}
	for (unsigned i = 0; i < b.n; i++)
		b.c[i] = (struct clone){ .fd = -1, .status = -1 };
	e = make_dir(&b);
	if (e) {
		fprintf(stderr, "minivmm: --clones: the clones' directory %s: %s\n",
			b.dir, strerror(-e));
		free(b.c);
		return EXIT_HOST;
	}
	/* A clone that dies must not take the parent with it (its channel's write). */
	signal(SIGPIPE, SIG_IGN);
	e = start_server(&b);
	if (e) {
		fprintf(stderr, "minivmm: --clones: the shared userfaultfd handler: %s\n",
			strerror(-e));
		if (b.dir_temporary)
			remove_dir(&b);
		free(b.c);
		return EXIT_HOST;
	}
	catch_stop(&b);
	e = spawn(&b);
	if (e)
		fprintf(stderr,
			"minivmm: --clones: starting clone %u: %s; the others run\n", b.n,
			strerror(-e));
	gather(&b);
	measure_and_release(&b);
	print(&b);
	for (unsigned i = 0; i < b.n; i++) {
		const struct clone *c = &b.c[i];

		if (!ending(c, why, sizeof(why)))
			continue;
		fprintf(stderr, "minivmm: --clones: clone %u (pid %d) %s%s%s\n", i,
			(int)c->pid, why, b.dir_temporary ? "" : "; its output: ",
			b.dir_temporary ? "" : c->log);
		if (status == EXIT_GUEST_OK)
			status = parent_status(c, clone_status(c));
	}
	if (e && status == EXIT_GUEST_OK)
		status = EXIT_HOST;
	if (stop_signal) {
		fprintf(stderr,
			"minivmm: --clones: interrupted (%s): every clone was stopped\n",
			strsignal(stop_signal));
		status = EXIT_INTERRUPTED;
	}
	env_complete(env);
	b.status = status;
	if (o->file[OUTPUT_RESULTS].fd >= 0) {
		int w = json_write_fd(o->file[OUTPUT_RESULTS].fd, build_json, &b);

		if (w) {
			fprintf(stderr,
				"minivmm: writing the clones' results to %s: %s\n",
				o->file[OUTPUT_RESULTS].path, strerror(-w));
			output_discard(&o->file[OUTPUT_RESULTS]);
		} else {
			w = output_commit(&o->file[OUTPUT_RESULTS]);
		}
		if (w && status == EXIT_GUEST_OK)
			status = EXIT_HOST;
	}
	if (b.dir_temporary)
		remove_dir(&b);
	free(b.c);
	return status;
}
