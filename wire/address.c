/* Network addresses as text (see address.h). */
#include <stdio.h>
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
