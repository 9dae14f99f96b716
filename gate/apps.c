#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "apps.h"
#include "json.h"

/* Lines longer than this in an entry are passed over. */
#define LINE_MAX_BYTES 4096

static bool executable(const char *name)
{
	if (strchr(name, '/')) {
		return access(name, X_OK) == 0;
	}
	const char *path = getenv("PATH");
	if (!path) {
		return false;
	}
	char *copy = strdup(path), *save = NULL;
	bool found = false;
	for (char *dir = copy ? strtok_r(copy, ":", &save) : NULL; dir && !found;
		dir = strtok_r(NULL, ":", &save)) {
		char full[4096];
		snprintf(full, sizeof(full), "%s/%s", dir, name);
		struct stat st;
		found = stat(full, &st) == 0 && S_ISREG(st.st_mode) && access(full, X_OK) == 0;
	}
	free(copy);
	return found;
}

static bool is_true(const char *v)
{
	return strcmp(v, "true") == 0;
}

/* One entry's [Desktop Entry] group; false if it is not an application. */
static bool read_entry(const char *path, struct app *app)
{
	FILE *f = fopen(path, "re");
	if (!f) {
		return false;
	}
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	bool in_group = false, application = false, hidden = false, terminal = false;
	bool tried = true;
	while ((n = getline(&line, &cap, f)) >= 0) {
		if (n > LINE_MAX_BYTES) {
			continue;
		}
		while (n && (line[n - 1] == '\n' || line[n - 1] == '\r')) {
			line[--n] = '\0';
		}
		if (line[0] == '[') {
			in_group = strcmp(line, "[Desktop Entry]") == 0;
			continue;
		}
		char *eq = strchr(line, '=');
		if (!in_group || line[0] == '#' || !eq) {
			continue;
		}
		char *key = line, *value = eq + 1;
		char *end = eq;
		while (end > key && end[-1] == ' ') {
			end--;
		}
		*end = '\0';
		while (*value == ' ') {
			value++;
		}
		if (strcmp(key, "Type") == 0) {
			application = strcmp(value, "Application") == 0;
		} else if (strcmp(key, "Name") == 0) {
			snprintf(app->name, sizeof(app->name), "%s", value);
		} else if (strcmp(key, "Exec") == 0) {
			snprintf(app->exec, sizeof(app->exec), "%s", value);
		} else if (strcmp(key, "Icon") == 0) {
			snprintf(app->icon, sizeof(app->icon), "%s", value);
		} else if (strcmp(key, "NoDisplay") == 0 || strcmp(key, "Hidden") == 0) {
			hidden |= is_true(value);
		} else if (strcmp(key, "Terminal") == 0) {
			terminal = is_true(value);
		} else if (strcmp(key, "TryExec") == 0) {
			tried = executable(value);
		}
	}
	free(line);
	fclose(f);
	app->shown = application && !hidden && !terminal && tried && app->name[0] && app->exec[0];
	return application || hidden;
}

static int find(const struct app *apps, int n, const char *id)
{
	for (int i = 0; i < n; i++) {
		if (strcmp(apps[i].id, id) == 0) {
			return i;
		}
	}
	return -1;
}

/* The entries of dir (and one level of folders below it, whose names go
 * into the id: org/x.desktop is org-x). */
static int read_dir(const char *dir, const char *prefix, struct app *apps, int n, int max,
	int depth)
{
	DIR *d = opendir(dir);
	if (!d) {
		return n;
	}
	struct dirent *e;
	while ((e = readdir(d)) && n < max) {
		if (e->d_name[0] == '.') {
			continue;
		}
		char path[4096];
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		size_t len = strlen(e->d_name);
		struct stat st;
		if (stat(path, &st) != 0) {
			continue;
		}
		if (S_ISDIR(st.st_mode) && depth == 0) {
			char sub[128];
			int subn = snprintf(sub, sizeof(sub), "%s%s-", prefix, e->d_name);
			if (subn > 0 && (size_t)subn < sizeof(sub)) {
				n = read_dir(path, sub, apps, n, max, depth + 1);
			}
			continue;
		}
		if (!S_ISREG(st.st_mode) || len <= 8 ||
			strcmp(e->d_name + len - 8, ".desktop") != 0) {
			continue;
		}
		char id[128];
		int idn = snprintf(id, sizeof(id), "%s%.*s", prefix, (int)(len - 8), e->d_name);
		if (idn < 0 || (size_t)idn >= sizeof(id) || find(apps, n, id) >= 0) {
			continue; /* an earlier directory's entry of that id wins */
		}
		struct app app = {0};
		snprintf(app.id, sizeof(app.id), "%s", id);
		if (read_entry(path, &app)) {
			apps[n++] = app;
		}
	}
	closedir(d);
	return n;
}

static int by_name(const void *a, const void *b)
{
	return strcasecmp(((const struct app *)a)->name, ((const struct app *)b)->name);
}

