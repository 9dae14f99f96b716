#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <security/pam_appl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "user.h"

/* The PATH a login gets (Debian's /etc/login.defs ENV_PATH). */
#define LOGIN_PATH "/usr/local/bin:/usr/bin:/bin:/usr/local/games:/usr/games"

bool gate_user_find(const char *name, struct gate_user *user)
{
	struct passwd pw, *found = NULL;
	char buf[4096];
	if (getpwnam_r(name, &pw, buf, sizeof(buf), &found) != 0 || !found || pw.pw_uid == 0) {
		return false;
	}
	snprintf(user->name, sizeof(user->name), "%s", pw.pw_name);
	user->uid = pw.pw_uid;
	user->gid = pw.pw_gid;
	snprintf(user->home, sizeof(user->home), "%s", pw.pw_dir && *pw.pw_dir ? pw.pw_dir : "/");
	snprintf(user->shell, sizeof(user->shell), "%s",
		pw.pw_shell && *pw.pw_shell ? pw.pw_shell : "/bin/sh");
	return true;
}

bool gate_user_login_shell(const struct gate_user *user)
{
	const char *base = strrchr(user->shell, '/');
	base = base ? base + 1 : user->shell;
	if (strcmp(base, "nologin") == 0 || strcmp(base, "false") == 0) {
		return false;
	}
	bool listed = false;
	setusershell();
	for (const char *s; !listed && (s = getusershell());) {
		listed = strcmp(s, user->shell) == 0;
	}
	endusershell();
	return listed;
}

/* The password for every prompt that hides its answer; nothing for the rest. */
static int converse(int n, const struct pam_message **msgs, struct pam_response **out, void *data)
{
	const char *password = data;
	struct pam_response *r = calloc((size_t)n, sizeof(*r));
	if (!r) {
		return PAM_BUF_ERR;
	}
	for (int i = 0; i < n; i++) {
		switch (msgs[i]->msg_style) {
		case PAM_PROMPT_ECHO_OFF:
			if (!password || !(r[i].resp = strdup(password))) {
				goto fail;
			}
			break;
		case PAM_PROMPT_ECHO_ON:
			/* A second question (a one-time code): the page does not
			 * ask it yet. */
			goto fail;
		default:
			break;
		}
	}
	*out = r;
	return PAM_SUCCESS;
fail:
	for (int i = 0; i < n; i++) {
		if (r[i].resp) {
			explicit_bzero(r[i].resp, strlen(r[i].resp));
			free(r[i].resp);
		}
	}
	free(r);
	return PAM_CONV_ERR;
}

/* PAM's failure delay, which the monitor keeps itself. */
static void no_delay(int status, unsigned delay, void *data)
{
}

bool gate_pam_login(const char *service, const char *user, const char *password, const char *addr,
	char *why, size_t why_size)
{
	struct pam_conv conv = {converse, (void *)password};
	pam_handle_t *h = NULL;
	int r = pam_start(service, user, &conv, &h);
	if (r != PAM_SUCCESS) {
		snprintf(why, why_size, "PAM cannot start service %s: %s", service,
			pam_strerror(h, r));
		return false;
	}
	pam_set_item(h, PAM_FAIL_DELAY, (const void *)no_delay);
	pam_set_item(h, PAM_RHOST, addr);
	pam_set_item(h, PAM_TTY, "rcomp-gate");
	r = pam_authenticate(h, PAM_DISALLOW_NULL_AUTHTOK);
	if (r == PAM_SUCCESS) {
		r = pam_acct_mgmt(h, PAM_DISALLOW_NULL_AUTHTOK);
		if (r != PAM_SUCCESS) {
			snprintf(why, why_size, "the account is refused: %s",
				r == PAM_NEW_AUTHTOK_REQD ? "its password must be changed first"
							  : pam_strerror(h, r));
		}
	} else {
		snprintf(why, why_size, "%s", pam_strerror(h, r));
	}
	pam_end(h, r);
	return r == PAM_SUCCESS;
}

