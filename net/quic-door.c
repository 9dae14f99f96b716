/*
 * Who gets a connection slot of a QUIC server (quic-private.h). A client's
 * first Initial costs the server a slot and a TLS session until the
 * handshake ends or times out, and anyone can send one: QUIC v1's Initial
 * keys are public, and UDP sources can be forged. So a slot is cheap to
 * take back, and under pressure it goes only to a client that proved its
 * address: a Retry carries a token sealed with the endpoint's secret, and
 * only an Initial that echoes it from the same address is "validated".
 *
 * - An Initial without a token gets a slot at once only when the door is
 *   calm: fewer than UNVALIDATED_MAX unvalidated handshakes, none from its
 *   address, and a free slot. Otherwise it gets a Retry, which costs the
 *   server no state (a forged source never sees it).
 * - A validated handshake always gets a slot: one address holds at most
 *   HANDSHAKES_PER_ADDRESS, its own oldest going for a newer one, and a
 *   full table gives up its oldest unvalidated handshake, then its oldest
 *   validated one, then a connection the program has closed. Handshakes
 *   whose ClientHello proved the full key (or a move key) go after all
 *   others: watch-key or keyless ones cannot push the owner's out.
 * Live connections (the program holds their stream) are never taken back
 * here; the program bounds them (compositor/listen.c). So the owner, whose
 * handshake is the newest, gets in unless a stranger completes more Retry
 * round trips from real addresses than the table holds within the owner's
 * own handshake. What the door refuses is logged at most once a second.
 */
#include <arpa/inet.h>
#include <netdb.h>
#include <stdio.h>
#include <string.h>

#include "log.h"
#include "quic-private.h"

/* A Retry token is good for this long: a round trip, and then some. */
#define RETRY_TOKEN_NS (10 * NGTCP2_SECONDS)

static bool same_host(const struct sockaddr *a, const struct sockaddr_storage *b)
{
	if (a->sa_family != b->ss_family) {
		return false;
	}
	if (a->sa_family == AF_INET) {
		return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
			((const struct sockaddr_in *)b)->sin_addr.s_addr;
	}
	if (a->sa_family == AF_INET6) {
		return memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
			       &((const struct sockaddr_in6 *)b)->sin6_addr,
			       sizeof(struct in6_addr)) == 0;
	}
	return false;
}

static bool in_handshake(const struct conn *c)
{
	return c->used && !ngtcp2_conn_get_handshake_completed(c->conn);
}

/* What the door did since it last said so, said at most once a second. */
void quic_door_report(struct quic_endpoint *ep, uint64_t now)
{
	struct quic_door *door = &ep->door;
	if (!door->retries && !door->evicted && !door->bad_tokens && !door->turned_away) {
		return;
	}
	if (door->reported_at && now - door->reported_at < NGTCP2_SECONDS) {
		return;
	}
	int unfinished = 0;
	for (int i = 0; i < MAX_CONNS; i++) {
		unfinished += in_handshake(&ep->conns[i]);
	}
	log_warning("UDP: %d handshakes unfinished; since the last report %u new ones were asked "
		    "to prove their address (QUIC Retry), %u unfinished ones made room for newer "
		    "ones, %u came with a bad token, %u found no room",
		unfinished, door->retries, door->evicted, door->bad_tokens, door->turned_away);
	door->reported_at = now;
	door->retries = door->evicted = door->bad_tokens = door->turned_away = 0;
}

uint64_t quic_door_deadline(const struct quic_endpoint *ep)
{
	const struct quic_door *door = &ep->door;
	if (!door->retries && !door->evicted && !door->bad_tokens && !door->turned_away) {
		return UINT64_MAX;
	}
	return door->reported_at + NGTCP2_SECONDS;
}

