#include <dirent.h>
#include <errno.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <limits.h>
#include <netinet/in.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "address.h"
#include "apps.h"
#include "check.h"
#include "config.h"
#include "listen.h"
#include "web.h"

/* One line of --check-config's: "rcomp-gate: " and kind ("" for a
 * problem, "warning: "), then the text. */
static void say(const char *kind, const char *fmt, va_list args)
{
	printf("rcomp-gate: %s", kind);
	vprintf(fmt, args);
	printf("\n");
}

/* A problem: said, and counted (returns 1). */
static int problem(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int problem(const char *fmt, ...)
{
	va_list args;
	va_start(args, fmt);
	say("", fmt, args);
	va_end(args);
	return 1;
}

static void warning(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void warning(const char *fmt, ...)
{
	va_list args;
	va_start(args, fmt);
	say("warning: ", fmt, args);
	va_end(args);
}

/* A PEM file that gnutls can read as what it should be: NULL, or why not. */
static const char *not_a(const char *path, bool key)
{
	gnutls_datum_t pem = {0};
	int r = gnutls_load_file(path, &pem);
	if (r >= 0 && key) {
		gnutls_x509_privkey_t k;
		if ((r = gnutls_x509_privkey_init(&k)) >= 0) {
			r = gnutls_x509_privkey_import2(k, &pem, GNUTLS_X509_FMT_PEM, NULL, 0);
			gnutls_x509_privkey_deinit(k);
		}
	} else if (r >= 0) {
		gnutls_x509_crt_t crt;
		if ((r = gnutls_x509_crt_init(&crt)) >= 0) {
			r = gnutls_x509_crt_import(crt, &pem, GNUTLS_X509_FMT_PEM);
			gnutls_x509_crt_deinit(crt);
		}
	}
	gnutls_free(pem.data);
	return r < 0 ? gnutls_strerror(r) : NULL;
}

/* The certificate and key: readable, each what it says, a pair, in date. */
static int check_tls(const struct gate_config *c)
{
	if (!c->cert[0]) {
		return 0;
	}
	int problems = 0;
	for (const char *f = c->cert; f; f = f == c->cert ? c->key : NULL) {
		const char *why;
		if (access(f, R_OK) != 0) {
			problems += problem("cannot read %s: %s", f, strerror(errno));
		} else if ((why = not_a(f, f == c->key))) {
			problems += problem("%s = %s is not %s (PEM): %s",
				f == c->key ? "key" : "cert", f,
				f == c->key ? "a private key, unencrypted" : "a certificate", why);
		}
	}
	if (problems) {
		return problems;
	}
	gnutls_certificate_credentials_t cred;
	if (gnutls_certificate_allocate_credentials(&cred) < 0) {
		return problem("cannot check the certificate: out of memory");
	}
	int r = gnutls_certificate_set_x509_key_file(cred, c->cert, c->key, GNUTLS_X509_FMT_PEM);
	gnutls_certificate_free_credentials(cred);
	if (r < 0) {
		return problem("the certificate %s and the key %s do not make a pair: %s", c->cert,
			c->key, gnutls_strerror(r));
	}
	gnutls_datum_t pem = {0};
	gnutls_x509_crt_t crt = NULL;
	if (gnutls_load_file(c->cert, &pem) >= 0 && gnutls_x509_crt_init(&crt) >= 0 &&
		gnutls_x509_crt_import(crt, &pem, GNUTLS_X509_FMT_PEM) >= 0) {
		time_t now = time(NULL);
		time_t until = gnutls_x509_crt_get_expiration_time(crt);
		time_t from = gnutls_x509_crt_get_activation_time(crt);
		char when[64];
		if (until != (time_t)-1 && until < now) {
			strftime(when, sizeof(when), "%Y-%m-%d", gmtime(&until));
			problems += problem("the certificate %s expired on %s", c->cert, when);
		} else if (from != (time_t)-1 && from > now) {
			strftime(when, sizeof(when), "%Y-%m-%d", gmtime(&from));
			problems +=
				problem("the certificate %s is not valid before %s", c->cert, when);
		}
	}
	if (crt) {
		gnutls_x509_crt_deinit(crt);
	}
	gnutls_free(pem.data);
	struct stat st;
	if (stat(c->key, &st) == 0 && (st.st_mode & 077) && st.st_uid == 0 && (st.st_mode & 004)) {
		problems += problem("the key %s may be read by anyone (mode o+r): make it 0600 or "
				    "0640",
			c->key);
	}
	return problems;
}

/* The inode of a listening TCP socket on port, from /proc/net/tcp or
 * tcp6; 0 where none is found. */
static unsigned long listening_inode(int port)
{
	for (const char *table = "/proc/net/tcp"; table;
		table = strcmp(table, "/proc/net/tcp") == 0 ? "/proc/net/tcp6" : NULL) {
		FILE *f = fopen(table, "r");
		char line[512];
		while (f && fgets(line, sizeof(line), f)) {
			char local[128];
			unsigned state;
			unsigned long inode;
			if (sscanf(line, " %*d: %127s %*s %x %*s %*s %*s %*d %*d %lu", local,
				    &state, &inode) == 3 &&
				state == 0x0A) {
				const char *colon = strrchr(local, ':');
				if (colon && strtol(colon + 1, NULL, 16) == port) {
					fclose(f);
					return inode;
				}
			}
		}
		if (f) {
			fclose(f);
		}
	}
	return 0;
}

/* The process that holds socket inode: its pid (0: not found) and name. */
static pid_t holder(unsigned long inode, char *name, size_t size)
{
	char want[64];
	snprintf(want, sizeof(want), "socket:[%lu]", inode);
	DIR *proc = opendir("/proc");
	struct dirent *e;
	pid_t found = 0;
	while (proc && !found && (e = readdir(proc))) {
		pid_t pid = (pid_t)atoi(e->d_name);
		char path[PATH_MAX];
		snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
		DIR *fds = pid > 0 ? opendir(path) : NULL;
		struct dirent *fd;
		while (fds && !found && (fd = readdir(fds))) {
			char link[PATH_MAX], target[64];
			snprintf(link, sizeof(link), "/proc/%d/fd/%s", (int)pid, fd->d_name);
			ssize_t n = readlink(link, target, sizeof(target) - 1);
			if (n > 0) {
				target[n] = '\0';
				found = strcmp(target, want) == 0 ? pid : 0;
			}
		}
		if (fds) {
			closedir(fds);
		}
	}
	if (proc) {
		closedir(proc);
	}
	snprintf(name, size, "?");
	if (found) {
		char path[64];
		snprintf(path, sizeof(path), "/proc/%d/comm", (int)found);
		FILE *f = fopen(path, "r");
		if (f && fgets(name, (int)size, f)) {
			name[strcspn(name, "\n")] = '\0';
		}
		if (f) {
			fclose(f);
		}
	}
	return found;
}

/* The listen address, bound and let go as the gate will bind it. In use by
 * the gate itself (a running one, or systemd holding rcomp-gate.socket) is
 * as it should be; in use by another program is a problem. */
static int check_listen(const struct gate_config *c)
{
	char host[128], why[256];
	int p, bind_errno;
	if (!address_listen(c->listen, host, sizeof(host), &p)) {
		return 0; /* said as the file was read */
	}
	int fd = listen_bind(c, &bind_errno, why, sizeof(why));
	if (fd >= 0) {
		close(fd);
		return 0;
	}
	if (!bind_errno) {
		return problem("%s", why);
	}
	if (bind_errno == EADDRINUSE) {
		char name[64];
		pid_t pid = holder(listening_inode(p), name, sizeof(name));
		if (pid == 1 || strncmp(name, "rcomp-gate", 10) == 0) {
			printf("rcomp-gate: listen = %s is held by %s (pid %d): the gate's own%s\n",
				c->listen, name, (int)pid,
				pid == 1 ? " socket unit, rcomp-gate.socket" : "");
			return 0;
		}
		if (pid > 0) {
			return problem("listen = %s is in use by %s (pid %d): the gate cannot "
				       "listen there",
				c->listen, name, (int)pid);
		}
		return problem("listen = %s is in use by another program: the gate cannot listen "
			       "there (ss -ltnp 'sport = :%d' names it)",
			c->listen, p);
	}
	if (bind_errno == EADDRNOTAVAIL) {
		return problem("listen = %s: %s is not an address of this host", c->listen, host);
	}
	if (bind_errno == EACCES) {
		return problem("listen = %s: port %d needs root (or CAP_NET_BIND_SERVICE) to bind",
			c->listen, p);
	}
	return problem("listen = %s: cannot bind it: %s", c->listen, strerror(bind_errno));
}

/* The menu a user would see of the system's entries: warnings where the
 * allow-list names what no entry has, or where nothing is left in it. */
static void check_apps(const struct gate_config *c)
{
	static struct app apps[1024];
	/* The system's entries alone: not root's own. */
	const char *home = getenv("HOME");
	char *saved = home ? strdup(home) : NULL;
	setenv("HOME", "/nonexistent", 1);
	unsetenv("XDG_DATA_HOME");
	int n = apps_read(apps, 1024, c);
	if (saved) {
		setenv("HOME", saved, 1);
		free(saved);
	}
	for (int i = 0; i < c->nallow; i++) {
		bool there = false;
		for (int k = 0; k < n && !there; k++) {
			there = strcmp(apps[k].id, c->allow[i]) == 0 && apps[k].shown;
		}
		if (!there) {
			warning("[apps] allow names %s, which no desktop entry here has (as "
				"/usr/share/applications/%s.desktop): it is in no one's menu",
				c->allow[i], c->allow[i]);
		}
	}
	int shown = 0;
	for (int k = 0; k < n; k++) {
		shown += apps[k].shown && gate_config_allows(c, apps[k].id);
	}
	if (shown == 0) {
		warning("the menu is empty: %s",
			c->nallow
				? "the allow-list names no app installed here"
				: "no desktop entry in /usr/share/applications (or XDG_DATA_DIRS) "
				  "is readable and shown; users can start only their own");
	}
}

int check_config(const char *path)
{
	struct gate_config c;
	int problems = gate_config_read_all(&c, path);
	problems += check_tls(&c);
	problems += check_listen(&c);
	if (!getpwnam(c.user)) {
		problems += problem("no system user %s (user =): the network process runs as it "
				    "(the package makes it with systemd-sysusers)",
			c.user);
	}
	char pam[PATH_MAX];
	snprintf(pam, sizeof(pam), "/etc/pam.d/%s", c.pam_service);
	if (access(pam, R_OK) != 0) {
		problems += problem("no PAM service %s (%s is missing)", c.pam_service, pam);
	}
	char file[PATH_MAX + 32];
	struct stat st;
	if (stat(c.page, &st) != 0 || !S_ISDIR(st.st_mode)) {
		problems += problem("page = %s: %s (the folder that holds the page: build/web in a "
				    "build, /usr/share/rcomp/web installed)",
			c.page, stat(c.page, &st) != 0 ? strerror(errno) : "not a folder");
	} else {
		static const char *const pages[] = {WEB_PAGE_FILES, WEB_GATE_PAGE};
		for (size_t i = 0; i < sizeof(pages) / sizeof(pages[0]); i++) {
			snprintf(file, sizeof(file), "%s/%s", c.page, pages[i]);
			if (access(file, R_OK) != 0) {
				problems += problem("the page is not whole: %s: %s", file,
					strerror(errno));
			}
		}
	}
	if (access(c.rcomp_run, X_OK) != 0) {
		problems += problem("cannot run %s: %s", c.rcomp_run, strerror(errno));
	}
	check_apps(&c);
	if (problems == 0) {
		printf("rcomp-gate: %s is good: HTTPS%s on %s, logins through PAM service %s, the "
		       "network process as %s\n",
			path, c.cert[0] ? "" : " (plain HTTP: loopback only)", c.listen,
			c.pam_service, c.user);
	} else {
		printf("rcomp-gate: %s: %d problem%s\n", path, problems, problems == 1 ? "" : "s");
	}
	gate_config_finish(&c);
	return problems;
}
