# Tier "static": rules the structure keeps, checked without running a guest
# (sourced by tests/run). Each build check first compiles the untouched copy,
# so a check that cannot fail is itself a failure.
S=$OUT/static
rm -rf "$S"
mkdir -p "$S"
# The build's own flags, from one make (make print-VAR): its warnings (WARN)
# and each room's include paths (INC_ROOM). -j1: the lines in goal order.
declare -A INC
{
	read -r WARN_FLAGS
	read -r 'INC[mm_base]'
	read -r 'INC[mm_backing]'
	read -r 'INC[mm_file]'
	read -r 'INC[mm_ram]'
	read -r 'INC[mm_paging]'
	read -r 'INC[mm]'
	read -r 'INC[devices]'
	read -r 'INC[vmm_machine]'
	read -r 'INC[vmm_measure]'
	read -r 'INC[vmm_report]'
	read -r 'INC[vmm_cli]'
	read -r 'INC[vmm_run]'
	read -r 'INC[vmm]'
	read -r 'INC[firmware]'
} < <(make -s --no-print-directory -j1 print-WARN print-INC_mm_base print-INC_mm_backing print-INC_mm_file \
	print-INC_mm_ram print-INC_mm_paging print-INC_mm print-INC_devices print-INC_vmm_machine \
	print-INC_vmm_measure print-INC_vmm_report print-INC_vmm_cli print-INC_vmm_run print-INC_vmm \
	print-INC_firmware)
[ -n "${INC[firmware]}" ] || echo "FAIL static-setup: make print-WARN print-INC_* did not print fifteen lines"
CFLAGS_HOST="-std=gnu11 -D_GNU_SOURCE $WARN_FLAGS"

# A copy of the rooms to break on purpose.
fresh() {
	rm -rf "$S/tree"
	mkdir -p "$S/tree"
	cp -r include mm devices vmm firmware guest "$S/tree/"
}
# compiles NAME ROOM FILE: FILE (relative to the copy) builds with ROOM's include paths.
compiles() {
	(cd "$S/tree" && gcc $CFLAGS_HOST ${INC[$2]} -fsyntax-only "$3") >"$S/$1.log" 2>&1
}
# refused NAME ROOM FILE ERE: it does not build, and the compiler says why (ERE).
refused() {
	if compiles "$1" "$2" "$3"; then
		fail "$1" "still builds after the change"
	elif ! grep -Eq -- "$4" "$S/$1.log"; then
		fail "$1" "fails, but not with /$4/: $(head -c 400 "$S/$1.log")"
	else
		pass "$1"
	fi
}
# edit FILE PERL-SUBSTITUTION: change the copy; the substitution must match.
edit() {
	local before
	before=$(md5sum <"$S/tree/$1")
	perl -0pi -e "$2" "$S/tree/$1"
	[ "$(md5sum <"$S/tree/$1")" != "$before" ] || { echo "FAIL static-setup: '$2' matched nothing in $1"; return 1; }
}
# caught NAME TEXT: tests/static/layering fails on the broken copy and says TEXT.
caught() {
	if ./tests/static/layering "$S/tree" >"$S/$1.log" 2>&1; then
		fail "$1" "tests/static/layering passes it (expected: $2)"
	elif grep -qF -- "$2" "$S/$1.log"; then
		pass "$1"
	else
		fail "$1" "fails, but does not say '$2': $(cat "$S/$1.log")"
	fi
}

# --- layering -------------------------------------------------------------
if ./tests/static/layering >"$S/layering.log" 2>&1; then pass layering; else fail layering "$(cat "$S/layering.log")"; fi
fresh
edit devices/bus.c 's/#include "devices.h"\n/#include "devices.h"\n#include "vmm.h"\n/' &&
	caught layering-catches-devices-to-vmm 'devices/bus.c includes "vmm.h"'
