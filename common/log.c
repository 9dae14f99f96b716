/* Logging to stderr with program name, level and source location. */
#include <stdarg.h>
#include <stdint.h>
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

void log_clock(char out[LOG_CLOCK_SIZE])
{
	struct timespec now;
	struct tm tm;
	clock_gettime(CLOCK_REALTIME, &now);
	if (!localtime_r(&now.tv_sec, &tm) || strftime(out, 9, "%H:%M:%S", &tm) != 8) {
		snprintf(out, LOG_CLOCK_SIZE, "?");
		return;
	}
	snprintf(out + 8, LOG_CLOCK_SIZE - 8, ".%03d", (int)(now.tv_nsec / 1000000 % 1000));
}

void log_printf(enum log_level level, const char *file, int line, const char *fmt, ...)
{
	static const char *const names[] = {"", "error", "warning", "info", "debug"};
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
		fprintf(stderr, "%s: %s%s\n", log_program,
			level == LOG_ERROR	       ? "error: "
				: level == LOG_WARNING ? "warning: "
						       : "",
			msg);
	}
}

/* The length of the UTF-8 sequence at s (at most left bytes) if it is valid
 * and prints (not a C1 control), else 0. */
static size_t printable_utf8(const unsigned char *s, size_t left)
{
	size_t n = s[0] >= 0xf0 && s[0] <= 0xf4 ? 4
		: s[0] >= 0xe0			? 3
		: s[0] >= 0xc2 && s[0] <= 0xdf	? 2
						: 0;
	if (n == 0 || n > left) {
		return 0;
	}
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80) {
			return 0;
		}
	}
	uint32_t c = n == 2 ? (s[0] & 0x1fu) << 6 | (s[1] & 0x3fu)
		: n == 3    ? (s[0] & 0x0fu) << 12 | (s[1] & 0x3fu) << 6 | (s[2] & 0x3fu)
			    : (s[0] & 0x07u) << 18 | (s[1] & 0x3fu) << 12 | (s[2] & 0x3fu) << 6 |
			(s[3] & 0x3fu);
	bool overlong = (n == 3 && c < 0x800) || (n == 4 && c < 0x10000);
	bool invalid = c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff);
	bool c1 = c >= 0x80 && c <= 0x9f;
	return overlong || invalid || c1 ? 0 : n;
}

void log_escape(char *out, size_t size, const char *text, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *s = (const unsigned char *)text;
	size_t o = 0;
	for (size_t i = 0; i < len && o + 1 < size;) {
		size_t n = s[i] >= 0x20 && s[i] < 0x7f ? 1 : printable_utf8(s + i, len - i);
		if (n > 0 && o + n < size) {
			memcpy(out + o, s + i, n);
			o += n;
			i += n;
		} else if (n == 0 && o + 4 < size) {
			out[o++] = '\\';
			out[o++] = 'x';
			out[o++] = hex[s[i] >> 4];
			out[o++] = hex[s[i] & 0xf];
			i++;
		} else {
			break;
		}
	}
	if (size > 0) {
		out[o] = '\0';
	}
}

bool log_limit_pass(struct log_limit *limit, uint64_t now_us, unsigned *skipped)
{
	if (limit->at_us == 0) {
		limit->credit = LOG_LIMIT_BURST;
	} else {
		limit->credit += (double)(now_us - limit->at_us) / 1e6;
	}
	limit->at_us = now_us;
	if (limit->credit > LOG_LIMIT_BURST) {
		limit->credit = LOG_LIMIT_BURST;
	}
	if (limit->credit < 1) {
		limit->skipped++;
		return false;
	}
	limit->credit -= 1;
	*skipped = limit->skipped;
	limit->skipped = 0;
	return true;
}
