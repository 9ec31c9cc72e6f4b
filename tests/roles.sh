# Tier "roles" (issue 38): every thread role runs under its own seccomp filter in a
# real run: a thread of that role calls socket(2) (MINIVMM_TEST_SECCOMP_PROBE) and the
# kernel kills the process (SIGSYS: status 159); and SIGINT during a snapshot's save
# ends the run cleanly. Sourced by tests/run. ROLES_SAVE_ONLY=1 runs the SIGINT cases
# only (against another MINIVMM, e.g. an older build, to see them fail there).
R=$OUT/roles
rm -rf "$R"
mkdir -p "$R"
FLAT="flat --max-mib 4 --iterations 3"

# probe NAME ROLE CMD...: killed by SIGSYS after the role's thread said it would call.
probe() {
	local name=$1 role=$2
	shift 2
	expect "$name" 159 "test probe: a $role thread calls socket\(2\)" '' -- \
		env MINIVMM_TEST_SECCOMP_PROBE=$role "$@"
}

if [ "${ROLES_SAVE_ONLY:-0}" != 1 ]; then
# A snapshot for the restore modes' fillers, taken first (the saver role's own run).
expect roles-snapshot 0 '' '' -- $MINIVMM -q --mem 64M --snapshot "$R/snap" $GUEST -- flat --max-mib 16 --iterations 3 --snapshot-after 1
probe roles-vcpu vcpu $MINIVMM --mem 32M $GUEST -- $FLAT
probe roles-main main $MINIVMM --mem 32M $GUEST -- $FLAT
probe roles-saver saver $MINIVMM --mem 32M --snapshot "$R/probe" $GUEST -- $FLAT --snapshot-after 1
probe roles-uffd uffd $MINIVMM --mem 32M --paging uffd $GUEST -- $FLAT
probe roles-eager eager $MINIVMM --mem 64M --eager=background:populate $GUEST -- flat --max-mib 8 --iterations 50
probe roles-fill-background fill $MINIVMM --restore "$R/snap" --restore-mode background
# Without the probe the same runs pass (the filters let the work through); replay's
# first run records the first touches, its second fetches them with fillers.
expect roles-fill-background-ok 0 '' 'after the restore: match' -- $MINIVMM --restore "$R/snap" --restore-mode background
expect roles-replay-record 0 '' 'after the restore: match' -- $MINIVMM --restore "$R/snap" --restore-mode replay
expect roles-fill-replay-ok 0 '' 'fetched before resuming' -- $MINIVMM --restore "$R/snap" --restore-mode replay
probe roles-fill-replay fill $MINIVMM --restore "$R/snap" --restore-mode replay
fi

# --- SIGINT during a save ------------------------------------------------------
# save_interrupt NAME COUNT: a guest of SAVE_MIB written whole asks for a snapshot;
# once its memory file is sized (the save has begun) it gets COUNT SIGINTs. The run
# must end with 130 and say so, leaving neither the snapshot nor its temporary.
SAVE_MIB=${SAVE_MIB:-1536}
save_interrupt() {
	local name=$1 count=$2 snap=$R/$1 pid rc seen=0 f
	$MINIVMM --mem ${SAVE_MIB}M --snapshot "$snap" $GUEST -- flat --max-mib $((SAVE_MIB / 3)) --iterations 2 --snapshot-after 1 \
		>"$OUT/$name.out" 2>"$OUT/$name.err" &
	pid=$!
	for _ in $(seq 3000); do
		for f in "$snap".minivmm-*.tmp/memory; do
			[ "$(stat -c %s "$f" 2>/dev/null)" = $((SAVE_MIB << 20)) ] && seen=1
		done
		[ $seen = 1 ] && break
		kill -0 $pid 2>/dev/null || break
		sleep 0.1
	done
	if [ $seen = 0 ]; then
		kill -9 $pid 2>/dev/null
		wait $pid
		fail "$name" "the save never began: $(tail -c 300 "$OUT/$name.err")"
		return
	fi
	for _ in $(seq "$count"); do
		kill -INT $pid
		sleep 0.2
	done
	timeout 300 tail --pid=$pid -f /dev/null || kill -9 $pid
	wait $pid
	rc=$?
	if [ $rc != 130 ]; then
		fail "$name" "status $rc, expected 130: $(tail -c 400 "$OUT/$name.err")"
	elif [ -e "$snap" ] || ls -d "$snap".minivmm-*.tmp >/dev/null 2>&1; then
		fail "$name" "left behind: $(ls -d "$snap" "$snap".minivmm-*.tmp 2>/dev/null)"
	elif ! grep -Eq "$3" "$OUT/$name.err"; then
		fail "$name" "stderr does not say /$3/: $(tail -c 400 "$OUT/$name.err")"
	else
		pass "$name"
	fi
}
save_interrupt roles-save-sigint 1 'interrupted by SIGINT during the snapshot; no snapshot was left'
save_interrupt roles-save-sigint-twice 2 'interrupted again, exiting at once|interrupted by SIGINT during the snapshot'
