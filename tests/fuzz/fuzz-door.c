/* libFuzzer harness: a QUIC server's door (net/quic-door.c), which
 * reads a client's first Initial before any key is known: its header, its
 * token (a Retry token it sealed, a forged one, one altered), and who it
 * came from. Each input makes one Initial:
 *   byte 0    the token: 0 none, 1 the input's bytes, 2 one the door made
 *             for this packet, 3 that one with bytes of the input XORed in
 *   bytes 1-3 the source (127.0.b1.b2, port b3)
 *   byte 4    the destination connection ID's length (then its bytes), then
 *             the source ID's length and bytes; the rest feeds the token.
 * The endpoint lives on across inputs, so its table fills and the door
 * makes room; each connection it admits is checked to be in the table. */
#include <arpa/inet.h>
#include <ngtcp2/ngtcp2_crypto.h>
#include <stdlib.h>
#include <string.h>

#include "quic-private.h"

static size_t take(const uint8_t **data, size_t *size, uint8_t *out, size_t want)
{
	size_t n = want < *size ? want : *size;
	memcpy(out, *data, n);
	memset(out + n, 0, want - n);
	*data += n;
	*size -= n;
	return want;
}

static size_t put_varint(uint8_t *p, size_t v)
{
	p[0] = (uint8_t)(0x40 | (v >> 8));
	p[1] = (uint8_t)v;
	return 2;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct quic_endpoint *ep;
	char err[256];
	if (!ep) {
		ep = quic_endpoint_server((const uint8_t *)"fuzz", 4, err, sizeof(err));
		if (!ep) {
			abort();
		}
		struct sockaddr_in *local = (struct sockaddr_in *)&ep->local;
		local->sin_family = AF_INET;
		local->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		local->sin_port = htons(4433);
		ep->local_len = sizeof(*local);
	}
	uint8_t head[5];
	take(&data, &size, head, sizeof(head));
	struct sockaddr_in from = {.sin_family = AF_INET,
		.sin_addr.s_addr = htonl(0x7f000000u | (uint32_t)head[1] << 8 | head[2]),
		.sin_port = htons((uint16_t)(1024 + head[3]))};
	ngtcp2_cid dcid = {.datalen = 8 + head[4] % 13}, scid;
	take(&data, &size, dcid.data, dcid.datalen);
	uint8_t scid_len = 0;
	take(&data, &size, &scid_len, 1);
	scid.datalen = scid_len % (NGTCP2_MAX_CIDLEN + 1);
	take(&data, &size, scid.data, scid.datalen);

	uint8_t token[512];
	size_t token_len = 0;
	switch (head[0] % 4) {
	case 1:
		token_len = size < sizeof(token) ? size : sizeof(token);
		take(&data, &size, token, token_len);
		break;
	case 2:
	case 3: {
		ngtcp2_cid odcid = {.datalen = 8};
		ngtcp2_ssize n = ngtcp2_crypto_generate_retry_token(token, ep->secret,
			sizeof(ep->secret), NGTCP2_PROTO_VER_V1, (struct sockaddr *)&from,
			sizeof(from), &dcid, &odcid, quic_now_ns());
		if (n < 0) {
			abort();
		}
		token_len = (size_t)n;
		for (size_t i = 0; head[0] % 4 == 3 && i < token_len && size > 0; i++) {
			token[i] ^= data[0];
			data++;
			size--;
		}
		break;
	}
	}
	/* A long header: Initial, version 1, then padding to a full datagram. */
	uint8_t pkt[1400] = {0xc3, 0, 0, 0, 1};
	size_t at = 5;
	pkt[at++] = (uint8_t)dcid.datalen;
	memcpy(pkt + at, dcid.data, dcid.datalen);
	at += dcid.datalen;
	pkt[at++] = (uint8_t)scid.datalen;
	memcpy(pkt + at, scid.data, scid.datalen);
	at += scid.datalen;
	at += put_varint(pkt + at, token_len);
	memcpy(pkt + at, token, token_len);
	at += token_len;
	size_t rest = 1250 > at + 2 ? 1250 - at - 2 : 64;
	at += put_varint(pkt + at, rest);
	at += rest;
	struct conn *c = quic_door_accept(ep, pkt, at, (struct sockaddr *)&from, sizeof(from));
	if (c && (c < ep->conns || c >= ep->conns + MAX_CONNS || !c->used || !c->conn)) {
		abort();
	}
	int used = 0;
	for (int i = 0; i < MAX_CONNS; i++) {
		used += ep->conns[i].used;
	}
	if (used > MAX_CONNS) {
		abort();
	}
	return 0;
}
