/* TCP between the two programs: where to connect or listen, and the token
 * a viewer must present. */
#ifndef RCOMP_TCP_H
#define RCOMP_TCP_H

#include <stdbool.h>
#include <stddef.h>

#include "wire.h"

/* Splits HOST:PORT, [HOST]:PORT or :PORT. host gets HOST (maybe empty),
 * *port points into spec. False if spec has no port or HOST is too long. */
bool tcp_split_host_port(const char *spec, char *host, size_t host_size, const char **port);
/* The other way: HOST:PORT, or [HOST]:PORT for an IPv6 address. */
void tcp_join_host_port(char *out, size_t size, const char *host, unsigned port);
/* Whether text (len bytes) is an IP address as text: hex digits, dots and
 * colons only, and at least one. */
bool tcp_ip_text(const char *text, size_t len);

/* Sets up a connected TCP socket for the channel: no Nagle delay, and the
 * kernel keeps little unsent (TCP_NOTSENT_LOWAT), so that what waits is in
 * the channel's queues, where a key press can overtake it. */
void tcp_tune(int fd);

/* Reads a token: the first line of path, 1 to WIRE_MAX_TOKEN characters,
 * from a regular file of ours that nobody else may read or write. Logs why
 * and returns false if it cannot. */
bool tcp_read_token(const char *path, char *token, size_t *len);
/* A new token, 256 random bits as hex after prefix, in token (which holds
 * it and a NUL); false (logged) without random bytes. */
bool tcp_random_token(char *token, size_t *len, const char *prefix);

/* The port of a connected socket's peer (0 if it has none). */
int tcp_peer_port(int fd);
/* The local user that owns the other end of a TCP connection over
 * loopback (sock_diag), or -1 where that cannot be known (the peer is
 * elsewhere, or the kernel will not say). */
long tcp_peer_uid(int fd);

#endif
