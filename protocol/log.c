/* Logging to stderr with program name, level and source location. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "log.h"

static const char *log_program = "rcomp";
static enum log_level log_level = LOG_INFO;

void log_init(const char *program, enum log_level level)
{
	log_program = program;
	log_level = level;
}

enum log_level log_get_level(void)
{
	return log_level;
}

void log_printf(enum log_level level, const char *file, int line, const char *fmt, ...)
{
	static const char *const names[] = {"", "error", "info", "debug"};
	const char *base = strrchr(file, '/');
	base = base ? base + 1 : file;

	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);

	char msg[1024];
	va_list args;
	va_start(args, fmt);
	vsnprintf(msg, sizeof(msg), fmt, args);
	va_end(args);

	if (log_level >= LOG_DEBUG) {
		fprintf(stderr, "%s: %lld.%03ld %s [%s:%d] %s\n", log_program,
			(long long)now.tv_sec, now.tv_nsec / 1000000, names[level], base, line,
			msg);
	} else {
		fprintf(stderr, "%s: %s%s\n", log_program, level == LOG_ERROR ? "error: " : "",
			msg);
	}
}
