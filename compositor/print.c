/*
 * The session's printer: a CUPS scheduler of the session's own (cupsd, run
 * as the session's user, as its sound server and bus are), listening on
 * DIR/NAME.print beside the session's socket, which the apps find in
 * CUPS_SERVER; its settings and spool are in DIR/NAME.cups. It has one
 * queue, "rcomp", the default: a PPD that takes PDF (so Debian's
 * cups-filters turn text, images and PostScript into one PDF) and a
 * backend, `rcomp-run --cups-backend`, that hands the PDF to the session
 * as a print for the person's viewer (send_files of kind print). A job
 * printed while no viewer is attached waits (the backend asks CUPS to try
 * again every few seconds, for an hour).
 *
 * cupsd refuses to run its filters as root: a session run by root gets its
 * scheduler's folder in /tmp, open to the group lp that its filters then
 * run as, instead of under the session directory.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bus.h"
#include "log.h"
#include "print.h"
#include "server.h"

#ifndef CUPS_SERVERBIN
#define CUPS_SERVERBIN "/usr/lib/cups"
#endif
#define READY_WAIT_MS 3000
#define STOP_WAIT_MS 1000

/* Our queue's PPD: PDF in, the same PDF out to the backend. */
static const char ppd[] = "*PPD-Adobe: \"4.3\"\n"
			  "*FormatVersion: \"4.3\"\n"
			  "*FileVersion: \"1.0\"\n"
			  "*LanguageVersion: English\n"
			  "*LanguageEncoding: ISOLatin1\n"
			  "*PCFileName: \"RCOMP.PPD\"\n"
			  "*Manufacturer: \"rcomp\"\n"
			  "*Product: \"(rcomp)\"\n"
			  "*ModelName: \"rcomp viewer printer\"\n"
			  "*ShortNickName: \"rcomp viewer printer\"\n"
			  "*NickName: \"rcomp: printed on the viewer's side\"\n"
			  "*PSVersion: \"(3010.000) 0\"\n"
			  "*LanguageLevel: \"3\"\n"
			  "*ColorDevice: True\n"
			  "*DefaultColorSpace: RGB\n"
			  "*FileSystem: False\n"
			  "*Throughput: \"1\"\n"
			  "*TTRasterizer: Type42\n"
			  "*cupsVersion: 2.4\n"
			  "*cupsManualCopies: False\n"
			  "*cupsFilter2: \"application/vnd.cups-pdf application/pdf 0 -\"\n"
			  "*OpenUI *PageSize/Page Size: PickOne\n"
			  "*OrderDependency: 10 AnySetup *PageSize\n"
			  "*DefaultPageSize: A4\n"
			  "*PageSize A4/A4: \"<</PageSize[595 842]>>setpagedevice\"\n"
			  "*PageSize Letter/US Letter: \"<</PageSize[612 792]>>setpagedevice\"\n"
			  "*PageSize Legal/US Legal: \"<</PageSize[612 1008]>>setpagedevice\"\n"
			  "*PageSize A3/A3: \"<</PageSize[842 1191]>>setpagedevice\"\n"
			  "*CloseUI: *PageSize\n"
			  "*OpenUI *PageRegion: PickOne\n"
			  "*OrderDependency: 10 AnySetup *PageRegion\n"
			  "*DefaultPageRegion: A4\n"
			  "*PageRegion A4/A4: \"<</PageSize[595 842]>>setpagedevice\"\n"
			  "*PageRegion Letter/US Letter: \"<</PageSize[612 792]>>setpagedevice\"\n"
			  "*PageRegion Legal/US Legal: \"<</PageSize[612 1008]>>setpagedevice\"\n"
			  "*PageRegion A3/A3: \"<</PageSize[842 1191]>>setpagedevice\"\n"
			  "*CloseUI: *PageRegion\n"
			  "*DefaultImageableArea: A4\n"
			  "*ImageableArea A4/A4: \"0 0 595 842\"\n"
			  "*ImageableArea Letter/US Letter: \"0 0 612 792\"\n"
			  "*ImageableArea Legal/US Legal: \"0 0 612 1008\"\n"
			  "*ImageableArea A3/A3: \"0 0 842 1191\"\n"
			  "*DefaultPaperDimension: A4\n"
			  "*PaperDimension A4/A4: \"595 842\"\n"
			  "*PaperDimension Letter/US Letter: \"612 792\"\n"
			  "*PaperDimension Legal/US Legal: \"612 1008\"\n"
			  "*PaperDimension A3/A3: \"842 1191\"\n";