refused layering-build-refuses-devices-to-vmm devices devices/bus.c 'vmm.h: No such file'
fresh
edit mm/ram/ram.c 's/#include "ram.h"\n/#include "ram.h"\n#include "devices.h"\n/' &&
	refused layering-build-refuses-mm-to-devices mm_ram mm/ram/ram.c 'devices.h: No such file'
# Inside mm/: the backings may not use the file room, the file room not guest RAM's,
# the base none of them; and the pager's private header stays its own.
fresh
edit mm/backing/backend.c 's/#include "backing.h"\n/#include "backing.h"\n#include "file.h"\n/' &&
	caught layering-catches-backing-to-file 'mm/backing/backend.c includes "file.h"'
refused layering-build-refuses-backing-to-file mm_backing mm/backing/backend.c 'file.h: No such file'
fresh
edit mm/file/file.c 's/#include "file.h"\n/#include "file.h"\n#include "ram.h"\n/' &&
	refused layering-build-refuses-file-to-ram mm_file mm/file/file.c 'ram.h: No such file'
fresh
edit mm/text.c 's/#include "mm.h"\n/#include "mm.h"\n#include "backing.h"\n/' &&
	refused layering-build-refuses-base-to-backing mm_base mm/text.c 'backing.h: No such file'
fresh
edit vmm/machine/paging.c 's/#include "internal.h"\n/#include "internal.h"\n#include "uffd_internal.h"\n/' &&
	caught layering-catches-private-pager-header 'vmm/machine/paging.c includes "uffd_internal.h", which is private to mm/paging'
fresh
edit firmware/vm.c 's/#include "kernel.h"\n/#include "kernel.h"\n#include "guest.h"\n/' &&
	refused layering-build-refuses-firmware-to-guest firmware firmware/vm.c 'guest.h: No such file'
# The Linux guest's programs (guest/linux/) are Linux programs: the ABI, never the firmware.
fresh
edit guest/linux/mvm.c 's/#include "mvm.h"\n/#include "mvm.h"\n#include "firmware.h"\n/' &&
	caught layering-catches-linux-guest-to-firmware 'guest/linux/mvm.c includes "firmware.h"'
# Inside vmm/: the machine may not use the measurement, nor the measurement the report,
# nor the report the command line; and the machine's private header stays its own.
fresh
edit vmm/machine/vm.c 's/#include "internal.h"\n/#include "internal.h"\n#include "measure.h"\n/' &&
	caught layering-catches-machine-to-measure 'vmm/machine/vm.c includes "measure.h"'
refused layering-build-refuses-machine-to-measure vmm_machine vmm/machine/vm.c 'measure.h: No such file'
fresh
edit vmm/machine/vm.c 's/#include "internal.h"\n/#include "internal.h"\n#include "boot.h"\n/' &&
	refused layering-build-refuses-machine-to-boot vmm_machine vmm/machine/vm.c 'boot.h: No such file'
fresh
edit vmm/measure/timeline.c 's/#include "measure.h"\n/#include "measure.h"\n#include "report.h"\n/' &&
	refused layering-build-refuses-measure-to-report vmm_measure vmm/measure/timeline.c 'report.h: No such file'
fresh
edit vmm/report/json.c 's/#include "report.h"\n/#include "report.h"\n#include "cli.h"\n/' &&
	refused layering-build-refuses-report-to-cli vmm_report vmm/report/json.c 'cli.h: No such file'
# The application's rooms one way: main -> experiment -> run -> cli.
fresh
edit vmm/cli/modes.c 's/#include "cli.h"\n/#include "cli.h"\n#include "run.h"\n/' &&
	caught layering-catches-cli-to-run 'vmm/cli/modes.c includes "run.h"' &&
	refused layering-build-refuses-cli-to-run vmm_cli vmm/cli/modes.c 'run.h: No such file'
fresh
edit vmm/run/output.c 's/#include "run.h"\n/#include "run.h"\n#include "experiment.h"\n/' &&
	refused layering-build-refuses-run-to-experiment vmm_run vmm/run/output.c 'experiment.h: No such file'
