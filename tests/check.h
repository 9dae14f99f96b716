/* A minimal harness for unit tests: named cases, CHECK that reports and counts. */
#ifndef RCOMP_CHECK_H
#define RCOMP_CHECK_H

#include <stdio.h>
#include <string.h>

static int check_failures;

#define CHECK(cond) \
	do { \
		if (!(cond)) { \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
			check_failures++; \
		} \
	} while (0)

struct check_case {
	const char *name;
	void (*run)(void);
};

/* Runs the case named by argv[1], or all of them; exit status 1 on failure. */
static int check_main(int argc, char **argv, const struct check_case *cases, size_t n)
{
	int ran = 0;
	for (size_t i = 0; i < n; i++) {
		if (argc > 1 && strcmp(argv[1], cases[i].name) != 0) {
			continue;
		}
		int before = check_failures;
		cases[i].run();
		printf("%s: %s\n", check_failures == before ? "ok" : "FAILED", cases[i].name);
		ran++;
	}
	if (ran == 0) {
		fprintf(stderr, "no test case named %s\n", argc > 1 ? argv[1] : "(none)");
		return 1;
	}
	return check_failures ? 1 : 0;
}

#endif
