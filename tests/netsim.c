/*
 * A simulated network link between two network namespaces, for tests and
 * benches: the kernel here has no netem, and no tc gact or clsact, so loss
 * cannot be made with tc. netsim opens a TUN device in each namespace and
 * forwards the IP packets between them as a link would carry them: each
 * direction has a bottleneck of RATE with a queue of BUFFER bytes (tail
 * drop when full), a one-way DELAY, JITTER added to each packet's delay (a
 * packet never overtakes the one before it, as on one path), and random
 * LOSS. TCP, UDP and anything else ride it alike. For hostile paths, UDP
 * datagrams can also be CORRUPTed (a payload byte flipped, the UDP checksum
 * cleared so that the receiver's transport, not the kernel, must catch it),
 * TRUNCATEd (cut short, lengths fixed up) or DUPLICATEd (replayed right
 * behind the original). BLOCK-UDP drops every UDP datagram, as a firewall
 * that lets only TCP through does.
 *
 *   netsim --ns-a NAME --ns-b NAME [--dev NAME] [--delay-ms MS]
 *          [--jitter-ms MS] [--loss PERCENT] [--rate-mbit MBIT]
 *          [--buffer-kb KB] [--seed N] [--corrupt PERCENT]
 *          [--truncate PERCENT] [--duplicate PERCENT] [--block-udp 0|1]
 *
 * The namespaces are those of `ip netns add` (/run/netns/NAME); each gets a
 * TUN device called NAME (default rcsim), left down and without an address
 * for the caller to set up. "ready" on stdout says both exist. The link's
 * settings change while it runs: a line "set KEY VALUE" on stdin (keys as
 * the options, without the dashes). SIGUSR1 or stdin closing prints the
 * counts so far on stdout as one JSON line; SIGTERM or SIGINT prints them
 * and exits.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#define SLOTS 16384 /* packets in flight each way: 100 ms at 1 Gbit/s of 1500 */
#define PACKET_MAX 2048

struct packet {
	uint64_t deliver_ns;
	uint16_t size;
	uint8_t data[PACKET_MAX];
};

struct settings {
	double delay_ms, jitter_ms, loss, rate_mbit, buffer_kb;
	double corrupt, truncate, duplicate; /* percent of UDP datagrams */
	bool block_udp;
};

/* One direction: packets read from `from`, written to `to` when due. */
struct way {
	int from, to;
	struct packet *ring;
	uint32_t head, count;
	uint64_t link_free_ns; /* when the bottleneck has sent all it holds */
	uint64_t last_deliver_ns;
	uint64_t forwarded, bytes, lost, dropped, tampered;
};

static volatile sig_atomic_t report_wanted, stop_wanted;
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* xorshift64*: enough for loss and jitter, and the same for the same seed. */
static double random_unit(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return (double)((rng_state * 0x2545f4914f6cdd1dull) >> 11) / (double)(1ull << 53);
}

