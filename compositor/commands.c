/*
 * The commands that reach a running session from outside it: rcomp-run
 * --list, --stop, and --attach, a byte bridge from stdin/stdout to the
 * session's socket (what ssh runs to reattach). --persist uses the same
 * bridge: the session goes to the background and the process ssh started
 * bridges to it.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "commands.h"
#include "channel.h"
#include "log.h"
#include "procs.h"
#include "record.h"
#include "status.h"

#define BRIDGE_BUFFER (256 * 1024)

int command_list(void)
{
	return session_print_list(stdout) ? 0 : 1;
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

int command_attach(const char *name)
{
	char text[WIRE_MAX_TEXT];
	static struct session_info infos[256];
	int n = session_list(infos, 256);
	const struct session_info *chosen = NULL;
	int status = RC_EXIT_FAILURE;
	if (n < 0) {
		snprintf(text, sizeof(text), "cannot read the session directory");
	} else {
		int i = session_choose(infos, n, name, "--attach", text, sizeof(text));
		chosen = i >= 0 ? &infos[i] : NULL;
		status = i >= 0 ? RC_EXIT_FAILURE : -i;
	}
	if (isatty(STDOUT_FILENO)) {
		/* The session's stream is for a viewer, never for a terminal. */
		if (!chosen) {
			log_error("%s", text);
			return status;
		}
		log_error("--attach connects a viewer on stdin and stdout to a session (what "
			  "rcomp-view ssh runs); in a terminal, attach with rcomp-view --attach %s",
			chosen->name);
		return RC_EXIT_USAGE;
	}
	int sock = chosen ? connect_session(chosen->dir, chosen->name) : -1;
	if (chosen && sock < 0) {
		snprintf(text, sizeof(text), "session %s does not answer: %s", chosen->name,
			strerror(errno));
	}
	if (sock < 0) {
		/* The viewer at the other end of ssh exits with the same status. */
		log_error("%s", text);
		channel_write_goodbye(STDOUT_FILENO, WIRE_BYE_NO_SESSION, status, text);
		return status;
	}
	log_debug("attached to session %s", chosen->name);
	status = bridge(sock);
	close(sock);
	return status;
}

/* How long --stop waits for the session to end: its apps' grace, and then
 * some. */
#define STOP_WAIT_MS 20000