fresh
edit vmm/run/run.c 's/#include "run_internal.h"\n/#include "run_internal.h"\n#include "internal.h"\n/' &&
	caught layering-catches-private-header 'vmm/run/run.c includes "internal.h", which is private to vmm/machine'
# struct run (vmm/run/run_internal.h) is vmm/run/run*.c's alone, even inside vmm/run.
fresh
edit vmm/run/output.c 's/#include "run.h"\n/#include "run.h"\n#include "run_internal.h"\n/' &&
	caught layering-catches-run-internal 'vmm/run/output.c includes "run_internal.h", which is private to vmm/run/run*.c'
fresh
edit vmm/run/run.c 's/#include "run_internal.h"\n/#include "run_internal.h"\n#include "options_internal.h"\n/' &&
	caught layering-catches-options-internal 'vmm/run/run.c includes "options_internal.h", which is private to vmm/cli/options*.c'

# --- calls: no circle, no arrow upwards (tests/static/calls, on the built objects) ---
if ./tests/static/calls >"$S/calls.log" 2>&1; then pass calls; else fail calls "$(cat "$S/calls.log")"; fi
# The check itself, on a copy of the build with one object rebuilt broken. A
# prototype of its own gets past the include rules; the call check sees the call.
# calls_catch NAME ROOM FILE PERL ERE...: edit FILE in the copy, rebuild its object with
# ROOM's include paths, and the check must fail with a line matching each ERE.
calls_catch() {
	local obj
	obj=$(cd "$S" && pwd)/calls-obj
	rm -rf "$obj"
	cp -r build/host "$obj"
	fresh
	edit "$3" "$4" || return
	if ! (cd "$S/tree" && gcc $CFLAGS_HOST ${INC[$2]} -c -o "$obj/${3%.c}.o" "$3") >"$S/$1.log" 2>&1; then
		fail "$1" "the broken copy does not build: $(head -c 400 "$S/$1.log")"
	elif ./tests/static/calls --src "$S/tree" "$obj" >"$S/$1.log" 2>&1; then
		fail "$1" "tests/static/calls passes it: $(cat "$S/$1.log")"
	else
		local name=$1 ere
		shift 4
		for ere in "$@"; do
			grep -Eq -- "$ere" "$S/$name.log" && continue
			fail "$name" "fails, but not with /$ere/: $(head -c 600 "$S/$name.log")"
			return
		done
		pass "$name"
	fi
}
# The circle this split broke: the file room's failure path calling back into guest RAM's.
calls_catch calls-catches-file-to-ram mm_file mm/file/file.c \
	's/(#include "file.h"\n)/$1void mm_ram_free(struct guest_ram *ram);\n/; s/\tfree\(f\);\n/\tmm_ram_free(ram);\n/' \
	'a call circle of 2 files: mm/file/file -> mm/ram/ram \(mm_ram_free\)' \
	'calls: mm/file/file \(mm/file\) calls mm/ram/ram \(mm/ram\): mm_ram_free; mm/file may use only: include mm mm/backing'
# Inside one room, where only the circle rule applies: the handlers calling the pager back.
calls_catch calls-catches-circle-in-a-room mm_paging mm/paging/uffd_handler.c \
	's/(\tt->failed = 1;\n)/$1\tuffd_stop(NULL);\n/' \
	'a call circle of 2 files: mm/paging/uffd -> mm/paging/uffd_handler \(uffd_handler\); mm/paging/uffd_handler -> mm/paging/uffd \(uffd_stop\)'

# --- tables that cannot drift ---------------------------------------------
fresh
if compiles control-hypercall devices devices/hypercall.c && compiles control-backend mm_backing mm/backing/backend.c &&
	compiles control-eager vmm_machine vmm/machine/eager.c &&
	compiles control-end vmm_machine vmm/machine/end.c; then
	pass build-checks-control
else
	fail build-checks-control "the untouched copy does not build: $(cat "$S"/control-*.log | head -c 600)"
