/*
 * Sessions: naming and recording this one, --list, --attach (a byte bridge
 * from stdio to a running session, which is what ssh runs to reattach),
 * --persist (a session that outlives its first ssh connection), and the
 * token that TCP viewers must present.
 */

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "server.h"
#include "session.h"

#define BRIDGE_BUFFER (256 * 1024)

void session_write_goodbye(int fd, enum wire_goodbye_reason reason, int status, const char *text)
{
	struct buffer out;
	buffer_init(&out, 4096);
	struct wire_msg msg = {
		.type = WIRE_GOODBYE,
		.goodbye = {.reason = reason,
			.status = status,
			.text_len = (uint32_t)strnlen(text, WIRE_MAX_TEXT),
			.text = text},
	};
	if (wire_encode(&out, &msg)) {
		/* Small and first on its stream: it fits the pipe or socket. */
		ssize_t n = write(fd, buffer_head(&out), buffer_size(&out));
		(void)n;
	}
	buffer_finish(&out);
}

int session_main_list(void)
{
	char dir[SESSION_PATH_MAX];
	struct session_info infos[256];
	if (!session_dir(dir, sizeof(dir), false)) {
		return 1;
	}
	int n = session_list(dir, infos, 256);
	if (n < 0) {
		log_error("cannot read %s: %s", dir, strerror(errno));
		return 1;
	}
	if (n == 0) {
		printf("no sessions\n");
		return 0;
	}
	printf("%-16s %8s  %-19s  %-8s  %s\n", "SESSION", "PID", "STARTED", "VIEWER", "APP");
	for (int i = 0; i < n; i++) {
		char when[32] = "?";
		time_t t = (time_t)infos[i].started;
		struct tm tm;
		if (localtime_r(&t, &tm)) {
			strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
		}
		printf("%-16s %8ld  %-19s  %-8s  %s\n", infos[i].name, (long)infos[i].pid, when,
			infos[i].attached ? "attached" : "detached", infos[i].app);
	}
	return 0;
}

/* Copies bytes both ways between stdin/stdout and sock until either side
 * ends. Each direction holds at most BRIDGE_BUFFER bytes. */
static int bridge(int sock)
{
	static uint8_t up[BRIDGE_BUFFER], down[BRIDGE_BUFFER];
	size_t up_len = 0, down_len = 0;
	bool stdin_open = true, sock_open = true;
	bool got_bytes = false;
	fcntl(sock, F_SETFL, fcntl(sock, F_GETFL) | O_NONBLOCK);
	while (sock_open || down_len > 0) {
		struct pollfd fds[3] = {
			{.fd = stdin_open && up_len < sizeof(up) ? STDIN_FILENO : -1,
				.events = POLLIN},
			{.fd = sock,
				.events = (sock_open && down_len < sizeof(down) ? POLLIN : 0) |
					(up_len > 0 ? POLLOUT : 0)},
			{.fd = down_len > 0 ? STDOUT_FILENO : -1, .events = POLLOUT},
		};
		if (poll(fds, 3, -1) < 0) {
			if (errno == EINTR) {
				continue;
			}
			return 1;
		}
		if (fds[0].revents) {
			ssize_t n = read(STDIN_FILENO, up + up_len, sizeof(up) - up_len);
			if (n > 0) {
				up_len += (size_t)n;
			} else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
				/* The viewer's side is gone: so is this viewer. */
				stdin_open = false;
				if (up_len == 0) {
					shutdown(sock, SHUT_WR);
				}
			}
		}
		if (fds[1].revents & POLLOUT && up_len > 0) {
			ssize_t n = write(sock, up, up_len);
			if (n > 0) {
				memmove(up, up + n, up_len - (size_t)n);
				up_len -= (size_t)n;
				if (up_len == 0 && !stdin_open) {
					shutdown(sock, SHUT_WR);
				}
			} else if (n < 0 && errno != EAGAIN && errno != EINTR) {
				sock_open = false;
			}
		}
		if (fds[1].revents & (POLLIN | POLLHUP | POLLERR) && sock_open &&
			down_len < sizeof(down)) {
			ssize_t n = read(sock, down + down_len, sizeof(down) - down_len);
			if (n > 0) {
				down_len += (size_t)n;
				got_bytes = true;
			} else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
				sock_open = false;
			}
		}
		if (fds[2].revents) {
			ssize_t n = write(STDOUT_FILENO, down, down_len);
			if (n > 0) {
				memmove(down, down + n, down_len - (size_t)n);
				down_len -= (size_t)n;
			} else if (n < 0 && errno != EAGAIN && errno != EINTR) {
				return 0; /* the viewer is gone */
			}
		}
	}
	return got_bytes ? 0 : 1;
}

