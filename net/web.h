/*
 * The browser's door: the page's files over HTTP and one WebSocket per
 * viewer, served by libwebsockets on a thread of its own. Each WebSocket
 * becomes one end of a socket pair that the program reads as it reads a
 * TCP viewer (its hello carries the token, which listen.c checks): the
 * binary messages' bytes one way, the socket's bytes as binary messages
 * the other, one chunk in flight each way, so a browser that stops reading
 * holds up its own socket and no more.
 */
#ifndef RCOMP_WEB_H
#define RCOMP_WEB_H

#include <stdbool.h>
#include <stddef.h>

struct web;

/* The page's files that a folder must hold to serve the page: its own and
 * what the build generates for it (messages.js). The gate's door also needs
 * gate.html (WEB_GATE_PAGE). */
#define WEB_PAGE_FILES "index.html", "messages.js", "rcomp.js"
#define WEB_GATE_PAGE "gate.html"

/* Longest host a viewer's address is given as (web-admit.c's key). */
#define WEB_HOST_MAX 80

struct web_config {
	const char *spec; /* ADDR:PORT */
	const char *root; /* the page's files */
	const char *cert, *key; /* PEM files for TLS, or both NULL */
	/* The session's token and the watch token (length 0: none): a
	 * WebSocket is opened only for a page that proves it holds one. */
	const char *token[2];
	size_t token_len[2];
};

/* Serves root (the page's files) and WebSockets on spec, ADDR:PORT. Plain
 * HTTP only on a loopback address (reached through ssh -L, where the page
 * is a secure context); elsewhere cert and key (PEM files) are needed, for
 * TLS. NULL with err where it cannot (errno EADDRINUSE where the port is
 * taken). */
struct web *web_listen(const struct web_config *config, char *err, size_t err_size);
void web_close(struct web *web);

/* The DNS names in the certificate at path (its subject alternative names,
 * else its common name): the Host headers that name this server. Up to max
 * into names (each to free); how many. */
int web_cert_names(const char *path, char **names, int max);

/* Readable while a new viewer's socket waits for web_accept. */
int web_fd(const struct web *web);
/* The next viewer's socket (non-blocking, close-on-exec), with the
 * browser's address; -1 when none waits. */
int web_accept(struct web *web, char host[WEB_HOST_MAX], int *port);

#endif
