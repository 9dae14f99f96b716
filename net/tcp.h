/* TCP between the two programs: the sockets' settings and who is at the
 * other end (address.h parses where to connect or listen; token.h reads
 * the token a viewer must present). */
#ifndef RCOMP_TCP_H
#define RCOMP_TCP_H

#include <stdbool.h>
#include <stddef.h>

/* Sets up a connected TCP socket for the channel: no Nagle delay, and the
 * kernel keeps little unsent (TCP_NOTSENT_LOWAT), so that what waits is in
 * the channel's queues, where a key press can overtake it. */
void tcp_tune(int fd);

/* The port of a connected socket's peer (0 if it has none). */
int tcp_peer_port(int fd);
/* The local user that owns the other end of a TCP connection over
 * loopback (sock_diag), or -1 where that cannot be known (the peer is
 * elsewhere, or the kernel will not say). */
long tcp_peer_uid(int fd);

#endif
