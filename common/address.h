/* Network addresses as text: HOST:PORT as the options and settings give
 * them, for TCP, QUIC and the browsers' door alike. */
#ifndef RCOMP_ADDRESS_H
#define RCOMP_ADDRESS_H

#include <stdbool.h>
#include <stddef.h>

/* Splits HOST:PORT, [HOST]:PORT or :PORT. host gets HOST (maybe empty),
 * *port points into spec. False if spec has no port or HOST is too long. */
bool address_split(const char *spec, char *host, size_t host_size, const char **port);
/* The other way: HOST:PORT, or [HOST]:PORT for an IPv6 address. */
void address_join(char *out, size_t size, const char *host, unsigned port);
/* Whether text (len bytes) is an IP address as text: hex digits, dots and
 * colons only, and at least one. */
bool address_is_ip(const char *text, size_t len);

/* ADDR:PORT or [ADDR]:PORT to listen on: host gets ADDR ("localhost"
 * becomes 127.0.0.1), *port the port, 1 to 65535. False if it is not one. */
bool address_listen(const char *spec, char *host, size_t host_size, int *port);
/* Whether host is a loopback address literal (127/8 or ::1). */
bool address_is_loopback(const char *host);

#endif
