#include <stdlib.h>
#include <string.h>

#include "bridge.h"
#include "buffer.h"
#include "log.h"
#include "web-admit.h"

static void release(struct bridge *b)
{
	if (b->ws || b->raw) {
		return;
	}
	free(b->to_ws);
	free(b->to_sock);
	b->to_ws = b->to_sock = NULL;
	b->release(b);
}

/* Appends bytes to a chunk in flight (LWS_PRE room first); false past
 * twice the chunk, which flow control never lets happen. */
static bool take(uint8_t **buf, size_t *len, const void *in, size_t n)
{
	if (*len + n > 2 * BRIDGE_CHUNK) {
		return false;
	}
	uint8_t *p = realloc(*buf, LWS_PRE + *len + n);
	if (!p) {
		return false;
	}
	memcpy(p + LWS_PRE + *len, in, n);
	*buf = p;
	*len += n;
	return true;
}

/* Writes the chunk in flight on wsi (as protocol says), then lets other
 * read again: one chunk each way at most. False if the write failed. */
static bool flush(struct lws *wsi, uint8_t *buf, size_t *len, enum lws_write_protocol protocol,
	struct lws *other)
{
	if (!*len) {
		return true;
	}
	int n = lws_write(wsi, buf + LWS_PRE, *len, protocol);
	*len = 0;
	if (n < 0) {
		return false;
	}
	if (other) {
		lws_rx_flow_control(other, 1);
	}
	return true;
}

/* Headers on every answer of both doors, as a bank's login page sends
 * them: the page's own scripts, styles and connections only (no inline
 * script or style anywhere in web/), cursor images made as data: URLs,
 * never framed, never sniffed, no Referer sent on. Over TLS, HSTS too. */
#define CSP \
	"default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " \
	"connect-src 'self'; media-src 'self'; worker-src 'self'; object-src 'none'; " \
	"base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
static const struct lws_protocol_vhost_options hsts = {NULL, NULL,
	"strict-transport-security:", "max-age=31536000"};
static const struct lws_protocol_vhost_options frame = {NULL, NULL, "x-frame-options:", "DENY"};
static const struct lws_protocol_vhost_options referrer = {&frame, NULL,
	"referrer-policy:", "no-referrer"};
static const struct lws_protocol_vhost_options sniff = {&referrer, NULL,
	"x-content-type-options:", "nosniff"};
static const struct lws_protocol_vhost_options csp = {&sniff, NULL,
	"content-security-policy:", CSP};
static const struct lws_protocol_vhost_options frame_tls = {&hsts, NULL,
	"x-frame-options:", "DENY"};
static const struct lws_protocol_vhost_options referrer_tls = {&frame_tls, NULL,
	"referrer-policy:", "no-referrer"};
static const struct lws_protocol_vhost_options sniff_tls = {&referrer_tls, NULL,
	"x-content-type-options:", "nosniff"};
static const struct lws_protocol_vhost_options csp_tls = {&sniff_tls, NULL,
	"content-security-policy:", CSP};

void bridge_door_info(struct lws_context_creation_info *info, const char *iface, int port,
	const char *cert, const char *key)
{
	lws_set_log_level(LLL_ERR | LLL_WARN, bridge_lws_log);
	info->port = port;
	info->iface = iface;
	info->gid = (gid_t)-1;
	info->uid = (uid_t)-1;
	info->pt_serv_buf_size = BRIDGE_CHUNK;
	info->timeout_secs = 10;
	info->alpn = "http/1.1";
	if (!strchr(iface, ':')) {
		info->options = LWS_SERVER_OPTION_DISABLE_IPV6;
	}
	info->headers = &csp;
	if (cert && cert[0]) {
		info->options |= LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT;
		info->ssl_cert_filepath = cert;
		info->ssl_private_key_filepath = key;
		info->headers = &csp_tls;
		/* TLS 1.2 with forward secrecy and an AEAD only (no CBC, no
		 * static RSA), and TLS 1.3; older versions not at all. */
		info->ssl_cipher_list = BRIDGE_TLS12_CIPHERS;
		info->ssl_options_set = SSL_OP_NO_SSLv2 | SSL_OP_NO_SSLv3 | SSL_OP_NO_TLSv1 |
			SSL_OP_NO_TLSv1_1 | SSL_OP_CIPHER_SERVER_PREFERENCE;
	}
}

bool bridge_adopt(struct bridge *b, struct lws_vhost *vh, int fd, const char *protocol)
{
	lws_adopt_desc_t desc = {
		.vh = vh,
		.type = LWS_ADOPT_SOCKET,
		.fd.sockfd = fd,
		.vh_prot_name = protocol,
		.opaque = b,
	};
	b->adopted = true;
	b->raw = lws_adopt_descriptor_vhost_via_info(&desc);
	if (b->raw && b->to_sock_len) {
		lws_callback_on_writable(b->raw);
	}
	return b->raw != NULL;
}