static int connect_session(const char *dir, const char *name)
{
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	if (!session_path(addr.sun_path, sizeof(addr.sun_path), dir, name, "sock")) {
		return -1;
	}
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0) {
		close(fd);
		fd = -1;
	}
	return fd;
}

int session_main_attach(const char *name)
{
	char dir[SESSION_PATH_MAX], text[WIRE_MAX_TEXT];
	struct session_info infos[256];
	int n = session_dir(dir, sizeof(dir), false) ? session_list(dir, infos, 256) : -1;
	const char *chosen = NULL;
	if (n < 0) {
		snprintf(text, sizeof(text), "cannot read the session directory");
	} else {
		int i = session_choose(infos, n, name, text, sizeof(text));
		chosen = i >= 0 ? infos[i].name : NULL;
	}
	int sock = chosen ? connect_session(dir, chosen) : -1;
	if (chosen && sock < 0) {
		snprintf(text, sizeof(text), "session %s does not answer: %s", chosen,
			strerror(errno));
	}
	if (sock < 0) {
		log_error("%s", text);
		session_write_goodbye(STDOUT_FILENO, WIRE_BYE_NO_SESSION, 1, text);
		return 1;
	}
	log_debug("attached to session %s", chosen);
	int status = bridge(sock);
	close(sock);
	return status;
}

/* The command line for --list, shortened to fit. */
static void describe_app(char *out, size_t size, char **argv)
{
	size_t len = 0;
	out[0] = '\0';
	for (int i = 0; argv[i] && len + 1 < size; i++) {
		int n = snprintf(out + len, size - len, "%s%s", i ? " " : "", argv[i]);
		if (n < 0) {
			break;
		}
		len += (size_t)n;
	}
	for (char *p = out; *p; p++) {
		if (*p == '\n' || *p == '\r') {
			*p = ' ';
		}
	}
}

static bool read_token_file(struct rc_server *server, const char *path)
{
	if (!session_read_token(path, server->token, &server->token_len)) {
		return false;
	}
	if (server->token_len < 16) {
		log_error("the token in %s is shorter than 16 characters", path);
		return false;
	}
	return true;
}

/* A new random token, written to DIR/NAME.token with mode 0600. */
static bool make_token(struct rc_server *server)
{
	uint8_t random[32];
	if (getrandom(random, sizeof(random), 0) != (ssize_t)sizeof(random)) {
		log_error("cannot get random bytes for a token: %s", strerror(errno));
		return false;
	}
	for (size_t i = 0; i < sizeof(random); i++) {
		snprintf(server->token + 2 * i, 3, "%02x", random[i]);
	}
	server->token_len = 2 * sizeof(random);
	char path[SESSION_PATH_MAX];
	if (!session_path(path, sizeof(path), server->session_dir, server->session_name, "token")) {
		return false;
	}
	unlink(path);
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0) {
		log_error("cannot write the token file %s: %s", path, strerror(errno));
		return false;
	}
	char line[WIRE_MAX_TOKEN + 2];
	int len = snprintf(line, sizeof(line), "%s\n", server->token);
	bool ok = write(fd, line, (size_t)len) == len;
	close(fd);
	if (ok) {
		log_info("viewers on TCP must give the token in %s (mode 0600)", path);
	}
	return ok;
}

bool session_check_token(const struct rc_server *server, const char *token, size_t len)
{
	/* Constant time in the token's content. */
	uint8_t diff = len != server->token_len;
	for (size_t i = 0; i < server->token_len; i++) {
		diff |= (uint8_t)(server->token[i] ^ (i < len ? token[i] : 0));
	}
	return server->token_len > 0 && diff == 0;
}

/* Whether a session NAME runs (among the n listed) or its socket path is in
 * use by anything else. */
static bool name_taken(const char *dir, const struct session_info *infos, int n, const char *name)
{
	for (int i = 0; i < n; i++) {
		if (strcmp(infos[i].name, name) == 0) {
			return true;
		}
	}
	char path[SESSION_PATH_MAX];
	struct stat st;
	return !session_path(path, sizeof(path), dir, name, "sock") || lstat(path, &st) == 0;
}

