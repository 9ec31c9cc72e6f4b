# Sanitizer builds only: guest runs without the sandbox so LeakSanitizer can check for leaks.
if [ "${SAN:-0}" != 1 ]; then
	skip leak-check "not a sanitizer build (make test SAN=1)"
else
	L="env ASAN_OPTIONS=detect_leaks=1:exitcode=99 $MINIVMM --no-sandbox"
	expect leaks-hello 0 '' '' -- $L --mem 64M -o "$OUT/leak.json" $GUEST -- hello
	expect leaks-crash 4 'guest aborted' '' -- $L --mem 64M $GUEST -- touch 0
	expect leaks-parallel 0 '' '' -- $L --mem 128M --vcpus 2 --eager=populate \
		--trace "$OUT/leak-trace.json" $GUEST -- sweep --max-mib 2 --iterations 1 --parallel
	expect leaks-compare 0 '' '^verdict' -- $L --compare --mem 64M $GUEST -- flat --max-mib 2 --iterations 1
	expect leaks-uffd 0 '' '' -- $L --mem 64M --vcpus 2 --paging uffd --record-touch "$OUT/leak-touch.txt" \
		$GUEST -- flat --max-mib 2 --iterations 1 --parallel
	expect leaks-background 0 '' '' -- $L --mem 64M --eager=background --eager-order frontier \
		--trace "$OUT/leak-bg-trace.json" $GUEST -- flat --max-mib 2 --iterations 1
	expect leaks-usage 2 '' '' -- $L --mem lots $GUEST
fi
