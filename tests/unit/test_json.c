/* Unit tests: the JSON writer escapes and nests correctly. */
#include <math.h>
#include <stdlib.h>

#include "check.h"
#include "report.h"

void test_json_escape(void)
{
	char *out = NULL;
	size_t len = 0;
	struct json j = { .f = open_memstream(&out, &len) };

	json_begin_object(&j, NULL);
	json_string(&j, "s", "a\"b\\c\n\x01");
	json_begin_array(&j, "a");
	json_u64(&j, NULL, 1);
	json_i64(&j, NULL, -2);
	json_double(&j, NULL, 0.5);
	json_double(&j, NULL, 1.0 / 0.0);
	json_end_array(&j);
	json_begin_array(&j, "empty");
	json_end_array(&j);
	json_bool(&j, "t", 1);
	json_end_object(&j);
	fclose(j.f);
	CHECK_STR_CONTAINS(out, "\"s\": \"a\\\"b\\\\c\\n\\u0001\"");
	CHECK_STR_CONTAINS(out, "1,\n    -2,\n    0.5,\n    null\n  ]");
	CHECK_STR_CONTAINS(out, "\"empty\": []");
	CHECK_STR_CONTAINS(out, "\"t\": true\n}\n");
	free(out);
}

/* A flat object is one line, whatever it nests; the document around it stays indented. */
void test_json_flat(void)
{
	char *out = NULL;
	size_t len = 0;
	struct json j = { .f = open_memstream(&out, &len) };

	json_begin_object(&j, NULL);
	json_begin_array(&j, "recs");
	for (int i = 0; i < 2; i++) {
		json_begin_flat_object(&j, NULL);
		json_u64(&j, "i", (uint64_t)i);
		json_begin_object(&j, "kvm");
		json_u64(&j, "exits", 3);
		json_u64(&j, "pf", 4);
		json_end_object(&j);
		json_end_object(&j);
	}
	json_end_array(&j);
	json_bool(&j, "after", 0);
	json_end_object(&j);
	fclose(j.f);
	CHECK_STR_CONTAINS(
		out, "\"recs\": [\n    {\"i\": 0, \"kvm\": {\"exits\": 3, \"pf\": 4}},\n"
		     "    {\"i\": 1, \"kvm\": {\"exits\": 3, \"pf\": 4}}\n  ],\n");
	CHECK_STR_CONTAINS(out, "\n  \"after\": false\n}\n");
	free(out);
}

/*
 * Every string written is valid UTF-8: each maximal invalid part becomes
 * U+FFFD (a stray byte, a cut sequence, an overlong form, a surrogate, past
 * U+10FFFF); valid multi-byte text passes as it is; json_bytes adds the
 * bytes in hex only when they were not UTF-8 (issue 20).
 */