struct gate_pam {
	pam_handle_t *h;
	bool cred, session;
};

struct gate_pam *gate_pam_open(const char *service, const char *user, const char *addr, char ***env,
	char *why, size_t why_size)
{
	struct gate_pam *pam = calloc(1, sizeof(*pam));
	struct pam_conv conv = {converse, NULL};
	int r = pam ? pam_start(service, user, &conv, &pam->h) : PAM_BUF_ERR;
	if (r == PAM_SUCCESS) {
		pam_set_item(pam->h, PAM_RHOST, addr);
		pam_set_item(pam->h, PAM_TTY, "rcomp-gate");
		/* The account again: it may have been locked since the login. */
		r = pam_acct_mgmt(pam->h, 0);
	}
	if (r == PAM_SUCCESS) {
		r = pam_setcred(pam->h, PAM_ESTABLISH_CRED);
		pam->cred = r == PAM_SUCCESS;
	}
	if (r == PAM_SUCCESS) {
		r = pam_open_session(pam->h, PAM_SILENT);
		pam->session = r == PAM_SUCCESS;
	}
	if (r != PAM_SUCCESS) {
		snprintf(why, why_size, "PAM refused the session: %s",
			pam ? pam_strerror(pam->h, r) : "out of memory");
		gate_pam_close(pam, NULL);
		return NULL;
	}
	*env = pam_getenvlist(pam->h);
	return pam;
}

void gate_pam_close(struct gate_pam *pam, char **env)
{
	for (char **e = env; e && *e; e++) {
		free(*e);
	}
	free(env);
	if (!pam) {
		return;
	}
	if (pam->h) {
		if (pam->session) {
			pam_close_session(pam->h, PAM_SILENT);
		}
		if (pam->cred) {
			pam_setcred(pam->h, PAM_DELETE_CRED);
		}
		pam_end(pam->h, PAM_SUCCESS);
	}
	free(pam);
}

/* The user's runtime directory, where logind (or an administrator) made
 * one that is the user's own. */
static void runtime_dir(const struct gate_user *user)
{
	char path[64];
	snprintf(path, sizeof(path), "/run/user/%u", (unsigned)user->uid);
	struct stat st;
	if (!getenv("XDG_RUNTIME_DIR") && stat(path, &st) == 0 && S_ISDIR(st.st_mode) &&
		st.st_uid == user->uid && !(st.st_mode & 077)) {
		setenv("XDG_RUNTIME_DIR", path, 1);
	}
}

bool gate_become(const struct gate_user *user, char **env, int keep)
{
	if (initgroups(user->name, user->gid) != 0 ||
		setresgid(user->gid, user->gid, user->gid) != 0 ||
		setresuid(user->uid, user->uid, user->uid) != 0) {
		return false;
	}
	/* For good: root cannot be had back. */
	if (setuid(0) == 0 || geteuid() != user->uid || getegid() != user->gid) {
		errno = EPERM;
		return false;
	}
	char *lang = getenv("LANG") ? strdup(getenv("LANG")) : NULL;
	clearenv();
	setenv("HOME", user->home, 1);
	setenv("USER", user->name, 1);
	setenv("LOGNAME", user->name, 1);
	setenv("SHELL", user->shell, 1);
	setenv("PATH", LOGIN_PATH, 1);
	if (lang) {
		setenv("LANG", lang, 1);
		free(lang);
	}
	for (char **e = env; e && *e; e++) {
		putenv(strdup(*e));
	}
	runtime_dir(user);
	if (chdir(user->home) != 0 && chdir("/") != 0) {
		return false;
	}
	int null = open("/dev/null", O_RDONLY);
	if (null >= 0) {
		dup2(null, STDIN_FILENO);
		close(null);
	}
	for (int fd = 3; fd < 1024; fd++) {
		if (fd != keep) {
			close(fd);
		}
	}
	umask(022);
	return true;
}
