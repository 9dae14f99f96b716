#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "address.h"
#include "log.h"
#include "peers.h"

/* The cluster's other hosts: up while their gate takes a connection (a
 * thread tries each every PEER_EVERY_MS). */
#define PEER_EVERY_MS 1000
#define PEER_WAIT_MS 500
struct peer {
	struct sockaddr_storage addr;
	socklen_t len;
	bool me;
	atomic_bool up;
	bool tried; /* the watcher's own */
};
static struct peer peers[GATE_HOSTS_MAX];
static atomic_bool stopping;
static pthread_t watcher;
static bool watching;

static bool peer_answers(const struct peer *p)
{
	int fd = socket(p->addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		return false;
	}
	bool up = false;
	if (connect(fd, (const struct sockaddr *)&p->addr, p->len) == 0) {
		up = true;
	} else if (errno == EINPROGRESS) {
		struct pollfd pfd = {.fd = fd, .events = POLLOUT};
		int err = 0;
		socklen_t len = sizeof(err);
		up = poll(&pfd, 1, PEER_WAIT_MS) == 1 &&
			getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err == 0;
	}
	close(fd);
	return up;
}

static void *watch_peers(void *data)
{
	const struct gate_config *config = data;
	while (!atomic_load(&stopping)) {
		for (int i = 0; i < config->nhosts; i++) {
			if (peers[i].me) {
				continue;
			}
			bool up = peer_answers(&peers[i]);
			if (atomic_exchange(&peers[i].up, up) != up || !peers[i].tried) {
				log_info("host %s (%s) is %s", config->hosts[i].name,
					config->hosts[i].addr,
					up ? "up"
					   : "down: its users' logins go to the next host of "
					     "theirs");
			}
			peers[i].tried = true;
		}
		usleep(PEER_EVERY_MS * 1000);
	}
	return NULL;
}

/* The hosts' addresses; false (logged) if one is not an address. */
static bool peers_init(const struct gate_config *config)
{
	for (int i = 0; i < config->nhosts; i++) {
		struct peer *p = &peers[i];
		char host[128];
		int port; /* gate_config_read checked it */
		address_listen(config->hosts[i].addr, host, sizeof(host), &port);
		struct sockaddr_in *a4 = (struct sockaddr_in *)&p->addr;
		struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&p->addr;
		if (inet_pton(AF_INET, host, &a4->sin_addr) == 1) {
			a4->sin_family = AF_INET;
			a4->sin_port = htons((uint16_t)port);
			p->len = sizeof(*a4);
		} else if (inet_pton(AF_INET6, host, &a6->sin6_addr) == 1) {
			a6->sin6_family = AF_INET6;
			a6->sin6_port = htons((uint16_t)port);
			p->len = sizeof(*a6);
		} else {
			log_error("[cluster] hosts: %s is not an address (ADDR:PORT)",
				config->hosts[i].addr);
			return false;
		}
		p->me = strcmp(config->hosts[i].name, config->me) == 0;
		atomic_store(&p->up, p->me);
	}
	return true;
}

const char *peers_owner_of(const struct gate_config *config, const char *user)
{
	if (!config->nhosts) {
		return NULL;
	}
	int order[GATE_HOSTS_MAX];
	gate_config_order(config, user, order);
	for (int i = 0; i < config->nhosts; i++) {
		if (atomic_load(&peers[order[i]].up)) {
			return config->hosts[order[i]].name;
		}
	}
	return config->me;
}

bool peers_start(const struct gate_config *config)
{
	if (config->nhosts < 2) {
		return true;
	}
	if (!peers_init(config) ||
		pthread_create(&watcher, NULL, watch_peers, (void *)config) != 0) {
		log_error("cannot watch the cluster's other hosts");
		return false;
	}
	watching = true;
	return true;
}

void peers_stop(void)
{
	if (watching) {
		atomic_store(&stopping, true);
		pthread_join(watcher, NULL);
		watching = false;
	}
}
