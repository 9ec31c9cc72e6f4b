# Tier "clones" (issue 39): one snapshot restored by N processes at once
# (--restore DIR --clones N): every clone finishes with flat's checksum
# matching, the parent reports each one's first useful work and restore
# latency, their p50/p95/max, and the host memory they hold together
# (summed Pss while every clone holds its RAM, the memory file's page
# cache); with --restore-mode uffd one handler process (the parent) serves
# every clone's faults, or each clone its own, side by side. Bad input: N 0,
# more clones than memory holds (refused before any starts), a clone killed
# mid-restore (the others finish; the snapshot is unchanged), SIGTERM to the
# parent (every clone stopped, exit 130, its file written). A guest reading after the
# snapshot shares the file's pages among private clones.
CL=$OUT/clones
rm -rf "$CL"
mkdir -p "$CL"
if [ -d /dev/shm ] && CLD=$(mktemp -d /dev/shm/minivmm-clones-XXXXXX 2>/dev/null); then :; else CLD=$CL/snap; mkdir -p "$CLD"; fi
N=4

expect clones-save 0 '' '' -- \
	$MINIVMM -q --mem 64M --snapshot "$CLD/S" "$GUEST" -- flat --max-mib 8 --iterations 3 --snapshot-after 1
sha256sum "$CLD"/S/* >"$CL/before.sum"

# A burst that finished: every clone ran its guest to the end, each one's results file and
# log beside the parent's (FILE.clones/), flat's checksum matched in each, the tail ordered.
clones_ok() {
	local name=$1 mode=$2
	jq_true "$name-results" "$CL/$name.json" \
		'.clones.n == '$N' and .clones.finished == '$N' and .clones.restore_mode == "'"$mode"'" and .exit.status == 0
		 and ([.clones.per_clone[] | select(.status == 0 and .first_useful_work_ms > 0 and .restore_ms > 0)] | length) == '$N'
		 and (.clones.first_useful_work_ms | .p50 <= .p95 and .p95 <= .max)
		 and (.clones.restore_ms | .p50 <= .p95 and .p95 <= .max)
		 and .clones.memory.pss_bytes >= .clones.working_set_bytes
		 and .clones.memory.pss_bytes <= '$N' * (.clones.ram_bytes + 64 * 1048576)
		 and .clones.memory.file_cache_bytes > 0'
	local k ok=0
	for k in $(seq 0 $((N - 1))); do
		grep -qE '^flat: memory checksum (0x[0-9a-f]+) before the snapshot, \1 after the restore: match$' \
			"$CL/$name.clones/clone-$k.log" && [ -s "$CL/$name.clones/clone-$k.json" ] && ok=$((ok + 1))
	done
	[ $ok = $N ] && pass "$name-each-checksum" || fail "$name-each-checksum" "$ok of $N clones' logs say match"
	# The parent says what the clones' KVM was: an emulated host's times are labelled so.
	local emu
	emu=$(jq -r '.platform.emulated' "$CL/$name.clones/clone-0.json" 2>/dev/null)
	if [ "$(jq -r .clones.emulated "$CL/$name.json")" = "$emu" ] &&
		{ [ "$emu" != true ] || grep -q '^EMULATED host (QEMU TCG)' "$OUT/$name.out"; }; then
		pass "$name-emulated-label"
	else
		fail "$name-emulated-label" "clone 0 says emulated $emu; the parent: $(jq -c .clones.emulated "$CL/$name.json")"
	fi
	grep -q '^first useful work (exec to the guest.s first pass done), of '$N' clones: p50 ' "$OUT/$name.out" &&
		pass "$name-printed" || fail "$name-printed" "$(head -c 400 "$OUT/$name.out")"
}

# minor needs the memory file on tmpfs or hugetlbfs: the snapshot is on /dev/shm where there is one.
modes="copy private"
[ "$(stat -f -c %T "$CLD")" = tmpfs ] && modes="$modes minor"
for m in $modes; do
	expect clones-$m 0 '' '' -- $MINIVMM --restore "$CLD/S" --restore-mode $m --clones $N -o "$CL/clones-$m.json"
	clones_ok clones-$m $m
done
case $modes in *minor*)
	# minor: every clone maps the one tmpfs file; what they share is its page cache.
	jq_true clones-minor-faults "$CL/clones-minor.json" '.clones.handler_faults > 0' ;;
*) skip clones-minor "the snapshot is not on tmpfs here ($(stat -f -c %T "$CLD"))" ;;
esac
# A guest that reads after the snapshot (flat --read-after-snapshot): private clones share
# the file's pages; the writing guest's private clones copy every page they touch. Side by
# side, the readers' summed Pss is smaller by over half of N - 1 working sets (all of
# them: one copy shared), and their anonymous Pss under half the writers' (the issue's
# bound itself is bench/clones', at 256 MiB: here the VMM's own pages, 5 MiB a clone
# under the sanitizers, are a third of the 15 MiB working set).
expect clones-read-save 0 '' '' -- \
	$MINIVMM -q --mem 64M --snapshot "$CLD/R" "$GUEST" -- flat --max-mib 8 --iterations 3 --snapshot-after 1 --read-after-snapshot
expect clones-private-read 0 '' '' -- $MINIVMM --restore "$CLD/R" --restore-mode private --clones $N -o "$CL/clones-private-read.json"
clones_ok clones-private-read private
mem_of() { jq -r "[.clones.memory.pss_bytes, .clones.memory.pss_anon_bytes, .clones.working_set_bytes] | @tsv" "$CL/$1.json" 2>/dev/null; }
read -r rp ra ws <<<"$(mem_of clones-private-read)"
read -r wp wa _ <<<"$(mem_of clones-private)"
if [ -n "$rp" ] && [ -n "$wp" ] && [ $(((wp - rp) * 2)) -gt $(((N - 1) * ws)) ] && [ $((ra * 2)) -lt "$wa" ]; then
	pass clones-private-read-shares
else
	fail clones-private-read-shares "summed Pss reading ${rp:-?} (anonymous ${ra:-?}), writing ${wp:-?} (anonymous ${wa:-?}), working set ${ws:-?}"
fi
jq_true clones-private-writes-copy "$CL/clones-private.json" \
	'.clones.memory.pss_anon_bytes > '$N' * .clones.working_set_bytes / 2'
grep -q '^flat: the passes after the snapshot read their pages (--read-after-snapshot)$' "$CL/clones-private-read.clones/clone-0.log" &&
	pass clones-private-read-said || fail clones-private-read-said "$(grep '^flat:' "$CL/clones-private-read.clones/clone-0.log" | head -3)"
expect clones-read-needs-point 2 'read-after-snapshot needs a snapshot point' '' -- \
	$MINIVMM -q --mem 64M "$GUEST" -- flat --max-mib 2 --iterations 2 --read-after-snapshot
# uffd: the parent's one handler thread serves every clone from one mapping of the file;
# then each clone its own handlers. The same faults either way: every page the guest touches.
for h in shared shared:2 own; do
	t=${h/:/-}
	expect clones-uffd-$t 0 '' '' -- \
		$MINIVMM --restore "$CLD/S" --restore-mode uffd --clones $N --clone-handler $h -o "$CL/clones-uffd-$t.json"
	clones_ok clones-uffd-$t uffd
	jq_true clones-uffd-$t-faults "$CL/clones-uffd-$t.json" \
		'.clones.handler == "'${h%:*}'" and ([.clones.per_clone[].handler_faults] | unique | length) == 1
		 and .clones.per_clone[0].handler_faults > 0 and .clones.handler_faults == '$N' * .clones.per_clone[0].handler_faults
		 and (.clones.handler_threads // 0) == '$(case $h in shared) echo $N ;; shared:2) echo 2 ;; *) echo 0 ;; esac)
done
a=$(jq .clones.handler_faults "$CL/clones-uffd-shared.json" 2>/dev/null) b=$(jq .clones.handler_faults "$CL/clones-uffd-own.json" 2>/dev/null)
[ -n "$a" ] && [ "$a" = "$b" ] && pass clones-uffd-shared-equals-own || fail clones-uffd-shared-equals-own "shared $a, own $b faults"

# Bad input: one message each, before any clone starts.
expect clones-zero 2 "--clones: '0' is not a number from 1 to" '' -- $MINIVMM --restore "$CLD/S" --clones 0
expect clones-no-restore 2 '--clones restores one snapshot in N processes at once: add --restore DIR' '' -- \
	$MINIVMM --clones 2 "$GUEST"
expect clones-compare 2 '--clones is one burst of restores in one mode' '' -- \
	$MINIVMM --restore "$CLD/S" --clones 2 --compare=copy,private
expect clones-handler-alone 2 '--clone-handler is about --clones' '' -- \
	$MINIVMM --restore "$CLD/S" --clone-handler own
expect clones-handler-bad 2 "--clone-handler shared:THREADS: '0' is not a number from 1 to 64" '' -- \
	$MINIVMM --restore "$CLD/S" --clones 2 --clone-handler shared:0
expect clones-too-many 3 '--clones 256: --restore-mode populate holds about [0-9]+ MiB per clone .* at most [0-9]+ clones? fits?; nothing was started' '' -- \
	$MINIVMM --restore "$CLD/S" --restore-mode populate --clones 256 -o "$CL/too-many.json"
[ ! -e "$CL/too-many.clones" ] && [ ! -e "$CL/too-many.json" ] && pass clones-too-many-nothing-ran ||
	fail clones-too-many-nothing-ran "$(ls "$CL")"

# A clone killed mid-restore: the others finish, the parent names it (exit 3), the snapshot is as it was.
timeout -k 5 "$CASE_TIMEOUT" $MINIVMM --restore "$CLD/S" --restore-mode uffd --clones 3 -o "$CL/kill.json" \
	>"$OUT/clones-kill.out" 2>"$OUT/clones-kill.err" &
parent=$!
victim=
for _ in $(seq 1 600); do
	victim=$(pgrep -f -- "-o $CL/kill.clones/clone-1.json" | head -1)
	[ -n "$victim" ] && grep -q . "$CL/kill.clones/clone-1.log" 2>/dev/null && break
	sleep 0.1
done
[ -n "$victim" ] && kill -KILL "$victim"
rc=0
wait $parent || rc=$?
if [ -z "$victim" ]; then
	fail clones-kill "clone 1 never appeared"
elif [ $rc != 3 ] || ! grep -q "clone 1 (pid $victim) killed by signal 9" "$OUT/clones-kill.err"; then
	fail clones-kill "exit $rc: $(head -c 400 "$OUT/clones-kill.err")"
else
	pass clones-kill
fi
jq_true clones-kill-others "$CL/kill.json" \
	'.clones.finished == 2 and .exit.status == 3 and .clones.per_clone[1].status == 137
	 and ([.clones.per_clone[0,2] | select(.status == 0)] | length) == 2'
sha256sum "$CLD"/S/* | cmp -s - "$CL/before.sum" && pass clones-snapshot-unchanged ||
	fail clones-snapshot-unchanged "the snapshot's files changed"
# SIGTERM to the parent mid-burst: every clone is stopped, the parent ends 130 with its file written.
timeout -k 5 "$CASE_TIMEOUT" $MINIVMM --restore "$CLD/S" --restore-mode uffd --clones 2 -o "$CL/term.json" \
	>"$OUT/clones-term.out" 2>"$OUT/clones-term.err" &
parent=$!
for _ in $(seq 1 600); do
	[ -n "$(pgrep -f -- "-o $CL/term.clones/clone-1.json")" ] && grep -q . "$CL/term.clones/clone-1.log" 2>/dev/null && break
	sleep 0.1
done
kill -TERM $parent
rc=0
wait $parent || rc=$?
if [ $rc = 130 ] && grep -q 'interrupted (Terminated): every clone was stopped' "$OUT/clones-term.err"; then
	pass clones-term
else
	fail clones-term "exit $rc: $(head -c 400 "$OUT/clones-term.err")"
fi
jq_true clones-term-results "$CL/term.json" '.exit.status == 130 and .clones.n == 2'
[ -z "$(pgrep -f -- "-o $CL/term.clones/clone-")" ] && pass clones-term-none-left ||
	fail clones-term-none-left "$(pgrep -fa -- "-o $CL/term.clones/clone-")"
rm -rf "$CLD"