void session_update(struct rc_server *server)
{
	if (!server->session_dir[0]) {
		return;
	}
	struct session_info info = {
		.pid = getpid(),
		.started = server->started,
		.attached = server->viewer != NULL,
	};
	snprintf(info.name, sizeof(info.name), "%s", server->session_name);
	snprintf(info.app, sizeof(info.app), "%s", server->app_desc);
	if (!session_write_info(server->session_dir, &info)) {
		log_error("cannot record session %s in %s", server->session_name,
			server->session_dir);
	}
}

bool session_prepare(struct rc_server *server, char **app)
{
	uint8_t id[8];
	if (getrandom(id, sizeof(id), 0) != (ssize_t)sizeof(id)) {
		log_error("cannot get random bytes: %s", strerror(errno));
		return false;
	}
	memcpy(&server->session_id, id, sizeof(id));
	server->started = (int64_t)time(NULL);
	describe_app(server->app_desc, sizeof(server->app_desc), app);
	if (server->stdio && !server->persist) {
		/* Tied to its one viewer: nothing to list or attach to. */
		snprintf(server->session_name, sizeof(server->session_name), "stdio-%ld",
			(long)getpid());
		return true;
	}
	if (!session_dir(server->session_dir, sizeof(server->session_dir), true)) {
		server->session_dir[0] = '\0';
		return false;
	}
	/* Listing first also clears the records of sessions that died. */
	struct session_info infos[256];
	int n = session_list(server->session_dir, infos, 256);
	if (server->name) {
		if (name_taken(server->session_dir, infos, n, server->name)) {
			log_error("a session named %s is running already (rcomp-run --list)",
				server->name);
			return false;
		}
		snprintf(server->session_name, sizeof(server->session_name), "%s", server->name);
	} else {
		int i = 0;
		do {
			snprintf(server->session_name, sizeof(server->session_name), "%d", i);
		} while (name_taken(server->session_dir, infos, n, server->session_name) &&
			++i < 1000);
	}
	if (server->tcp_addr) {
		if (server->token_file ? !read_token_file(server, server->token_file)
				       : !make_token(server)) {
			return false;
		}
	}
	session_update(server);
	return true;
}

void session_finish(struct rc_server *server)
{
	if (server->session_dir[0] && server->session_name[0]) {
		session_remove(server->session_dir, server->session_name);
	}
}

/*
 * --persist: the session becomes a daemon and this process a bridge from
 * stdio to it, so that the session outlives the ssh connection that started
 * it. Returns in the daemon (with *ready to write the name to once it
 * listens); the bridge exits here.
 */
bool session_daemonize(struct rc_server *server, int *ready)
{
	int fds[2];
	if (pipe2(fds, O_CLOEXEC) < 0) {
		log_error("cannot create a pipe: %s", strerror(errno));
		return false;
	}
	pid_t pid = fork();
	if (pid < 0) {
		log_error("cannot fork: %s", strerror(errno));
		return false;
	}
	if (pid > 0) {
		close(fds[1]);
		char name[WIRE_MAX_SESSION_NAME + 2] = "";
		size_t len = 0;
		ssize_t n;
		while (len < sizeof(name) - 1 &&
			(n = read(fds[0], name + len, sizeof(name) - 1 - len)) != 0) {
			if (n < 0 && errno == EINTR) {
				continue;
			}
			if (n < 0) {
				break;
			}
			len += (size_t)n;
		}
		close(fds[0]);
		name[len] = '\0';
		int sock = len ? connect_session(server->session_dir, name) : -1;
		if (sock < 0) {
			char text[256];
			snprintf(text, sizeof(text), "the session did not start; see %s/%s.log",
				server->session_dir, server->session_name);
			log_error("%s", text);
			session_write_goodbye(STDOUT_FILENO, WIRE_BYE_SHUTDOWN, 1, text);
			exit(1);
		}
		exit(bridge(sock));
	}
	close(fds[0]);
	setsid();
	char path[SESSION_PATH_MAX];
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	int logfd =
		session_path(path, sizeof(path), server->session_dir, server->session_name, "log")
		? open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600)
		: -1;
	if (null >= 0) {
		dup2(null, STDIN_FILENO);
		dup2(null, STDOUT_FILENO);
		close(null);
	}
	if (logfd >= 0) {
		dup2(logfd, STDERR_FILENO);
		close(logfd);
	}
	server->stdio = false;
	*ready = fds[1];
	session_update(server); /* our pid */
	return true;
}
