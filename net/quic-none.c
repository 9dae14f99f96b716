/* Built without ngtcp2 and GnuTLS (-Dudp=disabled): no UDP transport. */
#include <stdio.h>

#include "quic.h"

static const char why[] = "this rcomp was built without UDP (QUIC needs ngtcp2 and GnuTLS)";

struct quic_endpoint *quic_listen(const char *addr_port, const uint8_t *key, size_t key_len,
	const uint8_t *watch_key, size_t watch_key_len, char *err, size_t err_size)
{
	snprintf(err, err_size, "%s", why);
	return NULL;
}

bool quic_set_move_key(struct quic_endpoint *ep, int slot, const char *key, size_t len)
{
	return false;
}

bool quic_supported(void)
{
	return false;
}

int quic_endpoint_fd(const struct quic_endpoint *ep)
{
	return -1;
}

int quic_local_port(const struct quic_endpoint *ep)
{
	return 0;
}

int quic_accept(struct quic_endpoint *ep, char host[QUIC_HOST_MAX], int *port, bool *watch,
	int *move_slot)
{
	return -1;
}

int quic_connect(const char *host_port, const uint8_t *key, size_t key_len, int timeout_ms,
	struct quic_endpoint **out, char *err, size_t err_size)
{
	*out = NULL;
	snprintf(err, err_size, "%s", why);
	return -1;
}

void quic_failure(struct quic_endpoint *ep, char *out, size_t size)
{
	snprintf(out, size, "%s", why);
}

bool quic_key_refused(struct quic_endpoint *ep)
{
	return false;
}

void quic_close(struct quic_endpoint *ep)
{
}

double quic_loss(struct quic_endpoint *ep)
{
	return -1;
}

double quic_rtt_ms(struct quic_endpoint *ep)
{
	return 0;
}

void quic_describe(struct quic_endpoint *ep, char *out, size_t size)
{
	snprintf(out, size, "no udp");
}