/* dir/name holding text, mode. */
static bool put(const char *dir, const char *name, const char *text, mode_t mode)
{
	char path[PATH_MAX];
	if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path)) {
		errno = ENAMETOOLONG;
		return false;
	}
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	if (fd < 0) {
		return false;
	}
	size_t len = strlen(text);
	bool ok = write(fd, text, len) == (ssize_t)len;
	ok = close(fd) == 0 && ok;
	return ok && chmod(path, mode) == 0;
}

static bool sub(const char *dir, const char *name, mode_t mode)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return mkdir(path, mode) == 0 || errno == EEXIST;
}

static bool link_to(const char *dir, const char *name, const char *target)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return access(target, F_OK) != 0 || symlink(target, path) == 0 || errno == EEXIST;
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path) < 0 && errno != ENOENT ? -1 : 0;
}

/* A program of the system's: its path, or false. */
static bool find_cupsd(char *out, size_t size)
{
	const char *path = getenv("PATH");
	char all[4096];
	snprintf(all, sizeof(all), "%s:/usr/sbin:/sbin", path ? path : "/usr/bin:/bin");
	for (char *save = NULL, *d = strtok_r(all, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
		if (snprintf(out, size, "%s/cupsd", d) < (int)size && access(out, X_OK) == 0) {
			return true;
		}
	}
	return false;
}

static bool write_config(struct rc_server *server, const char *session_socket, char *why,
	size_t why_size)
{
	struct rc_print *p = &server->print;
	char text[8192], exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0 || strchr((exe[n] = '\0', exe), '\'')) {
		snprintf(why, why_size, "cannot name rcomp-run's own program for the backend");
		return false;
	}
	const char *d = p->dir;
	if (!sub(d, "spool", 0710) || !sub(d, "spool/tmp", 01770) || !sub(d, "cache", 0770) ||
		!sub(d, "state", 0755) || !sub(d, "log", 0755) || !sub(d, "ppd", 0755) ||
		!sub(d, "bin", 0755) || !sub(d, "bin/backend", 0755)) {
		snprintf(why, why_size, "cannot make its folders in %s: %s", d, strerror(errno));
		return false;
	}
	/* The system's filters and helpers; our backend alone. */
	static const char *const parts[] = {"filter", "daemon", "notifier", "cgi-bin", "driver",
		"monitor", "command"};
	for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
		char target[PATH_MAX], name[64];
		snprintf(target, sizeof(target), "%s/%s", CUPS_SERVERBIN, parts[i]);
		snprintf(name, sizeof(name), "bin/%s", parts[i]);
		if (!link_to(d, name, target)) {
			snprintf(why, why_size, "cannot link %.200s: %s", target, strerror(errno));
			return false;
		}
	}
	/* Mode 0700: CUPS runs it as the scheduler's own user (never lp). */
	snprintf(text, sizeof(text), "#!/bin/sh\nexec '%s' --cups-backend \"$@\"\n", exe);
	bool ok = put(d, "bin/backend/rcomp", text, 0700);
	snprintf(text, sizeof(text),
		"# The session's own scheduler (rcomp-run's print.c): remade at each start.\n"
		"Listen %s\n"
		"Browsing No\n"
		"BrowseLocalProtocols none\n"
		"DefaultAuthType None\n"
		"WebInterface No\n"
		"LogLevel warn\n"
		"MaxLogSize 1m\n"
		"MaxJobs 100\n"
		"PreserveJobHistory No\n"
		"PreserveJobFiles No\n"
		"JobRetryInterval 5\n"
		"JobRetryLimit 720\n"
		"<Location />\nOrder allow,deny\nAllow all\n</Location>\n"
		"<Policy default>\n<Limit All>\nOrder deny,allow\n</Limit>\n</Policy>\n",
		p->socket);
	ok = ok && put(d, "cupsd.conf", text, 0644);
	snprintf(text, sizeof(text),
		"ServerRoot %s\n"
		"ServerBin %s/bin\n"
		"DataDir /usr/share/cups\n"
		"CacheDir %s/cache\n"
		"StateDir %s/state\n"
		"RequestRoot %s/spool\n"
		"TempDir %s/spool/tmp\n"
		"ErrorLog %s/log/error_log\n"
		"AccessLog %s/log/access_log\n"
		"PageLog %s/log/page_log\n"
		"FileDevice No\n",
		d, d, d, d, d, d, d, d, d);
	ok = ok && put(d, "cups-files.conf", text, 0644);
	snprintf(text, sizeof(text),
		"<DefaultPrinter rcomp>\n"
		"Info the viewer's printer\n"
		"Location where the person is\n"
		"MakeModel rcomp: printed on the viewer's side\n"
		"DeviceURI rcomp:%s\n"
		"State Idle\n"
		"Accepting Yes\n"
		"Shared No\n"
		"JobSheets none none\n"
		"ErrorPolicy retry-job\n"
		"OpPolicy default\n"
		"</DefaultPrinter>\n",
		session_socket);
	ok = ok && put(d, "printers.conf", text, 0600) && put(d, "ppd/rcomp.ppd", ppd, 0644);
	if (!ok) {
		snprintf(why, why_size, "cannot write its settings in %s: %s", d, strerror(errno));
	}
	return ok;
}

