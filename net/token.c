/* Token files and new tokens (see token.h). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "token.h"
#include "wire.h"

bool token_read(const char *path, char *token, size_t *len)
{
	FILE *f = fopen(path, "re");
	if (!f) {
		log_error("cannot read the token file %s: %s", path, strerror(errno));
		return false;
	}
	/* A secret others could read, or change, is no secret. */
	struct stat st;
	if (fstat(fileno(f), &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != getuid() ||
		(st.st_mode & 077)) {
		log_error("refusing the token file %s: it must be a file of yours that only you "
			  "can read and write (chmod 600 %s)",
			path, path);
		fclose(f);
		return false;
	}
	char line[WIRE_MAX_TOKEN + 2] = "";
	bool got = fgets(line, sizeof(line), f) != NULL;
	fclose(f);
	size_t n = got ? strcspn(line, "\r\n") : 0;
	if (n == 0 || n > WIRE_MAX_TOKEN) {
		log_error("the token file %s must start with a line of 1 to %d characters", path,
			WIRE_MAX_TOKEN);
		return false;
	}
	memcpy(token, line, n);
	token[n] = '\0';
	*len = n;
	return true;
}

bool token_random(char *token, size_t *len, const char *prefix)
{
	uint8_t random[32];
	if (getrandom(random, sizeof(random), 0) != (ssize_t)sizeof(random)) {
		log_error("cannot get random bytes for a token: %s", strerror(errno));
		return false;
	}
	size_t n = strlen(prefix);
	memcpy(token, prefix, n);
	for (size_t i = 0; i < sizeof(random); i++) {
		snprintf(token + n + 2 * i, 3, "%02x", random[i]);
	}
	*len = n + 2 * sizeof(random);
	return true;
}