static int open_tun(const char *ns, const char *dev)
{
	char path[256];
	snprintf(path, sizeof(path), "/run/netns/%s", ns);
	int nsfd = open(path, O_RDONLY | O_CLOEXEC);
	if (nsfd < 0) {
		fprintf(stderr, "netsim: cannot open %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (setns(nsfd, CLONE_NEWNET) < 0) {
		fprintf(stderr, "netsim: cannot enter %s: %s\n", ns, strerror(errno));
		close(nsfd);
		return -1;
	}
	close(nsfd);
	/* The device belongs to the namespace it is made in, whatever this
	 * process enters later. */
	int fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		fprintf(stderr, "netsim: cannot open /dev/net/tun: %s\n", strerror(errno));
		return -1;
	}
	struct ifreq ifr = {0};
	ifr.ifr_flags = IFF_TUN | IFF_NO_PI;
	snprintf(ifr.ifr_name, IFNAMSIZ, "%s", dev);
	if (ioctl(fd, TUNSETIFF, &ifr) < 0) {
		fprintf(stderr, "netsim: cannot make %s in %s: %s\n", dev, ns, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

static void report(const struct way ways[2])
{
	for (int i = 0; i < 2; i++) {
		printf("%s\"%s\": {\"forwarded\": %llu, \"bytes\": %llu, \"lost\": %llu, "
		       "\"dropped\": %llu, \"tampered\": %llu}",
			i ? ", " : "{", i ? "b_to_a" : "a_to_b",
			(unsigned long long)ways[i].forwarded, (unsigned long long)ways[i].bytes,
			(unsigned long long)ways[i].lost, (unsigned long long)ways[i].dropped,
			(unsigned long long)ways[i].tampered);
	}
	printf("}\n");
	fflush(stdout);
}

/* A packet read from the way's source: lost, dropped at a full queue, or
 * queued with the time it arrives at the other end. */
/* The IPv4 header checksum, over its 16-bit words. */
static uint16_t ip_checksum(const uint8_t *h, size_t len)
{
	uint32_t sum = 0;
	for (size_t i = 0; i + 1 < len; i += 2) {
		sum += (uint32_t)(h[i] << 8 | h[i + 1]);
	}
	while (sum >> 16) {
		sum = (sum & 0xffff) + (sum >> 16);
	}
	return (uint16_t)~sum;
}

static bool chance(double percent)
{
	return percent > 0 && random_unit() * 100.0 < percent;
}

/* A UDP datagram in IPv4 altered as a hostile path would: a byte of its
 * payload flipped, or its payload cut short. The UDP checksum is cleared
 * (none, as IPv4 allows) so the kernel passes it on. */
static bool tamper(const struct settings *s, uint8_t *p, size_t *size)
{
	if (*size < 28 || (p[0] >> 4) != 4 || p[9] != 17) {
		return false;
	}
	size_t ihl = (size_t)(p[0] & 0xf) * 4;
	if (ihl < 20 || *size < ihl + 9) {
		return false;
	}
	size_t payload = *size - ihl - 8;
	bool changed = false;
	if (chance(s->corrupt) && payload > 0) {
		p[ihl + 8 + (size_t)(random_unit() * (double)payload)] ^= 0x5a;
		changed = true;
	}
	if (chance(s->truncate) && payload > 1) {
		size_t keep = 1 + (size_t)(random_unit() * (double)(payload - 1));
		*size = ihl + 8 + keep;
		p[2] = (uint8_t)(*size >> 8);
		p[3] = (uint8_t)*size;
		p[10] = p[11] = 0;
		uint16_t sum = ip_checksum(p, ihl);
		p[10] = (uint8_t)(sum >> 8);
		p[11] = (uint8_t)sum;
		p[ihl + 4] = (uint8_t)((8 + keep) >> 8);
		p[ihl + 5] = (uint8_t)(8 + keep);
		changed = true;
	}
	if (changed) {
		p[ihl + 6] = p[ihl + 7] = 0;
	}
	return changed;
}

static void enqueue(struct way *w, const uint8_t *data, size_t size, uint64_t deliver)
{
	if (w->count == SLOTS) {
		w->dropped++;
		return;
	}
	struct packet *p = &w->ring[(w->head + w->count) % SLOTS];
	p->deliver_ns = deliver;
	p->size = (uint16_t)size;
	memcpy(p->data, data, size);
	w->count++;
}

static void admit(struct way *w, const struct settings *s, const uint8_t *in, size_t size,
	uint64_t now)
{
	if (s->block_udp && size > 9 && (in[0] >> 4) == 4 && in[9] == 17) {
		w->dropped++;
		return;
	}
	if (chance(s->loss)) {
		w->lost++;
		return;
	}
	uint8_t data[PACKET_MAX];
	memcpy(data, in, size);
	if (tamper(s, data, &size)) {
		w->tampered++;
	}
	uint64_t start = w->link_free_ns > now ? w->link_free_ns : now;
	uint64_t serialize = 0;
	if (s->rate_mbit > 0) {
		/* What the bottleneck still has to send, in bytes, is its queue. */
		double backlog = (double)(start - now) * s->rate_mbit / 8e3;
		if (backlog + (double)size > s->buffer_kb * 1024.0) {
			w->dropped++;
			return;
		}
		serialize = (uint64_t)((double)size * 8e3 / s->rate_mbit);
	}
	if (w->count == SLOTS) {
		w->dropped++;
		return;
	}
	w->link_free_ns = start + serialize;
	double delay_ns = s->delay_ms * 1e6 + s->jitter_ms * 1e6 * random_unit();
	uint64_t deliver = w->link_free_ns + (uint64_t)delay_ns;
	if (deliver < w->last_deliver_ns) {
		deliver = w->last_deliver_ns; /* one path: no overtaking */
	}
	w->last_deliver_ns = deliver;
	enqueue(w, data, size, deliver);
	if ((data[0] >> 4) == 4 && size > 9 && data[9] == 17 && chance(s->duplicate)) {
		/* A replay: the same datagram again, right behind it. */
		w->tampered++;
		enqueue(w, data, size, deliver);
	}
}

static void deliver_due(struct way *w, uint64_t now)
{
	while (w->count > 0) {
		struct packet *p = &w->ring[w->head];
		if (p->deliver_ns > now) {
			return;
		}
		/* A full device queue at the far end loses the packet, as a
		 * receiver's would. */
		if (write(w->to, p->data, p->size) == (ssize_t)p->size) {
			w->forwarded++;
			w->bytes += p->size;
		} else {
			w->dropped++;
		}
		w->head = (w->head + 1) % SLOTS;
		w->count--;
	}
}

static bool set_option(struct settings *s, const char *key, const char *value)
{
	char *end;
	double v = strtod(value, &end);
	if (end == value || *end != '\0' || v < 0) {
		return false;
	}
	if (strcmp(key, "delay-ms") == 0) {
		s->delay_ms = v;
	} else if (strcmp(key, "jitter-ms") == 0) {
		s->jitter_ms = v;
	} else if (strcmp(key, "loss") == 0 && v <= 100) {
		s->loss = v;
	} else if (strcmp(key, "rate-mbit") == 0) {
		s->rate_mbit = v;
	} else if (strcmp(key, "buffer-kb") == 0 && v > 0) {
		s->buffer_kb = v;
	} else if (strcmp(key, "corrupt") == 0 && v <= 100) {
		s->corrupt = v;
	} else if (strcmp(key, "truncate") == 0 && v <= 100) {
		s->truncate = v;
	} else if (strcmp(key, "duplicate") == 0 && v <= 100) {
		s->duplicate = v;
	} else if (strcmp(key, "block-udp") == 0 && v <= 1) {
		s->block_udp = v > 0;
	} else if (strcmp(key, "seed") == 0) {
		rng_state = (uint64_t)v * 0x9e3779b97f4a7c15ull + 1;
	} else {
		return false;
	}
	return true;
}

/* "set KEY VALUE" lines from stdin; false once stdin has closed. */
static bool read_commands(struct settings *s, char *line, size_t *len, size_t size)
{
	ssize_t n = read(STDIN_FILENO, line + *len, size - 1 - *len);
	if (n <= 0) {
		return n < 0 && errno == EAGAIN;
	}
	*len += (size_t)n;
	line[*len] = '\0';
	char *nl;
	while ((nl = strchr(line, '\n'))) {
		*nl = '\0';
		char key[32], value[32];
		if (sscanf(line, "set %31s %31s", key, value) != 2 || !set_option(s, key, value)) {
			fprintf(stderr, "netsim: ignored \"%s\"\n", line);
		}
		size_t rest = *len - (size_t)(nl + 1 - line);
		memmove(line, nl + 1, rest);
		*len = rest;
		line[*len] = '\0';
	}
	if (*len == size - 1) {
		*len = 0; /* a line too long for any command */
	}
	return true;
}

static void on_signal(int sig)
{
	if (sig == SIGUSR1) {
		report_wanted = 1;
	} else {
		stop_wanted = 1;
	}
}

int main(int argc, char **argv)
{
	const char *ns[2] = {NULL, NULL}, *dev = "rcsim";
	struct settings s = {.buffer_kb = 256};
	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i];
		if (i + 1 >= argc) {
			fprintf(stderr, "netsim: %s needs a value\n", arg);
			return 2;
		}
		const char *value = argv[++i];
		if (strcmp(arg, "--ns-a") == 0) {
			ns[0] = value;
		} else if (strcmp(arg, "--ns-b") == 0) {
			ns[1] = value;
		} else if (strcmp(arg, "--dev") == 0) {
			dev = value;
		} else if (strncmp(arg, "--", 2) != 0 || !set_option(&s, arg + 2, value)) {
			fprintf(stderr, "netsim: bad option %s %s\n", arg, value);
			return 2;
		}
	}
	if (!ns[0] || !ns[1] || strlen(dev) >= IFNAMSIZ) {
		fprintf(stderr,
			"usage: netsim --ns-a NAME --ns-b NAME [--dev NAME] [--delay-ms MS] "
			"[--jitter-ms MS] [--loss PERCENT] [--rate-mbit MBIT] "
			"[--buffer-kb KB] [--seed N] [--corrupt PERCENT] [--truncate PERCENT] "
			"[--duplicate PERCENT] [--block-udp 0|1]\n");
		return 2;
	}
	int fds[2];
	for (int i = 0; i < 2; i++) {
		fds[i] = open_tun(ns[i], dev);
		if (fds[i] < 0) {
			return 1;
		}
	}
	struct way ways[2] = {
		{.from = fds[0], .to = fds[1], .ring = calloc(SLOTS, sizeof(struct packet))},
		{.from = fds[1], .to = fds[0], .ring = calloc(SLOTS, sizeof(struct packet))},
	};
	if (!ways[0].ring || !ways[1].ring) {
		fprintf(stderr, "netsim: out of memory\n");
		return 1;
	}
	struct sigaction sa = {.sa_handler = on_signal};
	sigaction(SIGUSR1, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	fcntl(STDIN_FILENO, F_SETFL, fcntl(STDIN_FILENO, F_GETFL) | O_NONBLOCK);
	printf("ready\n");
	fflush(stdout);

	char line[256];
	size_t line_len = 0;
	bool commands = true;
	uint8_t buf[PACKET_MAX];
	while (!stop_wanted) {
		uint64_t now = now_ns();
		uint64_t next = UINT64_MAX;
		for (int i = 0; i < 2; i++) {
			deliver_due(&ways[i], now);
			if (ways[i].count && ways[i].ring[ways[i].head].deliver_ns < next) {
				next = ways[i].ring[ways[i].head].deliver_ns;
			}
		}
		if (report_wanted) {
			report_wanted = 0;
			report(ways);
		}
		struct pollfd pfd[3] = {
			{.fd = fds[0], .events = POLLIN},
			{.fd = fds[1], .events = POLLIN},
			{.fd = commands ? STDIN_FILENO : -1, .events = POLLIN},
		};
		struct timespec timeout, *tp = NULL;
		if (next != UINT64_MAX) {
			uint64_t wait = next > now ? next - now : 0;
			timeout.tv_sec = (time_t)(wait / 1000000000ull);
			timeout.tv_nsec = (long)(wait % 1000000000ull);
			tp = &timeout;
		}
		if (ppoll(pfd, 3, tp, NULL) < 0) {
			if (errno == EINTR) {
				continue;
			}
			fprintf(stderr, "netsim: poll: %s\n", strerror(errno));
			return 1;
		}
		now = now_ns();
		for (int i = 0; i < 2; i++) {
			if (!(pfd[i].revents & POLLIN)) {
				continue;
			}
			/* A bounded batch, so one busy way cannot starve the other. */
			for (int n = 0; n < 64; n++) {
				ssize_t got = read(fds[i], buf, sizeof(buf));
				if (got <= 0) {
					break;
				}
				admit(&ways[i], &s, buf, (size_t)got, now);
			}
		}
		if (pfd[2].revents & (POLLIN | POLLHUP)) {
			commands = read_commands(&s, line, &line_len, sizeof(line));
			if (!commands) {
				report(ways);
			}
		}
	}
	report(ways);
	free(ways[0].ring);
	free(ways[1].ring);
	return 0;
}