/* Its folder: DIR/NAME.cups, or under /tmp for root's (see the top). */
static bool make_dir(struct rc_server *server, char *why, size_t why_size)
{
	struct rc_print *p = &server->print;
	const struct rc_record *record = &server->record;
	if (geteuid() != 0) {
		if (!session_path(p->dir, sizeof(p->dir), record->dir, record->name, "cups")) {
			snprintf(why, why_size, "the session directory's path is too long");
			return false;
		}
		nftw(p->dir, remove_one, 16, FTW_DEPTH | FTW_PHYS); /* a killed session's */
		if (mkdir(p->dir, 0700) < 0) {
			snprintf(why, why_size, "cannot make %s: %s", p->dir, strerror(errno));
			p->dir[0] = '\0';
			return false;
		}
		return true;
	}
	snprintf(p->dir, sizeof(p->dir), "/tmp/rcomp-cups-XXXXXX");
	struct group *lp = getgrnam("lp");
	if (!mkdtemp(p->dir) || !lp || chown(p->dir, 0, lp->gr_gid) < 0 ||
		chmod(p->dir, 0750) < 0) {
		snprintf(why, why_size, "cannot make its folder in /tmp for the group lp: %s",
			lp ? strerror(errno) : "no group lp");
		if (p->dir[0] && strcmp(p->dir, "/tmp/rcomp-cups-XXXXXX") != 0) {
			rmdir(p->dir);
		}
		p->dir[0] = '\0';
		return false;
	}
	return true;
}

