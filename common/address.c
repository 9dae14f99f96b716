/* Network addresses as text (see address.h). */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "address.h"

bool address_split(const char *spec, char *host, size_t host_size, const char **port)
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

void address_join(char *out, size_t size, const char *host, unsigned port)
{
	snprintf(out, size, strchr(host, ':') ? "[%s]:%u" : "%s:%u", host, port);
}

bool address_is_ip(const char *text, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		if (text[i] == '\0' || !strchr("0123456789abcdefABCDEF.:", text[i])) {
			return false;
		}
	}
	return len > 0;
}

bool address_listen(const char *spec, char *host, size_t host_size, int *port)
{
	const char *digits;
	if (!address_split(spec, host, host_size, &digits) || !*host) {
		return false;
	}
	if (strcmp(host, "localhost") == 0) {
		snprintf(host, host_size, "127.0.0.1");
	}
	char *end;
	long p = strtol(digits, &end, 10);
	if (*end || p < 1 || p > 65535) {
		return false;
	}
	*port = (int)p;
	return true;
}

bool address_is_loopback(const char *host)
{
	struct in_addr a4;
	struct in6_addr a6;
	if (inet_pton(AF_INET, host, &a4) == 1) {
		return (ntohl(a4.s_addr) >> 24) == 127;
	}
	return inet_pton(AF_INET6, host, &a6) == 1 && IN6_IS_ADDR_LOOPBACK(&a6);
}