int apps_read(struct app *apps, int max, const struct gate_config *config)
{
	int n = 0;
	char dir[4096];
	const char *home = getenv("XDG_DATA_HOME");
	if (home && home[0] == '/') {
		snprintf(dir, sizeof(dir), "%s/applications", home);
	} else {
		snprintf(dir, sizeof(dir), "%s/.local/share/applications",
			getenv("HOME") ? getenv("HOME") : "/");
	}
	if (config->nallow == 0 || config->apps_own) {
		n = read_dir(dir, "", apps, n, max, 0);
	}
	const char *dirs = getenv("XDG_DATA_DIRS");
	char *copy = strdup(dirs && *dirs ? dirs : "/usr/local/share:/usr/share"), *save = NULL;
	for (char *d = copy ? strtok_r(copy, ":", &save) : NULL; d;
		d = strtok_r(NULL, ":", &save)) {
		if (d[0] != '/') {
			continue;
		}
		snprintf(dir, sizeof(dir), "%s/applications", d);
		n = read_dir(dir, "", apps, n, max, 0);
	}
	free(copy);
	qsort(apps, (size_t)n, sizeof(*apps), by_name);
	return n;
}

const struct app *apps_find(const struct app *apps, int n, const struct gate_config *config,
	const char *id)
{
	int i = find(apps, n, id);
	return i >= 0 && apps[i].shown && gate_config_allows(config, id) ? &apps[i] : NULL;
}

/* Why no app is shown: no entries at all, an allow-list that names none
 * of those installed, or every entry hidden. */
static void empty_why(const struct app *apps, int n, const struct gate_config *config, char *out,
	size_t size)
{
	if (n == 0) {
		const char *dirs = getenv("XDG_DATA_DIRS");
		snprintf(out, size,
			"No desktop entries could be read here (in ~/.local/share/applications and "
			"the applications folder of %s): install an app, or ask the administrator.",
			dirs && *dirs ? dirs : "/usr/local/share:/usr/share");
		return;
	}
	if (config->nallow > 0) {
		size_t len = (size_t)snprintf(out, size, "The administrator allows only ");
		for (int i = 0; i < config->nallow && len < size; i++) {
			len += (size_t)snprintf(out + len, size - len, "%s%s", i ? ", " : "",
				config->allow[i]);
		}
		if (len < size) {
			snprintf(out + len, size - len,
				", and none of %s is installed here (or each is hidden).",
				config->nallow > 1 ? "them" : "it");
		}
		return;
	}
	snprintf(out, size,
		"Every desktop entry here is hidden (NoDisplay, Hidden, one that runs in a "
		"terminal, or one whose TryExec is not installed).");
}

int apps_json(const struct app *apps, int n, const struct gate_config *config, char *out,
	size_t size)
{
	struct json j = {out, size, 0, false};
	json_put(&j, "{\"apps\":[");
	int shown = 0;
	for (int i = 0; i < n; i++) {
		if (!apps[i].shown || !gate_config_allows(config, apps[i].id)) {
			continue;
		}
		char icon[4096];
		json_put(&j, shown++ ? ",{\"id\":" : "{\"id\":");
		json_string(&j, apps[i].id, strlen(apps[i].id));
		json_put(&j, ",\"name\":");
		json_string(&j, apps[i].name, strlen(apps[i].name));
		json_put(&j,
			apps_icon_path(&apps[i], icon, sizeof(icon)) ? ",\"icon\":true}"
								     : ",\"icon\":false}");
	}
	json_put(&j, "]");
	if (shown == 0) {
		/* The page says why the menu is empty, and what would fill it. */
		char why[1024];
		empty_why(apps, n, config, why, sizeof(why));
		json_put(&j, ",\"empty\":");
		json_string(&j, why, strlen(why));
	}
	json_put(&j, "}");
	return j.full ? -1 : (int)j.len;
}

bool apps_argv(const struct app *app, char *buf, size_t size, char *argv[APP_ARGS_MAX + 1])
{
	const char *p = app->exec;
	size_t used = 0;
	int argc = 0;
	while (*p) {
		while (*p == ' ' || *p == '\t') {
			p++;
		}
		if (!*p) {
			break;
		}
		if (argc == APP_ARGS_MAX) {
			return false;
		}
		char *arg = buf + used;
		bool quoted = false, code = false;
		while (*p && (quoted || (*p != ' ' && *p != '\t'))) {
			char c = *p++;
			if (c == '"') {
				quoted = !quoted;
				continue;
			}
			if (quoted && c == '\\' && *p) {
				c = *p++;
			} else if (c == '%' && *p) {
				char f = *p++;
				if (f != '%') {
					/* %f %F %u %U %i %c %k and the deprecated ones:
					 * no files, URLs or icons are passed. */
					code = true;
					continue;
				}
				c = '%';
			}
			if (used + 1 >= size) {
				return false;
			}
			buf[used++] = c;
		}
		if (quoted || used + 1 >= size) {
			return false;
		}
		buf[used++] = '\0';
		if (code && arg[0] == '\0') {
			continue; /* the argument was only a field code */
		}
		argv[argc++] = arg;
	}
	argv[argc] = NULL;
	return argc > 0;
}

bool apps_icon_path(const struct app *app, char *out, size_t size)
{
	const char *icon = app->icon;
	if (!icon[0]) {
		return false;
	}
	if (icon[0] == '/') {
		snprintf(out, size, "%s", icon);
		return access(out, R_OK) == 0;
	}
	if (strchr(icon, '/')) {
		return false;
	}
	static const char *const sizes[] = {"64x64", "48x48", "128x128", "256x256", "32x32"};
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		snprintf(out, size, "/usr/share/icons/hicolor/%s/apps/%s.png", sizes[i], icon);
		if (access(out, R_OK) == 0) {
			return true;
		}
	}
	snprintf(out, size, "/usr/share/pixmaps/%s.png", icon);
	return access(out, R_OK) == 0;
}
