/* Logging shared by rcomp-run and rcomp-view: one macro family, levels, [file:line]. */
#ifndef RCOMP_LOG_H
#define RCOMP_LOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum log_level {
	LOG_ERROR = 1,
	LOG_WARNING = 2,
	LOG_INFO = 3,
	LOG_DEBUG = 4,
};

void log_init(const char *program, enum log_level level);
/* Makes text from a peer or an app safe to print: valid UTF-8 stays, other
 * bytes and control characters (C0, DEL, C1) become \xNN. out gets at most
 * size - 1 characters and a NUL. */
void log_escape(char *out, size_t size, const char *text, size_t len);
enum log_level log_get_level(void);
/* This machine's local time of day, "HH:MM:SS.mmm": what --stats lines
 * begin with, to be read beside other logs. */
#define LOG_CLOCK_SIZE 16
void log_clock(char out[LOG_CLOCK_SIZE]);
void log_printf(enum log_level level, const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* A log line a flood may repeat: a burst of LOG_LIMIT_BURST, then one a
 * second, each saying how many were left out before it. */
#define LOG_LIMIT_BURST 10
struct log_limit {
	uint64_t at_us; /* the last call */
	double credit;
	unsigned skipped;
};
/* Whether to log now (now_us: a monotonic clock); *skipped gets how many
 * calls were not logged since the last that was. */
bool log_limit_pass(struct log_limit *limit, uint64_t now_us, unsigned *skipped);

#define rc_log(level, ...) \
	do { \
		if ((level) <= log_get_level()) { \
			log_printf((level), __FILE__, __LINE__, __VA_ARGS__); \
		} \
	} while (0)
#define log_error(...) rc_log(LOG_ERROR, __VA_ARGS__)
#define log_warning(...) rc_log(LOG_WARNING, __VA_ARGS__)
#define log_info(...) rc_log(LOG_INFO, __VA_ARGS__)
#define log_debug(...) rc_log(LOG_DEBUG, __VA_ARGS__)

#endif