int command_stop(const char *name)
{
	char text[WIRE_MAX_TEXT];
	static struct session_info infos[256];
	int n = session_list(infos, 256);
	if (n < 0) {
		log_error("cannot read the session directory");
		return RC_EXIT_FAILURE;
	}
	if (!name && n > 1) {
		/* Not the only detached one, as --attach takes: a session to
		 * end is named, or the only one. */
		size_t len = (size_t)snprintf(text, sizeof(text), "%d sessions are running (", n);
		for (int k = 0; k < n && len < sizeof(text); k++) {
			len += (size_t)snprintf(text + len, sizeof(text) - len, "%s%s",
				k ? ", " : "", infos[k].name);
		}
		log_error("%s): name the one to end with --stop NAME", text);
		return RC_EXIT_SEVERAL;
	}
	int i = session_choose(infos, n, name, "--stop", text, sizeof(text));
	if (i < 0) {
		log_error("%s", text);
		return -i;
	}
	const struct session_info *chosen = &infos[i];
	int sock = connect_session(chosen->dir, chosen->name);
	if (sock < 0) {
		log_error("session %s does not answer: %s", chosen->name, strerror(errno));
		return RC_EXIT_FAILURE;
	}
	/* Share and watch too: a server older than --stop takes it for a
	 * watcher, and answers with a welcome. */
	struct wire_msg hello = {.type = WIRE_HELLO,
		.hello = {.magic = WIRE_MAGIC,
			.major = WIRE_VERSION_MAJOR,
			.minor = WIRE_VERSION_MINOR,
			.flags = WIRE_HELLO_STOP | WIRE_HELLO_SHARE | WIRE_HELLO_VIEW_ONLY}};
	channel_write_once(sock, &hello);
	/* The answer comes once the session has ended: its first message. */
	struct buffer in;
	buffer_init(&in, WIRE_HEADER_SIZE + WIRE_MAX_BODY);
	struct wire_msg msg = {0};
	enum wire_status status = WIRE_INCOMPLETE;
	for (;;) {
		struct pollfd pfd = {.fd = sock, .events = POLLIN};
		if (poll(&pfd, 1, STOP_WAIT_MS) <= 0) {
			break;
		}
		uint8_t *dst = buffer_reserve(&in, 4096);
		ssize_t got = dst ? read(sock, dst, 4096) : -1;
		if (got <= 0) {
			break;
		}
		buffer_commit(&in, (size_t)got);
		size_t used;
		status = wire_decode(WIRE_FROM_SERVER, buffer_head(&in), buffer_size(&in), &msg,
			&used, text, sizeof(text));
		if (status != WIRE_INCOMPLETE) {
			break;
		}
	}
	close(sock);
	int result = RC_EXIT_FAILURE;
	if (status == WIRE_OK && msg.type == WIRE_GOODBYE &&
		msg.goodbye.reason == WIRE_BYE_SHUTDOWN) {
		/* "the session has ended", and what that took (what it had
		 * to kill), from the session. */
		static const char said[] = "the session has ended";
		log_escape(text, sizeof(text), msg.goodbye.text, msg.goodbye.text_len);
		const char *more =
			strncmp(text, said, strlen(said)) == 0 ? text + strlen(said) : "";
		printf("session %s has ended%s\n", chosen->name, more);
		result = 0;
	} else if (status == WIRE_OK && msg.type == WIRE_WELCOME) {
		log_error("session %s is run by an older rcomp-run that cannot be stopped this "
			  "way: "
			  "end it with kill %ld",
			chosen->name, (long)chosen->pid);
	} else if (status == WIRE_OK && msg.type == WIRE_GOODBYE) {
		log_escape(text, sizeof(text), msg.goodbye.text, msg.goodbye.text_len);
		log_error("session %s refused to stop: %s", chosen->name, text);
	} else {
		log_error("session %s did not say it ended within %d s", chosen->name,
			STOP_WAIT_MS / 1000);
	}
	buffer_finish(&in);
	return result;
}

/* A send_files on the session's socket (sock, closed here), and its
 * answer: 0 each arrived whole, 1 not, 2 no viewer takes files, 3 the
 * session said nothing (text: why, in each case). */
static int send_to_session(int sock, const char *name, uint32_t to, uint32_t kind,
	const char *paths, size_t len, char *text, size_t text_size)
{
	struct wire_msg hello = {.type = WIRE_HELLO,
		.hello = {.magic = WIRE_MAGIC,
			.major = WIRE_VERSION_MAJOR,
			.minor = WIRE_VERSION_MINOR,
			.flags = WIRE_HELLO_SEND | WIRE_HELLO_SHARE | WIRE_HELLO_VIEW_ONLY}};
	channel_write_once(sock, &hello);
	struct wire_msg request = {.type = WIRE_SEND_FILES,
		.send_files = {.to = to, .kind = kind, .paths = paths, .paths_len = (uint32_t)len}};
	channel_write_once(sock, &request);
	/* The answer comes once every viewer has them, or gave up. */
	struct buffer in;
	buffer_init(&in, WIRE_HEADER_SIZE + WIRE_MAX_BODY);
	struct wire_msg msg = {0};
	enum wire_status status = WIRE_INCOMPLETE;
	for (;;) {
		uint8_t *dst = buffer_reserve(&in, 4096);
		ssize_t got = dst ? read(sock, dst, 4096) : -1;
		if (got < 0 && errno == EINTR) {
			continue;
		}
		if (got <= 0) {
			break;
		}
		buffer_commit(&in, (size_t)got);
		size_t used;
		status = wire_decode(WIRE_FROM_SERVER, buffer_head(&in), buffer_size(&in), &msg,
			&used, text, text_size);
		if (status != WIRE_INCOMPLETE) {
			break;
		}
	}
	close(sock);
	int result = 3;
	if (status == WIRE_OK && msg.type == WIRE_GOODBYE) {
		log_escape(text, text_size, msg.goodbye.text, msg.goodbye.text_len);
		result = msg.goodbye.reason == WIRE_BYE_SHUTDOWN && msg.goodbye.status >= 0 &&
				msg.goodbye.status <= 2
			? msg.goodbye.status
			: 1;
	} else if (status == WIRE_OK && msg.type == WIRE_WELCOME) {
		snprintf(text, text_size,
			"session %s is run by an older rcomp-run, which sends no "
			"files",
			name);
	} else {
		snprintf(text, text_size, "session %s ended before it said how the files went",
			name);
	}
	buffer_finish(&in);
	return result;
}