void test_json_utf8(void)
{
	char *out = NULL;
	size_t len = 0;
	struct json j = { .f = open_memstream(&out, &len) };
	char *args[] = { "ok", "caf\xe2\x82", "\xff" };

	json_begin_object(&j, NULL);
	json_string(&j, "a", "x\xffy");
	json_string(&j, "b", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
	json_string(&j, "c", "\xe2\x82");
	json_string(&j, "d", "\xc0\xaf|\xed\xa0\x80|\xf4\x90\x80\x80|\xe2\x82z");
	json_bytes(&j, "p", "g\xff.bin");
	json_bytes(&j, "q", "plain");
	json_bytes_array(&j, "args", args, 3);
	json_end_object(&j);
	fclose(j.f);
	CHECK_STR_CONTAINS(out, "\"a\": \"x\\ufffdy\"");
	CHECK_STR_CONTAINS(out, "\"b\": \"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"");
	CHECK_STR_CONTAINS(out, "\"c\": \"\\ufffd\"");
	CHECK_STR_CONTAINS(out, "\"d\": \"\\ufffd\\ufffd|\\ufffd\\ufffd\\ufffd|"
				"\\ufffd\\ufffd\\ufffd\\ufffd|\\ufffdz\"");
	CHECK_STR_CONTAINS(out,
			   "\"p\": \"g\\ufffd.bin\",\n  \"p_hex\": \"67ff2e62696e\"");
	CHECK(!strstr(out, "q_hex"));
	CHECK_STR_CONTAINS(
		out,
		"\"args_hex\": [\n    \"6f6b\",\n    \"636166e282\",\n    \"ff\"\n  ]");
	CHECK(json_utf8_valid("caf\xc3\xa9") && !json_utf8_valid("caf\xc3"));
	free(out);
}

/* ns from a printed time in ms ("1763.803690"): the digits as written, no double in between. */
static int64_t printed_ns(const char *out, const char *key, unsigned nth)
{
	char pat[64];
	const char *p = out;
	long long whole;
	char frac[16] = "";
	int64_t ns;

	snprintf(pat, sizeof(pat), "\"%s\": ", key);
	for (unsigned i = 0; p && i <= nth; i++)
		if ((p = strstr(p, pat)))
			p += strlen(pat);
	if (!p || sscanf(p, "%lld.%15[0-9]", &whole, frac) != 2 || strlen(frac) != 6)
		return INT64_MIN;
	ns = whole * 1000000;
	for (int k = 0, m = 100000; k < 6; k++, m /= 10)
		ns += (frac[k] - '0') * m;
	return ns;
}

/*
 * Times are whole ns written exactly: a phase's end - start is its dur and
 * the summary the difference of phase ends, in the printed digits, for a run
 * longer than a second on a clock far from zero (%.9g broke both by 8e-6 ms).
 */
void test_json_times(void)
{
	static const struct {
		enum phase p;
		double dt; /* s after exec */
		int guest;
	} marks[] = {
		{ PHASE_IMAGE_READ, 0.053383674, 0 },
		{ PHASE_KVM_OPEN, 0.054082808, 0 },
		{ PHASE_VM_CREATED, 0.056435521, 0 },
		{ PHASE_RAM_MAPPED, 0.061662845, 0 },
		{ PHASE_VCPUS_CREATED, 0.070212548, 0 },
		{ PHASE_GUEST_LOADED, 0.077909958, 0 },
		{ PHASE_GUEST_ENTRY, 0.087936165, 0 },
		{ PHASE_FIRMWARE_READY, 0.0993342398, 1 },
		{ PHASE_WORKLOAD_START, 0.1017472573, 1 },
		{ PHASE_FIRST_USEFUL_WORK, 1.7638036917, 1 },
		{ PHASE_WORKLOAD_END, 1.8038499812, 1 },
		{ PHASE_VM_EXIT, 1.812949537, 0 },
	};
	const double exec = 2600000.123456789; /* a month of uptime */
	struct timeline *tl = timeline_create();
	struct records *rec = records_create(1);
	struct vm_config cfg = { 0 };
	struct run_view v = { .cfg = &cfg };
	struct tl_summary s;
	char *out = NULL;
	size_t len = 0;
	struct json j;
	int64_t end[ARRAY_SIZE(marks)];

	CHECK(tl && rec);
	if (!tl || !rec)
		return;
	v.tl = tl;
	v.rec = rec;
	timeline_mark_at(tl, PHASE_EXEC, exec, 0);
	for (unsigned i = 0; i < ARRAY_SIZE(marks); i++)
		timeline_mark_at(tl, marks[i].p, exec + marks[i].dt, marks[i].guest);
	run_summary(&v, &s);
	j = (struct json){ .f = open_memstream(&out, &len) };
	json_begin_object(&j, NULL);
	timeline_write_json(tl, &s, &j);
	json_ns(&j, "neg", -1500, NSEC_PER_MSEC);
	json_ns(&j, "s", 1500000000, NSEC_PER_SEC);
	json_ns(&j, "us", 1234567, NSEC_PER_USEC);
	json_ms(&j, "unmeasured", -1);
	json_seconds(&j, "nan", 0.0 / 0.0);
	json_ms_signed(&j, "signed", -2.5);
	json_end_object(&j);
	fclose(j.f);
	for (unsigned i = 0; i < ARRAY_SIZE(marks); i++) {
		int64_t st = printed_ns(out, "start_ms", i),
			du = printed_ns(out, "dur_ms", i);

		end[i] = printed_ns(out, "end_ms", i);
		CHECK(st != INT64_MIN && end[i] != INT64_MIN && du != INT64_MIN);
		CHECK_EQ(end[i] - st, du);
		CHECK_EQ(st, i ? end[i - 1] : 0);
		/* What was marked, to the ns (a double of 2.6e6 s holds it to 0.47 ns). */
		CHECK(llabs(end[i] - llround(marks[i].dt * 1e9)) <= 1);
	}
	CHECK_EQ(printed_ns(out, "setup_ms", 0), end[6]);
	CHECK_EQ(printed_ns(out, "first_useful_work_ms", 0), end[9]);
	CHECK_EQ(printed_ns(out, "first_pass_ms", 0), end[9] - end[8]);
	CHECK_EQ(printed_ns(out, "total_ms", 0), end[11]);
	CHECK_STR_CONTAINS(out, "\"end_ms\": 1763.80369"); /* six decimals */
	CHECK_STR_CONTAINS(out, "\"eager_ms\": null");
	CHECK_STR_CONTAINS(out, "\"neg\": -0.001500,");
	CHECK_STR_CONTAINS(out, "\"s\": 1.500000000,");
	CHECK_STR_CONTAINS(out, "\"us\": 1234.567,");
	CHECK_STR_CONTAINS(out, "\"unmeasured\": null,");
	CHECK_STR_CONTAINS(out, "\"nan\": null,");
	CHECK_STR_CONTAINS(out, "\"signed\": -2.500000\n");
	free(out);
	records_free(rec);
	timeline_free(tl);
}