static void send_retry(struct quic_endpoint *ep, const ngtcp2_pkt_hd *hd,
	const struct sockaddr *from, socklen_t from_len)
{
	ngtcp2_cid scid = {.datalen = SCID_LEN};
	uint8_t token[NGTCP2_CRYPTO_MAX_RETRY_TOKENLEN];
	uint8_t buf[PACKET_MAX];
	if (!quic_random(scid.data, scid.datalen)) {
		return;
	}
	ngtcp2_ssize tokenlen = ngtcp2_crypto_generate_retry_token(token, ep->secret,
		sizeof(ep->secret), hd->version, from, from_len, &scid, &hd->dcid, quic_now_ns());
	if (tokenlen < 0) {
		return;
	}
	ngtcp2_ssize n = ngtcp2_crypto_write_retry(buf, sizeof(buf), hd->version, &hd->scid, &scid,
		&hd->dcid, token, (size_t)tokenlen);
	if (n > 0) {
		ngtcp2_path path = {{(struct sockaddr *)&ep->local, ep->local_len},
			{(struct sockaddr *)from, from_len}, NULL};
		quic_send_packet(ep, &path, buf, (size_t)n, false);
		ep->door.retries++;
	}
}

/* An Initial whose token does not open: the client is told so (it may try
 * afresh), and no state is kept. */
static void refuse_token(struct quic_endpoint *ep, const ngtcp2_pkt_hd *hd,
	const struct sockaddr *from, socklen_t from_len)
{
	uint8_t buf[PACKET_MAX];
	ngtcp2_ssize n = ngtcp2_crypto_write_connection_close(buf, sizeof(buf), hd->version,
		&hd->scid, &hd->dcid, NGTCP2_INVALID_TOKEN, NULL, 0);
	if (n > 0) {
		ngtcp2_path path = {{(struct sockaddr *)&ep->local, ep->local_len},
			{(struct sockaddr *)from, from_len}, NULL};
		quic_send_packet(ep, &path, buf, (size_t)n, false);
	}
	ep->door.bad_tokens++;
}

/* The oldest of the connections that match: handshakes (validated or not)
 * from host (NULL: any), those that named the full key only if full, or,
 * closed, those the program let go of. */
static struct conn *oldest(struct quic_endpoint *ep, const struct sockaddr *host, bool validated,
	bool closed, bool full)
{
	struct conn *found = NULL;
	for (int i = 0; i < MAX_CONNS; i++) {
		struct conn *c = &ep->conns[i];
		if (!c->used) {
			continue;
		}
		bool match = closed ? c->app_eof
				    : in_handshake(c) && c->validated == validated &&
				(!host || same_host(host, &c->peer)) && (full || !c->full_key);
		if (match && (!found || c->started < found->started)) {
			found = c;
		}
	}
	return found;
}

static void evict(struct conn *c)
{
	c->ep->door.evicted++;
	/* Silently: its source may be forged, and the client times out. */
	quic_conn_free(c);
}

/* Whether an Initial without a token may take a slot now: else it is asked
 * to prove its address first. */
static bool calm(struct quic_endpoint *ep, const struct sockaddr *from)
{
	int unvalidated = 0, free_slots = 0;
	for (int i = 0; i < MAX_CONNS; i++) {
		struct conn *c = &ep->conns[i];
		if (!c->used) {
			free_slots++;
		} else if (in_handshake(c)) {
			if (same_host(from, &c->peer)) {
				return false;
			}
			unvalidated += !c->validated;
		}
	}
	return unvalidated < UNVALIDATED_MAX && free_slots > 0;
}

/* Room for a validated handshake from host: its address's oldest goes if
 * it holds its share, and a full table gives up what it can. */
static bool make_room(struct quic_endpoint *ep, const struct sockaddr *host)
{
	int from_host = 0, free_slots = 0;
	for (int i = 0; i < MAX_CONNS; i++) {
		struct conn *c = &ep->conns[i];
		free_slots += !c->used;
		from_host += in_handshake(c) && same_host(host, &c->peer);
	}
	if (from_host >= HANDSHAKES_PER_ADDRESS) {
		/* One that holds the full key goes last: watchers beside the
		 * owner, reconnecting, cannot push the owner's handshake out. */
		struct conn *c = oldest(ep, host, false, false, false);
		c = c ? c : oldest(ep, host, true, false, false);
		c = c ? c : oldest(ep, host, false, false, true);
		evict(c ? c : oldest(ep, host, true, false, true));
		return true;
	}
	if (free_slots > 0) {
		return true;
	}
	struct conn *c = oldest(ep, NULL, false, false, false);
	c = c ? c : oldest(ep, NULL, true, false, false);
	c = c ? c : oldest(ep, NULL, false, false, true);
	c = c ? c : oldest(ep, NULL, true, false, true);
	c = c ? c : oldest(ep, NULL, false, true, true);
	if (!c) {
		ep->door.turned_away++;
		return false;
	}
	evict(c);
	return true;
}

