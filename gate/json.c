#include <string.h>

#include "json.h"
#include "log.h"

void json_put(struct json *j, const char *text)
{
	size_t n = strlen(text);
	if (j->full || j->len + n + 1 > j->size) {
		j->full = true;
		return;
	}
	memcpy(j->buf + j->len, text, n + 1);
	j->len += n;
}

void json_string(struct json *j, const char *text, size_t n)
{
	char safe[1024];
	log_escape(safe, sizeof(safe), text, n);
	size_t len = j->len;
	bool fits = !j->full && len + 1 < j->size;
	if (fits) {
		j->buf[len++] = '"';
	}
	for (const char *p = safe; *p && fits; p++) {
		bool quote = *p == '"' || *p == '\\';
		fits = len + 1 + quote < j->size;
		if (fits && quote) {
			j->buf[len++] = '\\';
		}
		if (fits) {
			j->buf[len++] = *p;
		}
	}
	if (!fits || len + 2 > j->size) {
		j->full = true;
		return;
	}
	j->buf[len++] = '"';
	j->buf[len] = '\0';
	j->len = len;
}