int command_send(const char *name, uint32_t to, char **files, int n)
{
	char text[WIRE_MAX_TEXT + 1];
	static struct session_info infos[256];
	int count = session_list(infos, 256);
	if (count < 0) {
		log_error("cannot read the session directory");
		return RC_EXIT_FAILURE;
	}
	int i = session_choose(infos, count, name, "--send", text, sizeof(text));
	if (i < 0) {
		log_error("%s", text);
		return -i;
	}
	/* The paths as the session finds them: absolute, each ended by a NUL. */
	static char paths[WIRE_MAX_SEND_PATHS];
	size_t len = 0;
	for (int k = 0; k < n; k++) {
		char *real = realpath(files[k], NULL);
		if (!real) {
			log_error("cannot send %s: %s", files[k], strerror(errno));
			return RC_EXIT_FAILURE;
		}
		size_t l = strlen(real) + 1;
		if (len + l > sizeof(paths)) {
			free(real);
			log_error("too many files at once: send fewer, or their folder");
			return RC_EXIT_FAILURE;
		}
		memcpy(paths + len, real, l);
		len += l;
		free(real);
	}
	const struct session_info *chosen = &infos[i];
	int sock = connect_session(chosen->dir, chosen->name);
	if (sock < 0) {
		log_error("session %s does not answer: %s", chosen->name, strerror(errno));
		return RC_EXIT_FAILURE;
	}
	int said = send_to_session(sock, chosen->name, to, WIRE_FILES_SEND, paths, len, text,
		sizeof(text));
	if (said == 0) {
		printf("sent: %s\n", text);
		return 0;
	}
	if (said == 3) {
		log_error("%s", text);
	} else {
		log_error("the files were not sent: %s", text);
	}
	return RC_EXIT_FAILURE;
}

/* CUPS's backend exit statuses (cups/backend.h). */
enum {
	CUPS_BACKEND_OK = 0,
	CUPS_BACKEND_FAILED = 1,
	CUPS_BACKEND_CANCEL = 5,
	CUPS_BACKEND_RETRY = 6,
};

/* A name for the print's PDF from the job's title: what the person sees. */
static void print_name(char *out, size_t size, const char *title, const char *job)
{
	char clean[200];
	size_t n = 0;
	const char *base = strrchr(title, '/');
	base = base && base[1] ? base + 1 : title;
	for (const char *p = base; *p && n + 1 < sizeof(clean); p++) {
		unsigned char c = (unsigned char)*p;
		clean[n++] = c < 0x20 || c == 0x7f || c == '/' || c == '\\' ? '_' : (char)c;
	}
	clean[n] = '\0';
	while (n > 0 && (clean[n - 1] == ' ' || clean[n - 1] == '.')) {
		clean[--n] = '\0';
	}
	char *start = clean;
	while (*start == '.' || *start == ' ') {
		start++;
	}
	if (!*start) {
		snprintf(out, size, "print-%s.pdf", job);
		return;
	}
	size_t len = strlen(start);
	bool pdf = len > 4 && strcasecmp(start + len - 4, ".pdf") == 0;
	snprintf(out, size, "%s%s", start, pdf ? "" : ".pdf");
}

