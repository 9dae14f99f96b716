/* TCP between the two programs: where to connect or listen, and the token. */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "tcp.h"

/* The pacing keeps about 1.5 round trips of data unacknowledged; this
 * bounds what the kernel itself holds unsent beyond the window. */
#define NOTSENT_LOWAT (16 * 1024)

void tcp_tune(int fd)
{
	int one = 1, lowat = NOTSENT_LOWAT;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	setsockopt(fd, IPPROTO_TCP, TCP_NOTSENT_LOWAT, &lowat, sizeof(lowat));
}

bool tcp_split_host_port(const char *spec, char *host, size_t host_size, const char **port)
{
	const char *colon = strrchr(spec, ':');
	size_t len = colon ? (size_t)(colon - spec) : 0;
	if (!colon || !colon[1] || len >= host_size) {
		return false;
	}
	if (len >= 2 && spec[0] == '[' && spec[len - 1] == ']') {
		spec++;
		len -= 2;
	}
	memcpy(host, spec, len);
	host[len] = '\0';
	*port = colon + 1;
	return true;
}

void tcp_join_host_port(char *out, size_t size, const char *host, unsigned port)
{
	snprintf(out, size, strchr(host, ':') ? "[%s]:%u" : "%s:%u", host, port);
}

bool tcp_ip_text(const char *text, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		if (text[i] == '\0' || !strchr("0123456789abcdefABCDEF.:", text[i])) {
			return false;
		}
	}
	return len > 0;
}

bool tcp_read_token(const char *path, char *token, size_t *len)
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

bool tcp_random_token(char *token, size_t *len, const char *prefix)
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