fi
# A new hypercall in the list without its check and handler.
edit include/minivmm_abi.h 's/#define MVM_HC_COUNT\s+9/#define MVM_HC_NEW 9\n#define MVM_HC_COUNT 10/; s/(X\(snapshot, MVM_HC_SNAPSHOT, struct mvm_hc_snapshot\))/$1 \\\n\tX(new, MVM_HC_NEW, struct mvm_hc_hdr)/' &&
	refused hypercall-without-handler devices devices/hypercall.c "check_new|hc_new"
# A new number left out of the list.
fresh
edit include/minivmm_abi.h 's/#define MVM_HC_COUNT\s+9/#define MVM_HC_NEW 9\n#define MVM_HC_COUNT 10/' &&
	refused hypercall-not-in-list devices devices/hypercall.c "every hypercall number"
# An argument struct larger than what the VMM copies.
fresh
edit include/minivmm_abi.h 's/(struct mvm_hc_mark \{\n\tstruct mvm_hc_hdr hdr;)/$1\n\tchar grown[600];/' &&
	refused hypercall-struct-too-big devices devices/hypercall.c "larger than MVM_HC_ARGS_MAX"
# A backing row deleted (its enum value stays).
fresh
edit mm/backing/backend.c 's/\t\{ MM_MEMFD,[^}]*\},\n//s' &&
	refused backing-row-deleted mm_backing mm/backing/backend.c "one row per enum mm_backing"
# An eager strategy row deleted.
fresh
edit vmm/machine/eager.c 's/\t\{ EAGER_TOUCH,.*?\} \},\n//s' &&
	refused strategy-row-deleted vmm_machine vmm/machine/eager.c "one row per enum eager_strategy"
# A run-end row deleted.
fresh
edit vmm/machine/end.c 's/\t\{ END_USAGE,[^}]*\},\n//s' &&
	refused run-end-row-deleted vmm_machine vmm/machine/end.c "one row per enum run_end"
# A phase row deleted.
fresh
edit vmm/measure/timeline.c 's/\t\{ PHASE_WORKLOAD_END,[^}]*\},\n//s' &&
	refused phase-row-deleted vmm_measure vmm/measure/timeline.c "one row per enum phase"

# --- docs that agree with the program --------------------------------------
$MINIVMM --help >"$S/help.txt"
sed -n '/<!-- BEGIN minivmm --help -->/,/<!-- END minivmm --help -->/p' README.md | sed '1,2d;$d' | sed '$d' >"$S/readme-help.txt"
if diff -u "$S/help.txt" "$S/readme-help.txt" >"$S/readme-help.diff"; then
	pass docs-readme-is-help
else
	fail docs-readme-is-help "README's --help block differs from ./minivmm --help (paste it again): $(head -c 600 "$S/readme-help.diff")"
fi
missing=""
for o in $(grep -oE -- '--[a-z][a-z-]+' "$S/help.txt" | sort -u); do
	grep -qF -- "$(echo "$o" | sed 's/-/\\-/g')" docs/minivmm.1 || missing="$missing $o"
done
# The kinds --backing and --eager take: the help's indented "name  text" lines.
for k in $(sed -n '/--eager\[=HOW\]/,/--trace/p' "$S/help.txt" | sed -n 's/^ \{24\}\([a-z0-9]*\)  .*/\1/p'); do
	grep -q "fB$k\\\\fR" docs/minivmm.1 || missing="$missing $k"
done
for st in $(sed -n '/^Exit status/,$p' "$S/help.txt" | awk '$1 ~ /^[0-9]+$/ { print $1 }'); do
	grep -q "^\.B $st\$" docs/minivmm.1 || missing="$missing status-$st"
done
for r in $(sed -n '/^Exit status/,$p' "$S/help.txt" | tr '\n' ' ' | grep -oE '\(reasons?: [a-z, -]+\)' | sed 's/^(reasons*: //; s/)$//' | tr -d ',' | tr -s ' ' '\n' | sort -u); do
	grep -q -- "$r" docs/minivmm.1 || missing="$missing reason-$r"
