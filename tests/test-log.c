/* Unit tests of what the programs print of peers' and apps' text. */
#include <stdint.h>

#include "check.h"
#include "log.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static const char *escaped(const char *text, size_t len, size_t size)
{
	static char out[256];
	log_escape(out, size, text, len);
	return out;
}

static void test_escape(void)
{
	/* Printable ASCII and valid UTF-8 stay as they are. */
	CHECK(strcmp(escaped("t\xc3\xa9rm \xe2\x82\xac \xf0\x9f\x99\x82", 14, 256),
		      "t\xc3\xa9rm \xe2\x82\xac \xf0\x9f\x99\x82") == 0);
	/* C0, DEL, C1 and malformed or overlong UTF-8 do not. */
	CHECK(strcmp(escaped("a\x1b[2Jb\x7f\xc2\x9b\xc3", 10, 256),
		      "a\\x1b[2Jb\\x7f\\xc2\\x9b\\xc3") == 0);
	CHECK(strcmp(escaped("\xe0\x80\xaf\xed\xa0\x80", 6, 256),
		      "\\xe0\\x80\\xaf\\xed\\xa0\\x80") == 0);
	/* A NUL in the middle is a byte like any other. */
	CHECK(strcmp(escaped("a\0b", 3, 256), "a\\x00b") == 0);
	/* Cut to fit, never in the middle of an escape or a character. */
	CHECK(strcmp(escaped("ab\x1b", 3, 5), "ab") == 0);
	CHECK(strcmp(escaped("a\xc3\xa9", 3, 3), "a") == 0);
	CHECK(strcmp(escaped("abc", 3, 1), "") == 0);
}

int main(int argc, char **argv)
{
	static const struct check_case cases[] = {
		{"escape", test_escape},
	};
	return check_main(argc, argv, cases, N(cases));
}