int command_cups_backend(int argc, char **argv)
{
	if (argc == 0) {
		/* Asked what it finds: our one printer. */
		printf("direct rcomp \"Unknown\" \"rcomp: the viewer's printer\"\n");
		return CUPS_BACKEND_OK;
	}
	if (argc != 5 && argc != 6) {
		fprintf(stderr, "Usage: rcomp job-id user title copies options [file]\n");
		return CUPS_BACKEND_FAILED;
	}
	const char *job = argv[0], *title = argv[2];
	const char *uri = getenv("DEVICE_URI");
	if (!uri || strncmp(uri, "rcomp:/", 7) != 0) {
		fprintf(stderr, "ERROR: the printer's device is not rcomp:SESSION-SOCKET\n");
		return CUPS_BACKEND_FAILED;
	}
	const char *socket_path = uri + 6;
	/* The PDF, under a name from its title, in a folder of the job's own. */
	const char *tmp = getenv("TMPDIR");
	char dir[512], path[768], name[256];
	snprintf(dir, sizeof(dir), "%s/rcomp-print-%s", tmp && *tmp ? tmp : "/tmp", job);
	print_name(name, sizeof(name), title, job);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
		fprintf(stderr, "ERROR: cannot make %s: %s\n", dir, strerror(errno));
		return CUPS_BACKEND_FAILED;
	}
	int in = argc == 6 ? open(argv[5], O_RDONLY | O_CLOEXEC) : STDIN_FILENO;
	int out = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	bool copied = in >= 0 && out >= 0;
	char buf[65536];
	for (ssize_t got; copied && (got = read(in, buf, sizeof(buf))) != 0;) {
		if (got < 0 && errno == EINTR) {
			continue;
		}
		copied = got > 0 && write(out, buf, (size_t)got) == got;
	}
	if (out >= 0 && close(out) < 0) {
		copied = false;
	}
	if (in > STDIN_FILENO) {
		close(in);
	}
	int result = CUPS_BACKEND_FAILED;
	char text[WIRE_MAX_TEXT + 1];
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	int sock = -1;
	if (!copied) {
		fprintf(stderr, "ERROR: cannot write the print to %s: %s\n", path, strerror(errno));
	} else if (snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", socket_path) >=
			(int)sizeof(addr.sun_path) ||
		(sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0 ||
		connect(sock, (struct sockaddr *)&addr, sizeof(addr)) < 0) {
		fprintf(stderr, "ERROR: the session does not answer at %s: %s\n", socket_path,
			strerror(errno));
		if (sock >= 0) {
			close(sock);
		}
		result = CUPS_BACKEND_RETRY;
	} else {
		int said = send_to_session(sock, "of this printer", 0, WIRE_FILES_PRINT, path,
			strlen(path) + 1, text, sizeof(text));
		if (said == 0) {
			fprintf(stderr, "INFO: printed on the viewer's side: %s\n", text);
			result = CUPS_BACKEND_OK;
		} else if (said == 2) {
			/* Held: CUPS tries again while no one is attached. */
			fprintf(stderr, "INFO: waiting for a viewer to attach\n");
			result = CUPS_BACKEND_RETRY;
		} else {
			fprintf(stderr, "ERROR: the viewer did not take the print: %s\n", text);
			result = CUPS_BACKEND_CANCEL;
		}
	}
	unlink(path);
	rmdir(dir);
	return result;
}

/*
 * --persist: the session becomes a daemon and this process a bridge from
 * stdio to it, so that the session outlives the ssh connection that started
 * it. Returns in the daemon (with *ready to write the name to once it
 * listens); the bridge exits here.
 */
bool command_persist(struct rc_server *server, int *ready)
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
		char name[SESSION_NAME_MAX + 2] = "";
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
		int sock = len ? connect_session(server->record.dir, name) : -1;
		if (sock < 0) {
			char text[256];
			snprintf(text, sizeof(text), "the session did not start; see %s/%s.log",
				server->record.dir, server->record.name);
			log_error("%s", text);
			channel_write_goodbye(STDOUT_FILENO, WIRE_BYE_SHUTDOWN, 1, text);
			exit(1);
		}
		exit(bridge(sock));
	}
	close(fds[0]);
	setsid();
	char path[SESSION_PATH_MAX];
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	int logfd = session_path(path, sizeof(path), server->record.dir, server->record.name, "log")
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
	server->options.stdio = false;
	*ready = fds[1];
	record_update(server); /* our pid */
	return true;
}