done
if [ -z "$missing" ]; then pass docs-man-page-agrees; else fail docs-man-page-agrees "docs/minivmm.1 lacks:$missing"; fi

# The man page's EXAMPLES run from the top directory: every image they name is here.
missing=$(sed -n '/^\.SH EXAMPLES/,/^\.SH [A-Z]/p' docs/minivmm.1 | sed -n '/^\.nf/,/^\.fi/p' | grep -o '[^ ]*\.bin' | sort -u |
	while read -r f; do [ -f "$f" ] || echo "$f"; done)
[ -z "$missing" ] && pass docs-man-examples-images ||
	fail docs-man-examples-images "docs/minivmm.1's EXAMPLES name images that are not here: $missing"

# The legend: every column of every table, in the program's words
# (vmm/report/legend.c), also in docs/guide.md ("- `NAME`: MEANING") and in the man
# page's LEGEND (".B NAME" then the meaning, roff-escaped). legend_agrees
# LEGEND.c prints what the docs lack or say differently.
legend_agrees() {
	perl -0e '
		my ($c, $guide, $man) = map { local $/; open my $f, "<", $_ or die "$_: $!"; scalar <$f> } @ARGV;
		my @rows;
		while ($c =~ /\{\s*LEGEND_\w+,\s*"((?:[^"\\]|\\.)*)",\s*((?:"(?:[^"\\]|\\.)*"\s*)+)\}/g) {
			my ($n, $raw) = ("$1", "$2");
			push @rows, [$n, join "", $raw =~ /"((?:[^"\\]|\\.)*)"/g];
		}
		die "no legend rows found in $ARGV[0]\n" unless @rows;
		(my $m = $man) =~ s/\\-/-/g;
		$m =~ s/\\\\/\\/g;
		my %known = map { $_->[0] => 1 } @rows;
		for (@rows) {
			my ($n, $t) = @$_;
			print "docs/guide.md: \"- `$n`: $t\"\n" unless index($guide, "- `$n`: $t\n") >= 0;
			print "docs/minivmm.1: .B $n / $t\n"
				unless $m =~ /^\.B "?\Q$n\E"?\n\Q$t\E\n/m;
		}
		my ($sec) = $guide =~ /^## Reading the output\n(.*?)^## /ms;
		for ($sec =~ /^- `([^`]+)`: /mg) { print "docs/guide.md: a legend row for $_, which vmm/report/legend.c does not have\n" unless $known{$_} }
	' "$1" docs/guide.md docs/minivmm.1
}
if ! bad=$(legend_agrees vmm/report/legend.c 2>&1); then
	fail docs-legend-agrees "$bad"
elif [ -n "$bad" ]; then
	fail docs-legend-agrees "say what vmm/report/legend.c says (./minivmm --explain prints it):
$bad"
else
	pass docs-legend-agrees
fi
# The check itself: a column added to the program and to neither doc is caught.
fresh
edit vmm/report/legend.c 's/(\{ LEGEND_TIMELINE, "total",)/{ LEGEND_TIMELINE, "new column", "a meaning" },\n\t$1/' &&
	if legend_agrees "$S/tree/vmm/report/legend.c" 2>&1 | grep -q 'guide.md: "- `new column`: a meaning"'; then
		pass docs-legend-check-catches-a-new-column
	else
		fail docs-legend-check-catches-a-new-column "a new legend row went unnoticed"
	fi

# The docs stand on their own: no pointer to files outside the repository.
if grep -rn '\.\./shared\|shared/docs/' README.md docs bench/README.md >"$S/outside.log" 2>/dev/null; then
	fail docs-inside-the-repo "$(head -3 "$S/outside.log")"
else
	pass docs-inside-the-repo
fi

# docs/sandbox-roles.md is what sandbox.c's allowlists make (scripts/sandbox-table).
scripts/sandbox-table --check 2>"$S/sandbox-table.err" && pass static-sandbox-table ||
	fail static-sandbox-table "$(cat "$S/sandbox-table.err")"
