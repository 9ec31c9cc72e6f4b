# bench/stats.awk: medians and spread of grouped samples, the one place bench/ computes them.
#   awk -f bench/stats.awk [-v keys=K] FILE...
# Input: tab-separated lines "KEY1 ... KEYk VALUE"; k is -v keys (default: every
# field but the last). Values that are not numbers ("-", empty) are skipped.
# Output, one line per group in the order groups first appear:
#   KEY1 ... KEYk  n  median  q1  q3  min  max  samples (comma-separated, input order)
# Quartiles interpolate between order statistics (R's type 7, numpy's default):
# q(p) = x[1 + (n - 1) p] of the sorted samples, so the median of an even count
# is the mean of the middle two and the IQR of two samples spans 1/2 of their range.
BEGIN {
	FS = OFS = "\t"
	OFMT = CONVFMT = "%.9g"
}

{
	k = keys ? keys : NF - 1
	key = $1
	for (i = 2; i <= k; i++)
		key = key OFS $i
	v = $(k + 1)
	if (v !~ /^-?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?$/)
		next
	if (!(key in n)) {
		order[++groups] = key
		list[key] = v
	} else {
		list[key] = list[key] "," v
	}
	x[key, ++n[key]] = v + 0
}

function quantile(p, m,    pos, lo) {
	pos = 1 + (m - 1) * p
	lo = int(pos)
	return lo >= m ? s[m] : s[lo] + (pos - lo) * (s[lo + 1] - s[lo])
}

END {
	for (g = 1; g <= groups; g++) {
		key = order[g]
		m = n[key]
		for (i = 1; i <= m; i++) {
			v = x[key, i]
			for (j = i - 1; j >= 1 && s[j] > v; j--)
				s[j + 1] = s[j]
			s[j + 1] = v
		}
		print key, m, quantile(0.5, m), quantile(0.25, m), quantile(0.75, m), s[1], s[m], list[key]
	}
}
