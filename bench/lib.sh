# bench/lib.sh: what every bench script shares. Source it after `set -euo pipefail`:
#   bench_need / bench_need_check   say which Debian packages are missing; install nothing
#   bench_on_exit                   cleanups run on exit, on error and on Ctrl-C
#   bench_knob_set / _restore       change a sysfs knob; the original comes back on exit
#   bench_order / bench_order_seq   the run order: ABBA for two, a Williams design for more
#   bench_stats / bench_ratios      medians, quartiles, min-max (bench/stats.awk), paired ratios
#   bench_trace_open / _run / _parse  kernel-observed boundaries (a tracefs instance)
#   bench_env_md                    the environment header of a report
# shellcheck shell=bash

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_DIR=$(dirname "$BENCH_DIR")
BENCH_START=$(date -u +%Y-%m-%dT%H:%M:%SZ)
BENCH_CMDLINE="$(basename "$0")${*:+ $*}"

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

# --- run order: ABBA, Williams designs ---------------------------------------------
# bench_order ROUNDS NAME...: one name per line, round after round, each round
# a row of a Williams design (a balanced Latin square): for two names A B, B A
# (ABBA); for three, A B C, B C A, C A B, C B A, A C B, B A C. Over a whole
# cycle of rows (2 names: 2 rounds; 3: 6; 4: 4) every name runs equally often
# in every position and after every other name, so what drifts with time or
# with what ran just before (these machines' memory, backed lazily by their
# host, is faster right after a big free) cancels out of the medians. With
# two names this is exactly ABBA.
bench_order() {
	local rounds=$1 n r k i
	shift
	n=$#
	local -a names=("$@") first=() rows=()
	# Williams' first row: 0, 1, n-1, 2, n-2, ...; row j adds j (mod n); an odd n
	# needs the mirrored rows as well.
	for ((k = 0, i = 0; k < n; k++)); do
		if ((k == 0)); then first+=(0); elif ((k % 2)); then first+=($(((k + 1) / 2))); else first+=($((n - k / 2))); fi
	done
	for ((r = 0; r < n; r++)); do
		local row=""
		for ((k = 0; k < n; k++)); do row+="$(((first[k] + r) % n)) "; done
		rows+=("$row")
	done
	if ((n % 2)); then
		for ((r = 0; r < n; r++)); do
			local -a cells=(${rows[r]})
			local rev=""
			for ((k = n - 1; k >= 0; k--)); do rev+="${cells[k]} "; done
			rows+=("$rev")
		done
	fi
	for ((r = 0; r < rounds; r++)); do
		for i in ${rows[r % ${#rows[@]}]}; do printf '%s\n' "${names[i]}"; done
	done
}

# bench_order_seq ROUNDS NAME...: bench_order's schedule as words "NAME:SEQ", SEQ
# counting each name's runs from 1 (its round), for `for run in $(...)` with
# ${run%:*} the name and ${run##*:} the round. Names hold no white space or ':'.
bench_order_seq() { bench_order "$@" | awk '{ print $0 ":" ++n[$0] }'; }

# --- statistics -------------------------------------------------------------------
# bench_stats [KEYS]: stdin "KEY... VALUE" -> "KEY... n median q1 q3 min max samples".
bench_stats() { awk -f "$BENCH_DIR/stats.awk" ${1:+-v keys="$1"}; }

# bench_ratios NUM DEN: stdin "CELL TOOL SEQ VALUE" -> "CELL RATIO" for every SEQ
# (round) in which both tools ran: NUM's value over DEN's, the pair measured
# side by side. Feed to bench_stats for the median and spread of the ratios.
bench_ratios() {
	awk -F'\t' -v OFS='\t' -v num="$1" -v den="$2" '
		{ v[$1, $2, $3] = $4; if (!(($1, $3) in seen)) { seen[$1, $3]; c[++n] = $1; s[n] = $3 } }
		END { for (i = 1; i <= n; i++) {
			a = v[c[i], num, s[i]]; b = v[c[i], den, s[i]]
			if (a != "" && b != "" && a != "-" && b != "-" && b + 0 > 0)
				printf "%s\t%.9g\n", c[i], a / b } }'
}

# --- kernel-observed boundaries -------------------------------------------------------
# A private tracefs instance (other users of tracing are not disturbed) with the
# events that mark: exec of the program, its first guest port write (kvm_pio:
# the guest's first exit), and each MADV_POPULATE_WRITE call's entry and return.
BENCH_TRACE=""
BENCH_TRACE_WHY=""
bench_trace_open() {
	local root=/sys/kernel/tracing inst e
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
	echo 0 >"$inst/tracing_on"
	echo mono >"$inst/trace_clock"
	echo 4096 >"$inst/buffer_size_kb"
	echo 1 >"$inst/options/event-fork"
	for e in sched/sched_process_exec kvm/kvm_pio syscalls/sys_enter_madvise \
		syscalls/sys_exit_madvise; do
		if [ ! -e "$inst/events/$e/enable" ]; then
			BENCH_TRACE_WHY="this kernel has no $e trace event"
			return 0
		fi
		echo 1 >"$inst/events/$e/enable"
	done
	echo 'behavior == 23' >"$inst/events/syscalls/sys_enter_madvise/filter" # MADV_POPULATE_WRITE
	BENCH_TRACE=$inst
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
bench_trace_parse() {
	awk '
		NR == 1 && /^# command: / { exe = $3; sub(/.*\//, "", exe); next }
		{ pid = ""; ts = ""
		  for (i = 1; i <= NF; i++) {
			if ($i ~ /^\[[0-9]+\]$/) { n = split($(i - 1), a, "-"); pid = a[n] }
			if (ts == "" && $i ~ /^[0-9]+\.[0-9]+:$/) { ts = substr($i, 1, length($i) - 1) + 0 }
		  } }
		ts == "" { next }
		/sched_process_exec:/ && exec == "" { f = $0; sub(/.*filename=/, "", f); sub(/ .*/, "", f)
			sub(/.*\//, "", f); if (f == exe) exec = ts }
		/kvm_pio:/ && exec != "" && pio == "" { pio = ts }
		/sys_madvise\(/ && /behavior: 0x0*17/ { open[pid] = 1; if (first == "" || ts < first) first = ts }
		/sys_madvise ->/ && (pid in open) { delete open[pid]; if (ts > last) last = ts }
		END {
			printf "%s\t%s\n", (pio != "" ? sprintf("%.9f", pio - exec) : "-"),
				(first != "" && last != "" ? sprintf("%.9f", last - first) : "-")
		}' "$1"
}

# --- the environment header ---------------------------------------------------------
# bench_env_md MINIVMM-RESULTS.json: a markdown table: the key fields of minivmm's
# own .environment record from a run of this bench, what the bench adds (QEMU,
# nproc, load, its command), then the whole record.
bench_env_md() {
	local json=${1:-} rev
	rev=$(git -C "$REPO_DIR" rev-parse --short HEAD 2>/dev/null || echo -)
	git -C "$REPO_DIR" diff --quiet HEAD 2>/dev/null || rev="$rev (with uncommitted changes)"
	echo "| what | value | source |"
	echo "|---|---|---|"
	if [ -n "$json" ] && jq -e '.environment | type == "object"' "$json" >/dev/null 2>&1; then
		# The fields a reader compares first; the whole record follows the table.
		jq -r '.environment as $e | .platform as $p
			| def row(k; v): "| \(k) | \(v | tostring | gsub("\\|"; "\\|")) | minivmm results |";
			row("kernel release"; $e.kernel_release),
			row("CPU"; "\($e.cpu_model) (\($e.cpu_vendor) family \($e.cpu_family) model \($e.cpu_model_number) stepping \($e.cpu_stepping)), \($e.online_cpus) online"),
			row("KVM"; "\($p.kvm), \($p.paging) paging, KVM_PRE_FAULT_MEMORY \(if $p.pre_fault_memory then "yes" else "no" end); modules \($e.kvm_modules | keys | join(", "))"),
			row("paging-relevant KVM parameters"; [$e.kvm_modules | to_entries[] | .key as $m | .value | to_entries[]
				| select(.key | test("^(tdp_mmu|ept|npt|nx_huge_pages|eager_page_split|enable_unrestricted_guest)$"))
				| "\($m).\(.key)=\(.value)"] | join(", ")),
			row("THP enabled / defrag"; "\($e.thp_enabled) / \($e.thp_defrag)"),
			row("hugetlb pools"; [$e.hugetlb_pools[] | "\(.size): \(.nr_hugepages)"] | join(", ")),
			row("MemAvailable / MemTotal"; "\($e.mem_available_bytes / 1073741824 * 10 | round / 10) / \($e.mem_total_bytes / 1073741824 * 10 | round / 10) GiB"),
			row("minivmm"; "\($e.minivmm_version), source \($e.source_revision), guest ABI \($e.guest_abi)"),
			row("minivmm command line (this record)"; $e.command_line | join(" ")),
			row("minivmm start time"; $e.start_time)' "$json"
	else
		echo "| environment record | missing: ${json:-no results file} has no .environment | bench |"
	fi
	{
		printf 'bench command\t%s\n' "$BENCH_CMDLINE"
		printf 'bench start (UTC)\t%s\n' "$BENCH_START"
		printf 'source revision\t%s\n' "$rev"
		printf 'nproc\t%s\n' "$(nproc)"
		printf 'load average at start\t%s\n' "$(cut -d' ' -f1-3 /proc/loadavg)"
		printf 'QEMU\t%s\n' "$(qemu-system-x86_64 --version 2>/dev/null | head -1 || echo -)"
		printf 'kernel tracing\t%s\n' "${BENCH_TRACE:+tracefs instance (boundaries observed by the kernel)}${BENCH_TRACE_WHY}"
	} | awk -F'\t' '{ gsub(/\|/, "\\|", $2); printf "| %s | %s | bench |\n", $1, $2 }'
	if [ -n "$json" ] && jq -e '.environment | type == "object"' "$json" >/dev/null 2>&1; then
		echo
		echo "<details><summary>minivmm's whole environment record</summary>"
		echo
		echo "| field | value |"
		echo "|---|---|"
		jq -r '.environment | paths(scalars) as $p
			| "| \($p | map(tostring) | join(".")) | \(getpath($p) | tostring | gsub("\\|"; "\\|")) |"' "$json"
		echo
		echo "</details>"
	fi
}
