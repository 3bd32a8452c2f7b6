/* test_weave_csharp.c - unit tests for weave_csharp.c (the `lock` keyword in C# source text). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "weave_pass.h"

/* The last lock in text between (1,1) and (to_line, to_column): "line:column", or "none". */
static const char *find(const char *text, uint32_t to_line, uint32_t to_column)
{
	static char buf[32];
	uint32_t line = 0, column = 0;

	if (!weave_csharp_last_lock((const uint8_t *)text, strlen(text), 1, 1, to_line, to_column, &line, &column))
		return "none";
	snprintf(buf, sizeof buf, "%u:%u", line, column);
	return buf;
}

static void test_statement(void **state)
{
	(void)state;
	assert_string_equal(find("x++;\n    lock (g)\n    {\n", 3, 5), "2:5");
	assert_string_equal(find("lock(g) {", 1, 9), "1:1");
	/* the last of two, and none past the end bound */
	assert_string_equal(find("lock (a) { } lock (b) {", 1, 23), "1:14");
	assert_string_equal(find("lock (a) { } lock (b) {", 1, 13), "1:1");
	assert_string_equal(find("lock /* why */ (g)", 2, 1), "1:1");
	/* "\r\n" and a lone "\r" end lines */
	assert_string_equal(find("a;\r\nb;\rlock (g)", 4, 1), "3:1");
	/* columns count characters, not bytes */
	assert_string_equal(find("s = \"\xc3\xa9\"; lock (g)", 2, 1), "1:10");
}

static void test_not_a_lock(void **state)
{
	(void)state;
	assert_string_equal(find("// lock (g)\n", 3, 1), "none");
	assert_string_equal(find("/* lock (g) */", 2, 1), "none");
	assert_string_equal(find("s = \"lock (g)\";", 2, 1), "none");
	assert_string_equal(find("s = @\"a\"\" lock (g)\";", 2, 1), "none");
	assert_string_equal(find("s = \"\"\" lock (g) \" \"\"\";", 2, 1), "none");
	assert_string_equal(find("s = \"\\\" lock (g)\";", 2, 1), "none");
	assert_string_equal(find("c = '\\''; s = \"\"; x.lock (g);", 2, 1), "none");
	assert_string_equal(find("@lock (g); locked (g); lock = 1; unlock (g);", 2, 1), "none");
	/* a line comment ends at the line's end; a string left open too */
	assert_string_equal(find("// x\nlock (g)", 3, 1), "2:1");
	assert_string_equal(find("s = \"open\nlock (g)", 3, 1), "2:1");
}

/* The scan starts at (from_line, from_column), in code. */
static void test_from(void **state)
{
	const char *text = "lock (a) {}\n x; lock (b)";
	uint32_t line = 0, column = 0;

	(void)state;
	assert_int_equal(weave_csharp_last_lock((const uint8_t *)text, strlen(text), 2, 2, 3, 1, &line, &column), 1);
	assert_int_equal(line, 2);
	assert_int_equal(column, 5);
	assert_int_equal(weave_csharp_last_lock((const uint8_t *)text, strlen(text), 1, 2, 2, 1, &line, &column), 0);
	assert_int_equal(weave_csharp_last_lock((const uint8_t *)"", 0, 1, 1, 9, 9, &line, &column), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_statement),
		cmocka_unit_test(test_not_a_lock),
		cmocka_unit_test(test_from),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