static struct conn *server_new(struct quic_endpoint *ep, const ngtcp2_pkt_hd *hd,
	const ngtcp2_cid *odcid, const struct sockaddr *from, socklen_t from_len)
{
	char err[256];
	struct conn *c = quic_conn_alloc(ep, err, sizeof(err));
	if (!c) {
		ep->door.turned_away++;
		return NULL;
	}
	c->validated = odcid != NULL;
	c->started = quic_now_ns();
	memcpy(&c->peer, from, from_len);
	c->peer_len = from_len;
	ngtcp2_cid scid;
	scid.datalen = SCID_LEN;
	if (!quic_random(scid.data, scid.datalen)) {
		quic_conn_free(c);
		return NULL;
	}
	c->cids[c->ncids++] = scid;
	/* The client's packets name the Initial's destination until it
	 * hears ours (after a Retry, that is the Retry's). */
	c->odcid = hd->dcid;
	ngtcp2_settings settings;
	ngtcp2_transport_params params;
	quic_conn_settings(&settings, &params);
	if (odcid) {
		/* A proved address: the limit of three times what it sent
		 * does not apply to it. */
		settings.token = hd->token;
		params.original_dcid = *odcid;
		params.retry_scid = hd->dcid;
		params.retry_scid_present = 1;
	} else {
		params.original_dcid = hd->dcid;
	}
	params.stateless_reset_token_present = 1;
	if (!quic_random(params.stateless_reset_token, sizeof(params.stateless_reset_token))) {
		quic_conn_free(c);
		return NULL;
	}
	ngtcp2_callbacks callbacks = quic_callbacks;
	callbacks.recv_client_initial = ngtcp2_crypto_recv_client_initial_cb;
	ngtcp2_path path = {{(struct sockaddr *)&ep->local, ep->local_len},
		{(struct sockaddr *)from, from_len}, NULL};
	if (ngtcp2_conn_server_new(&c->conn, &hd->scid, &scid, &path, hd->version, &callbacks,
		    &settings, &params, NULL, c) != 0 ||
		!quic_tls_init(c, err, sizeof(err))) {
		quic_conn_free(c);
		return NULL;
	}
	ngtcp2_conn_set_tls_native_handle(c->conn, c->tls);
	return c;
}

struct conn *quic_door_accept(struct quic_endpoint *ep, const uint8_t *data, size_t len,
	const struct sockaddr *from, socklen_t from_len)
{
	ngtcp2_pkt_hd hd;
	if (from_len > sizeof(struct sockaddr_storage) || ngtcp2_accept(&hd, data, len) != 0) {
		return NULL; /* not a client's first Initial */
	}
	ngtcp2_cid odcid;
	bool validated = false;
	if (hd.token.len > 0 && hd.token.base[0] == NGTCP2_CRYPTO_TOKEN_MAGIC_RETRY) {
		if (ngtcp2_crypto_verify_retry_token(&odcid, hd.token.base, hd.token.len,
			    ep->secret, sizeof(ep->secret), hd.version, from, from_len, &hd.dcid,
			    RETRY_TOKEN_NS, quic_now_ns()) != 0) {
			refuse_token(ep, &hd, from, from_len);
			return NULL;
		}
		validated = true;
	}
	if (!validated && !calm(ep, from)) {
		send_retry(ep, &hd, from, from_len);
		return NULL;
	}
	if (validated && !make_room(ep, from)) {
		return NULL;
	}
	return server_new(ep, &hd, validated ? &odcid : NULL, from, from_len);
}
