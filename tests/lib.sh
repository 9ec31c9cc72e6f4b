# Test helpers shared by the tiers (sourced by tests/run). Each check prints
# PASS or FAIL with a reason; tests/run counts them.
MINIVMM=${MINIVMM:-./minivmm}
GUEST=${GUEST:-guest/guest.bin}
OUT=${OUT:-tests/out}
CASE_TIMEOUT=${CASE_TIMEOUT:-120}
mkdir -p "$OUT"
# Sanitizer builds (make test SAN=1): LeakSanitizer ptraces every thread at
# exit, which the seccomp sandbox forbids, so sandboxed runs skip the leak
# check; the sanitizer tier runs guests with --no-sandbox and leak checking on.
if [ "${SAN:-0}" = 1 ]; then
	export ASAN_OPTIONS=detect_leaks=0:abort_on_error=0:exitcode=99
	export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:exitcode=99
fi

pass() { echo "PASS $1"; }
fail() { echo "FAIL $1: $2"; }
skip() { echo "SKIP $1: $2"; }

# run NAME CMD... : runs CMD with a hard timeout; leaves $OUT/NAME.{out,err,rc}.
run() {
	local name=$1
	shift
	timeout -k 5 "$CASE_TIMEOUT" "$@" >"$OUT/$name.out" 2>"$OUT/$name.err"
	echo $? >"$OUT/$name.rc"
}

# expect NAME STATUS [STDERR-ERE [STDOUT-ERE]] -- CMD... : status and messages.
expect() {
	local name=$1 status=$2 err_re=${3:-} out_re=${4:-} rc
	shift 4
	[ "$1" = "--" ] && shift
	run "$name" "$@"
	rc=$(cat "$OUT/$name.rc")
	if [ "$rc" != "$status" ]; then
		fail "$name" "exit status $rc, expected $status; stderr: $(head -c 600 "$OUT/$name.err")"
	elif [ -n "$err_re" ] && ! grep -Eq -- "$err_re" "$OUT/$name.err"; then
		fail "$name" "stderr does not match /$err_re/: $(head -c 600 "$OUT/$name.err")"
	elif [ -n "$out_re" ] && ! grep -Eq -- "$out_re" "$OUT/$name.out"; then
		fail "$name" "stdout does not match /$out_re/: $(head -c 600 "$OUT/$name.out")"
	else
		pass "$name"
	fi
}

# signal_test NAME SIG STDERR-TEXT: a spinning guest gets SIG once it runs;
# minivmm must stop it, say why, write results to $OUT/NAME.json, exit 130.
signal_test() {
	local name=$1 sig=$2 text=$3 pid rc seen=0
	: >"$OUT/$name.out" # now: the job truncates it only once it runs (an old one says "spinning")
	$MINIVMM --mem 64M -o "$OUT/$name.json" $GUEST -- spin >"$OUT/$name.out" 2>"$OUT/$name.err" &
	pid=$!
	# Only once the guest runs: before that, the shell's background job ignores
	# SIGINT (no job control) and the signal would be lost. A busy machine can
	# take a while to get there.
	for _ in $(seq 600); do
		grep -q spinning "$OUT/$name.out" 2>/dev/null && { seen=1; break; }
		sleep 0.1
	done
	if [ $seen = 0 ]; then
		kill -9 $pid
		wait $pid
		fail "$name" "the guest never said it was spinning: $(head -c 300 "$OUT/$name.err")"
		return
	fi
	kill -"$sig" $pid
	timeout 60 tail --pid=$pid -f /dev/null || kill -9 $pid
	wait $pid
	rc=$?
	if [ $rc = 130 ] && grep -q "$text" "$OUT/$name.err"; then
		pass "$name"
	else
		fail "$name" "status $rc: $(cat "$OUT/$name.err")"
	fi
}

# jq_true NAME FILE FILTER : the jq filter must print true.
jq_true() {
	local name=$1 file=$2 filter=$3 got
	if ! got=$(jq -e "$filter" "$file" 2>&1); then
		fail "$name" "jq '$filter' on $file: $got"
	else
		pass "$name"
	fi
}
