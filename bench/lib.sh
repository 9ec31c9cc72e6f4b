# bench/lib.sh: what every bench script shares. Source it after `set -euo pipefail`:
#   bench_need / bench_need_check   say which Debian packages are missing; install nothing
#   bench_need_kvm                  a /dev/kvm to open, or why not (minivmm's words) and the emu-host line
#   bench_on_exit                   cleanups run on exit, on error and on Ctrl-C
#   bench_knob_set / _restore       change a sysfs knob; the original comes back on exit
#   bench_order / bench_order_seq   the run order: ABBA for two, a Williams design for more
#   bench_stats / bench_ratios      medians, quartiles, min-max, paired ratios (scripts/mvmtools)
#   bench_trace_open / _run / _parse  kernel-observed boundaries (a tracefs instance)
#   bench_facts                     what a report's environment table adds about the bench
# shellcheck shell=bash

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_DIR=$(dirname "$BENCH_DIR")
BENCH_START=$(date -u +%Y-%m-%dT%H:%M:%SZ)
BENCH_CMDLINE="$(basename "$0")${*:+ $*}"
BENCH_ARGV=("$@")

# --- cleanups: LIFO, run once, whatever ends the script -------------------------
_bench_cleanups=()
bench_on_exit() { _bench_cleanups+=("$1"); }
_bench_cleanup() {
	local i
	for ((i = ${#_bench_cleanups[@]} - 1; i >= 0; i--)); do
		eval "${_bench_cleanups[i]}" || true
	done
	_bench_cleanups=()
}
trap '_bench_cleanup' EXIT
trap '_bench_cleanup; trap - INT; kill -INT $$' INT
trap '_bench_cleanup; exit 143' TERM

# --- dependencies: name what is missing, install nothing -------------------------
_bench_missing=()
# bench_need COMMAND DEBIAN-PACKAGE
bench_need() { command -v "$1" >/dev/null 2>&1 || _bench_missing+=("$2"); }
bench_need_check() {
	[ ${#_bench_missing[@]} -eq 0 ] && return 0
	local pkgs
	pkgs=$(printf '%s\n' "${_bench_missing[@]}" | sort -u | tr '\n' ' ')
	echo "$(basename "$0"): missing Debian packages: ${pkgs% }" >&2
	echo "  install them with: apt-get install ${pkgs% }" >&2
	exit 1
}

# --- KVM: a /dev/kvm to open, or why not and the emulated host's line -----------------
# bench_need_kvm [GUEST-RAM]: exit 1 after saying why, in minivmm's words, and how
# to run the same bench in an emulated KVM host (scripts/need-kvm); for guests of
# more than 1G (GUEST-RAM: 4G, 512M) with that RAM and 2 GiB (minivmm's rule).
bench_need_kvm() {
	local mib emu=()
	mib=$(($(numfmt --from=iec "${1:-0}" 2>/dev/null || echo 0) / 1048576))
	[ "$mib" -le 1024 ] || emu=(--mem $((mib + 2048)))
	"$REPO_DIR/scripts/need-kvm" "$(basename "$0")" "${emu[@]}" -- "bench/$(basename "$0")" "${BENCH_ARGV[@]}" ||
		exit 1
}

# --- sysfs knobs: set for a measurement, restored on any exit ------------------------
declare -A _bench_knob_saved=()
# The current value; for "always [madvise] never" style files, the bracketed one.
bench_knob_get() {
	local v
	v=$(cat "$1")
	if [[ $v =~ \[([^]]*)\] ]]; then echo "${BASH_REMATCH[1]}"; else echo "$v"; fi
}
# bench_knob_set PATH VALUE: prints nothing; fails loudly if the kernel refuses.
bench_knob_set() {
	local path=$1 value=$2
	if [ -z "${_bench_knob_saved[$path]+set}" ]; then
		_bench_knob_saved[$path]=$(bench_knob_get "$path")
		bench_on_exit "echo '${_bench_knob_saved[$path]}' >'$path'"
	fi
	echo "$value" >"$path"
}
# bench_knob_restore PATH: back to what it was before the first bench_knob_set.
bench_knob_restore() {
	[ -z "${_bench_knob_saved[$1]+set}" ] || echo "${_bench_knob_saved[$1]}" >"$1"
}

# --- run order, statistics: the Python package (scripts/mvmtools) -------------------
# mvmtools COMMAND...: python3 -m mvmtools from this tree (standard library only).
mvmtools() { PYTHONPATH="$REPO_DIR/scripts${PYTHONPATH:+:$PYTHONPATH}" python3 -m mvmtools "$@"; }

# bench_order ROUNDS NAME...: one name per line, round after round, each round a
# row of a Williams design (a balanced Latin square; mvmtools/design.py): for two
# names A B, B A (ABBA); for three, A B C, B C A, C A B, C B A, A C B, B A C. Over
# a whole cycle of rows (2 names: 2 rounds; 3: 6; 4: 4) every name runs equally
# often in every position and after every other name, so what drifts with time
# or with what ran just before (these machines' memory, backed lazily by their
# host, is faster right after a big free) cancels out of the medians.
bench_order() { mvmtools order "$@"; }

# bench_order_seq ROUNDS NAME...: bench_order's schedule as words "NAME:SEQ", SEQ
# counting each name's runs from 1 (its round), for `for run in $(...)` with
# ${run%:*} the name and ${run##*:} the round. Names hold no white space or ':'.
bench_order_seq() { mvmtools order-seq "$@"; }

# bench_stats [KEYS]: stdin "KEY... VALUE" -> "KEY... n median q1 q3 min max samples"
# (tab-separated; values that are not numbers are skipped; quartiles are R's
# type 7, as minivmm's own; mvmtools/stats.py).
bench_stats() { mvmtools stats ${1:+"$1"}; }

# bench_ratios NUM DEN: stdin "CELL TOOL SEQ VALUE" -> "CELL RATIO" for every SEQ
# (round) in which both tools ran: NUM's value over DEN's, the pair measured
# side by side. Feed to bench_stats for the median and spread of the ratios.
bench_ratios() { mvmtools ratios "$1" "$2"; }

# --- kernel-observed boundaries -------------------------------------------------------
# A private tracefs instance (other users of tracing are not disturbed) with the
# events that mark: exec of the program, its first guest port write (kvm_pio:
# the guest's first exit), and each MADV_POPULATE_WRITE call's entry and return.
# Where tracefs cannot be mounted or an instance set up (BENCH_TRACEFS: another
# root, for tests), BENCH_TRACE stays empty and BENCH_TRACE_WHY says why.
BENCH_TRACE=""
BENCH_TRACE_WHY=""
bench_trace_open() {
	local root=${BENCH_TRACEFS:-/sys/kernel/tracing} inst e
	if [ ! -d $root/instances ] && ! mount -t tracefs nodev $root 2>/dev/null; then
		BENCH_TRACE_WHY="tracefs is not mounted and could not be mounted at $root"
		return 0
	fi
	inst=$root/instances/minivmm-bench-$$
	if ! mkdir "$inst" 2>/dev/null; then
		BENCH_TRACE_WHY="cannot create a tracing instance in $root/instances (not root?)"
		return 0
	fi
	bench_on_exit "echo 0 >'$inst/tracing_on'; echo 0 >'$inst/events/enable'; rmdir '$inst'"
	# Each setting checked: a kernel that refuses one leaves the bench untraced
	# (it says why), never stopped by set -e half way through.
	_bench_trace_set "$inst" tracing_on 0 && _bench_trace_set "$inst" trace_clock mono &&
		_bench_trace_set "$inst" buffer_size_kb 4096 && _bench_trace_set "$inst" options/event-fork 1 || return 0
	for e in sched/sched_process_exec kvm/kvm_pio syscalls/sys_enter_madvise \
		syscalls/sys_exit_madvise; do
		if [ ! -e "$inst/events/$e/enable" ]; then
			BENCH_TRACE_WHY="this kernel has no $e trace event"
			return 0
		fi
		_bench_trace_set "$inst" "events/$e/enable" 1 || return 0
	done
	# MADV_POPULATE_WRITE
	_bench_trace_set "$inst" events/syscalls/sys_enter_madvise/filter 'behavior == 23' || return 0
	BENCH_TRACE=$inst
}
# _bench_trace_set INSTANCE FILE VALUE: or BENCH_TRACE_WHY says which the kernel refused.
_bench_trace_set() {
	if ! echo "$3" 2>/dev/null >"$1/$2"; then
		BENCH_TRACE_WHY="the kernel refused '$3' in $1/$2"
		return 1
	fi
}

# bench_trace_run TRACE-OUT TIMING-OUT COMMAND...: run COMMAND under run-timed
# (TIMING-OUT gets "wall_s status maxrss_kib minor_faults"), traced when tracing works.
# Returns 0 when COMMAND ran, whatever its exit status; not 0 when it could not be
# run or traced (run-timed's or the shell's reason is on stderr). Callers check it:
#   bench_trace_run ... 2>LOG || die "... (log: LOG)"
# (set -e would end the bench inside this function, without saying why).
bench_trace_run() {
	local tout=$1 timing=$2 rc=0
	shift 2
	rm -f "$timing" # never a previous run's timing
	if [ -z "$BENCH_TRACE" ]; then
		: >"$tout"
		"$REPO_DIR/build/bench/run-timed" -o "$timing" -- "$@" || rc=$?
		return "$rc"
	fi
	: >"$BENCH_TRACE/trace"
	(
		# The pid filter first: while it is empty, every process's events are recorded.
		echo "$BASHPID" >"$BENCH_TRACE/set_event_pid" || exit
		echo 1 >"$BENCH_TRACE/tracing_on" || exit
		exec "$REPO_DIR/build/bench/run-timed" -o "$timing" -- "$@"
	) || rc=$?
	local off=0
	echo 0 >"$BENCH_TRACE/tracing_on" || off=1
	{
		printf '# command: %s\n' "$1"
		cat "$BENCH_TRACE/trace"
	} >"$tout" || off=$?
	[ "$rc" != 0 ] || rc=$off
	return "$rc"
}

# bench_trace_parse TRACE: "exec_to_first_exit_s  populate_s" from one traced run
# ("-" where the trace has no such events): exec of the measured program (the
# command's own name, not run-timed) to its first kvm_pio, and the span from the
# first MADV_POPULATE_WRITE entry to the last such call's return, over all threads.
# A reservoir lease's keeper (task "mvm-keeper", forked by minivmm, so traced too)
# is left out: its scrub of a 4 KiB pool populates after the guest is gone.
bench_trace_parse() {
	awk '
		NR == 1 && /^# command: / { exe = $3; sub(/.*\//, "", exe); next }
		{ pid = ""; ts = ""; task = ""
		  for (i = 1; i <= NF; i++) {
			if ($i ~ /^\[[0-9]+\]$/) { task = $(i - 1); n = split(task, a, "-"); pid = a[n] }
			if (ts == "" && $i ~ /^[0-9]+\.[0-9]+:$/) { ts = substr($i, 1, length($i) - 1) + 0 }
		  } }
		ts == "" || task ~ /^mvm-keeper-/ { next }
		/sched_process_exec:/ && exec == "" { f = $0; sub(/.*filename=/, "", f); sub(/ .*/, "", f)
			sub(/.*\//, "", f); if (f == exe) exec = ts }
		/kvm_pio:/ && exec != "" && pio == "" { pio = ts }
		# behavior 0x17: kernels print it "0x17" (6.18) or "17" (6.12), hex either way.
		/sys_madvise\(/ && /behavior: (0x)?0*17\)/ { open[pid] = 1; if (first == "" || ts < first) first = ts }
		/sys_madvise ->/ && (pid in open) { delete open[pid]; if (ts > last) last = ts }
		END {
			printf "%s\t%s\n", (pio != "" ? sprintf("%.9f", pio - exec) : "-"),
				(first != "" && last != "" ? sprintf("%.9f", last - first) : "-")
		}' "$1"
}

# --- what the bench records about itself ----------------------------------------------
# bench_facts: "FIELD<TAB>VALUE" lines the report's environment table adds to
# minivmm's own record (bench/peers keeps them as DIR/bench.tsv; mvmtools renders).
bench_facts() {
	local rev
	rev=$(git -C "$REPO_DIR" rev-parse --short HEAD 2>/dev/null || echo -)
	git -C "$REPO_DIR" diff --quiet HEAD 2>/dev/null || rev="$rev (with uncommitted changes)"
	printf 'bench command\t%s\n' "$BENCH_CMDLINE"
	printf 'bench start (UTC)\t%s\n' "$BENCH_START"
	printf 'source revision\t%s\n' "$rev"
	printf 'nproc\t%s\n' "$(nproc)"
	printf 'load average at start\t%s\n' "$(cut -d' ' -f1-3 /proc/loadavg)"
	printf 'QEMU\t%s\n' "$(qemu-system-x86_64 --version 2>/dev/null | head -1 || echo -)"
	printf 'kernel tracing\t%s\n' "${BENCH_TRACE:+tracefs instance (boundaries observed by the kernel)}${BENCH_TRACE_WHY}"
	[ "${MINIVMM_EMULATED:-}" != 1 ] ||
		printf 'emulated host\t%s\n' "MINIVMM_EMULATED=1 (scripts/emu-host: QEMU TCG): times are an emulated machine's"
}
