/* Unit tests: the JSON writer escapes and nests correctly. */
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
