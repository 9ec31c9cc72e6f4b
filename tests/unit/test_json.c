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