bool bridge_goodbye(struct bridge *b, enum wire_goodbye_reason reason, const char *text)
{
	if (b->spoke) {
		b->close_code = (uint16_t)(4000 + reason);
		size_t n = strlen(text);
		if (n >= sizeof(b->close_text)) {
			n = sizeof(b->close_text) - 1;
			while (n > 0 && ((unsigned char)text[n] & 0xc0) == 0x80) {
				n--; /* not inside a UTF-8 sequence */
			}
		}
		memcpy(b->close_text, text, n);
		b->close_text[n] = '\0';
		b->refused = true;
		if (b->ws) {
			lws_callback_on_writable(b->ws);
		}
		return true;
	}
	struct wire_msg msg = {
		.type = WIRE_GOODBYE,
		.goodbye = {.reason = reason, .text = text, .text_len = (uint32_t)strlen(text)},
	};
	struct buffer out;
	buffer_init(&out, 4096);
	bool ok = wire_encode(&out, &msg) &&
		take(&b->to_ws, &b->to_ws_len, buffer_head(&out), buffer_size(&out));
	buffer_finish(&out);
	b->refused = true;
	if (b->ws) {
		lws_callback_on_writable(b->ws);
	}
	return ok;
}

int bridge_ws_receive(struct bridge *b, struct lws *wsi, const void *in, size_t len)
{
	if (!b) {
		return -1;
	}
	if (b->refused) {
		return 0; /* what it says is not read */
	}
	if (!lws_frame_is_binary(wsi)) {
		lws_close_reason(wsi, LWS_CLOSE_STATUS_UNACCEPTABLE_OPCODE,
			(unsigned char *)"binary only", 11);
		return -1;
	}
	if (!take(&b->to_sock, &b->to_sock_len, in, len)) {
		return -1;
	}
	lws_rx_flow_control(wsi, 0);
	if (b->raw) {
		lws_callback_on_writable(b->raw);
	}
	return 0;
}

int bridge_ws_writeable(struct bridge *b, struct lws *wsi)
{
	if (!b || !flush(wsi, b->to_ws, &b->to_ws_len, LWS_WRITE_BINARY, b->raw)) {
		return -1;
	}
	if (b->refused || (b->adopted && !b->raw)) {
		/* The session closed, or the door refused: what was sent is
		 * out; now the close. A bridge still waiting for its socket
		 * waits on. */
		if (b->close_code) {
			lws_close_reason(wsi, (enum lws_close_status)b->close_code,
				(unsigned char *)b->close_text, strlen(b->close_text));
		} else {
			lws_close_reason(wsi, LWS_CLOSE_STATUS_NORMAL, NULL, 0);
		}
		return -1;
	}
	return 0;
}

void bridge_ws_closed(struct bridge *b)
{
	b->ws = NULL;
	if (b->raw) {
		lws_callback_on_writable(b->raw);
	}
	release(b);
}

int bridge_socket_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
	size_t len)
{
	struct bridge *b = lws_get_opaque_user_data(wsi);
	switch (reason) {
	case LWS_CALLBACK_RAW_ADOPT:
		return b ? 0 : -1;
	case LWS_CALLBACK_RAW_RX:
		if (!b || !b->ws) {
			return -1;
		}
		if (!take(&b->to_ws, &b->to_ws_len, in, len)) {
			return -1;
		}
		b->spoke = true;
		lws_rx_flow_control(wsi, 0);
		lws_callback_on_writable(b->ws);
		return 0;
	case LWS_CALLBACK_RAW_WRITEABLE:
		if (!b || !flush(wsi, b->to_sock, &b->to_sock_len, LWS_WRITE_RAW, b->ws)) {
			return -1;
		}
		/* The browser went: the session reads the end once the last
		 * bytes are in. */
		return b->ws ? 0 : -1;
	case LWS_CALLBACK_RAW_CLOSE:
		if (b) {
			b->raw = NULL;
			lws_set_opaque_user_data(wsi, NULL);
			if (b->ws) {
				lws_callback_on_writable(b->ws);
			}
			release(b);
		}
		return 0;
	default:
		return 0;
	}
}

enum admit_verdict bridge_arrive(struct admit *admit, struct lws *wsi, long uid, uint64_t now_ms,
	const void **evict)
{
	struct sockaddr_storage addr;
	socklen_t len = sizeof(addr);
	*evict = NULL;
	if (getpeername(lws_get_socket_fd(wsi), (struct sockaddr *)&addr, &len) != 0) {
		return ADMIT_OUT_ADDRESS;
	}
	char key[ADMIT_KEY_MAX];
	admit_key((struct sockaddr *)&addr, len, uid, key);
	return admit_add(admit, wsi, key, now_ms, evict);
}

void bridge_close_soon(const void *wsi)
{
	lws_set_timeout((struct lws *)wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC);
}

void bridge_lws_log(int level, const char *line)
{
	size_t n = strlen(line);
	while (n && (line[n - 1] == '\n' || line[n - 1] == '\r')) {
		n--;
	}
	log_debug("libwebsockets: %.*s", (int)n, line);
}