bool print_start(struct rc_server *server)
{
	struct rc_print *p = &server->print;
	*p = (struct rc_print){0};
	const struct rc_record *record = &server->record;
	char why[512], cupsd[PATH_MAX], session_socket[SESSION_PATH_MAX];
	if (server->options.printing_off) {
		return false;
	}
	if (!record->dir[0] ||
		!session_path(session_socket, sizeof(session_socket), record->dir, record->name,
			"sock")) {
		log_debug("no printer: the session has no socket of its own (--stdio)");
		return false;
	}
	if (!find_cupsd(cupsd, sizeof(cupsd))) {
		log_info("no printer: cupsd is not installed (Debian: cups-daemon and "
			 "cups-filters); the apps' prints go nowhere");
		return false;
	}
	if (!make_dir(server, why, sizeof(why))) {
		log_warning("no printer: %s", why);
		return false;
	}
	/* Its socket beside the session's, in the session directory (cupsd
	 * opens its own folder to all, 0755; the socket is for the session's
	 * apps alone), and as short as the session's. */
	if (!session_path(p->socket, sizeof(p->socket), record->dir, record->name, "print") ||
		strlen(p->socket) >= sizeof(((struct sockaddr_un *)0)->sun_path)) {
		log_warning("no printer: its socket's path is too long (%s/%s.print)", record->dir,
			record->name);
		print_stop(server);
		return false;
	}
	unlink(p->socket); /* a killed session's */
	if (!write_config(server, session_socket, why, sizeof(why))) {
		log_warning("no printer: %s", why);
		print_stop(server);
		return false;
	}
	char conf[PATH_MAX], files[PATH_MAX];
	snprintf(conf, sizeof(conf), "%s/cupsd.conf", p->dir);
	snprintf(files, sizeof(files), "%s/cups-files.conf", p->dir);
	pid_t pid = fork();
	if (pid < 0) {
		log_warning("no printer: cannot start cupsd: %s", strerror(errno));
		print_stop(server);
		return false;
	}
	if (pid == 0) {
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		setpgid(0, 0); /* not the app's group */
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);
		if (null >= 0) {
			dup2(null, STDIN_FILENO);
			dup2(null, STDOUT_FILENO);
			dup2(null, STDERR_FILENO);
		}
		execl(cupsd, "cupsd", "-f", "-c", conf, "-s", files, (char *)NULL);
		_exit(127);
	}
	p->pid = pid;
	for (int waited = 0; waited < READY_WAIT_MS; waited += 5) {
		int status;
		if (waitpid(pid, &status, WNOHANG) == pid) {
			p->pid = 0;
			log_warning("no printer: cupsd did not start (status %d; its log: "
				    "%s/log/error_log)",
				WIFEXITED(status) ? WEXITSTATUS(status) : -1, p->dir);
			/* Its log says why: the folder stays for it. */
			p->dir[0] = '\0';
			return false;
		}
		if (daemon_answers(p->socket)) {
			log_debug("the session's printer: CUPS_SERVER=%s", p->socket);
			return true;
		}
		nanosleep(&(struct timespec){.tv_nsec = 5000000}, NULL);
	}
	log_warning("no printer: cupsd did not answer within %d s", READY_WAIT_MS / 1000);
	print_stop(server);
	return false;
}

void print_stop(struct rc_server *server)
{
	struct rc_print *p = &server->print;
	if (p->pid > 0) {
		kill(-p->pid, SIGTERM);
		for (int waited = 0; waited < STOP_WAIT_MS; waited += 10) {
			if (waitpid(p->pid, NULL, WNOHANG) != 0) {
				break;
			}
			nanosleep(&(struct timespec){.tv_nsec = 10000000}, NULL);
		}
		kill(-p->pid, SIGKILL);
		waitpid(p->pid, NULL, WNOHANG);
		p->pid = 0;
	}
	if (p->dir[0]) {
		nftw(p->dir, remove_one, 16, FTW_DEPTH | FTW_PHYS);
	}
	if (p->socket[0]) {
		unlink(p->socket);
	}
	p->dir[0] = p->socket[0] = '\0';
}

const char *print_server(const struct rc_server *server)
{
	return server->print.socket[0] && server->print.pid > 0 ? server->print.socket : NULL;
}

bool print_owns_pid(const struct rc_server *server, pid_t pid)
{
	return pid > 0 && server->print.pid == pid;
}

void print_exited(struct rc_server *server, int status)
{
	log_warning("the session's printer (cupsd) exited (status %d); the apps' prints go "
		    "nowhere",
		WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	server->print.pid = 0;
}
