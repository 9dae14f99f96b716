#include "address.h"
#include "session.h"
#include "settings.h"

#include <ctype.h>
#include <errno.h>
#include <ini.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/types.h>

/* One key = value line of a file, kept until every file is read. */
struct entry {
	int line;
	bool specific; /* in [KIND:SUBJECT], else in the program's section */
	char *name, *value;
};

struct file {
	char *path;
	struct entry *entries;
	size_t nentries, capacity;
};

/* Reads a file for libinih line by line, counting lines as it does, so
 * that each entry knows its line, and lines of any length are seen whole. */
struct reader {
	FILE *stream;
	char *buf;
	size_t size;
	int line;
	int too_long; /* the first line longer than libinih takes; 0: none */
};

struct parse {
	struct settings *settings;
	const char *subject;
	struct reader reader;
	struct file *file;
	char warned_section[64]; /* the last unknown section warned of */
};

static char *xstrdup(const char *text)
{
	char *copy = strdup(text);
	if (!copy) {
		abort();
	}
	return copy;
}

static char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *out;
	int n = vasprintf(&out, fmt, ap);
	va_end(ap);
	if (n < 0) {
		abort();
	}
	return out;
}

bool settings_parse_bool(const char *value, bool *out)
{
	static const char *const yes[] = {"true", "yes", "on", "1"};
	static const char *const no[] = {"false", "no", "off", "0"};
	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		if (strcasecmp(value, yes[i]) == 0) {
			*out = true;
			return true;
		}
		if (strcasecmp(value, no[i]) == 0) {
			*out = false;
			return true;
		}
	}
	return false;
}

bool settings_parse_fps(const char *value, int *out)
{
	if (strcmp(value, "auto") == 0) {
		*out = 0;
		return true;
	}
	char *end;
	long fps = strtol(value, &end, 10);
	if (end == value || *end || fps < 1 || fps > 240) {
		return false;
	}
	*out = (int)fps;
	return true;
}

static ssize_t find_key(const struct settings *settings, const char *name)
{
	for (size_t i = 0; i < settings->nkeys; i++) {
		if (strcmp(settings->keys[i].name, name) == 0) {
			return (ssize_t)i;
		}
	}
	return -1;
}

void settings_init(struct settings *settings, const char *program, const char *section,
	const char *kind, const struct settings_key *keys, size_t nkeys, void *options)
{
	*settings = (struct settings){
		.program = program,
		.section = section,
		.kind = kind,
		.keys = keys,
		.nkeys = nkeys,
		.options = options,
		.values = calloc(nkeys, sizeof(struct settings_value)),
	};
	if (!settings->values) {
		abort();
	}
}

static void add_flag(struct settings *settings, size_t key, const char *value)
{
	struct settings_flag *flags =
		realloc(settings->flags, (settings->nflags + 1) * sizeof(*flags));
	if (!flags) {
		abort();
	}
	settings->flags = flags;
	flags[settings->nflags++] = (struct settings_flag){
		.key = key,
		.value = xstrdup(value ? value : "true"),
	};
}

bool settings_flag(struct settings *settings, const char *name, const char *value)
{
	ssize_t key = find_key(settings, name);
	if (key < 0) {
		return false;
	}
	add_flag(settings, (size_t)key, value);
	return true;
}

struct option *settings_getopt(struct settings *settings, const struct option *own)
{
	size_t n = 0;
	while (own[n].name) {
		n++;
	}
	free(settings->getopt);
	struct option *out = calloc(n + settings->nkeys + 1, sizeof(*out));
	if (!out) {
		abort();
	}
	settings->getopt = out;
	memcpy(out, own, n * sizeof(*out));
	for (size_t i = 0; i < settings->nkeys; i++) {
		out[n + i] = (struct option){
			.name = settings->keys[i].name,
			.has_arg = settings->keys[i].flag ? no_argument : required_argument,
			.val = SETTINGS_OPTION + (int)i,
		};
	}
	return out;
}

bool settings_option(struct settings *settings, int opt, const char *value)
{
	if (opt < SETTINGS_OPTION || (size_t)(opt - SETTINGS_OPTION) >= settings->nkeys) {
		return false;
	}
	add_flag(settings, (size_t)(opt - SETTINGS_OPTION), value);
	return true;
}

/* What a key of a type takes, into the options. */
static bool set_value(const struct settings *settings, const struct settings_key *k,
	const char *value)
{
	char *field = (char *)settings->options + k->offset;
	switch (k->type) {
	case SETTINGS_BOOL:
		return settings_parse_bool(value, (bool *)field);
	case SETTINGS_STRING:
		*(const char **)field = *value ? value : NULL;
		return true;
	case SETTINGS_SESSION:
		*(const char **)field = *value ? value : NULL;
		return !*value || session_name_ok(value, strlen(value));
	case SETTINGS_ADDRESS: {
		char host[256];
		const char *port;
		*(const char **)field = *value ? value : NULL;
		return !*value || address_split(value, host, sizeof(host), &port);
	}
	case SETTINGS_CUSTOM:
		break;
	}
	return k->set(settings->options, value);
}

/* Stores one layer's value of a key; value and source become the settings'.
 * where is how an error names the place ("FILE:LINE", "env RCOMP_FPS"; NULL:
 * the command line). */
static bool store(struct settings *settings, size_t key, char *value, char *source,
	const char *where)
{
	const struct settings_key *k = &settings->keys[key];
	if (!set_value(settings, k, value)) {
		if (where) { /* the source itself: print before it goes */
			fprintf(stderr, "%s: %s: %s = %s: %s takes %s\n", settings->program, where,
				k->name, value, k->name, k->expects);
		} else {
			fprintf(stderr, "%s: --%s %s: --%s takes %s\n", settings->program, k->name,
				value, k->name, k->expects);
		}
		free(value);
		free(source);
		return false;
	}
	/* The options may point into the value they replace: only now free it. */
	free(settings->values[key].value);
	free(settings->values[key].source);
	settings->values[key] = (struct settings_value){.value = value, .source = source};
	return true;
}

static char *read_line(char *str, int num, void *stream)
{
	struct reader *reader = stream;
	ssize_t n = getline(&reader->buf, &reader->size, reader->stream);
	if (n < 0) {
		return NULL;
	}
	reader->line++;
	if (n >= num) {
		/* libinih would cut it and read the rest as a line of its own. */
		if (!reader->too_long) {
			reader->too_long = reader->line;
		}
		snprintf(str, (size_t)num, "\n");
		return str;
	}
	memcpy(str, reader->buf, (size_t)n + 1);
	return str;
}

/* Whose a section is. */
enum section {
	SECTION_UNKNOWN, /* nobody's: a warning */
	SECTION_OTHER_PROGRAM, /* the other program's, for it to check */
	SECTION_OTHER_SUBJECT, /* ours, for another app or host: key names checked, values unused */
	SECTION_GENERAL, /* [run] or [view] */
	SECTION_SPECIFIC, /* [KIND:SUBJECT] */
};

static enum section section_of(const struct parse *parse, const char *section)
{
	const struct settings *settings = parse->settings;
	size_t kind_len = strlen(settings->kind);
	if (strcmp(section, settings->section) == 0) {
		return SECTION_GENERAL;
	}
	if (strncmp(section, settings->kind, kind_len) == 0 && section[kind_len] == ':' &&
		section[kind_len + 1]) {
		return parse->subject && strcmp(section + kind_len + 1, parse->subject) == 0
			? SECTION_SPECIFIC
			: SECTION_OTHER_SUBJECT;
	}
	bool known = strcmp(section, "run") == 0 || strcmp(section, "view") == 0 ||
		(strncmp(section, "app:", 4) == 0 && section[4]) ||
		(strncmp(section, "host:", 5) == 0 && section[5]);
	return known ? SECTION_OTHER_PROGRAM : SECTION_UNKNOWN;
}

static int on_entry(void *user, const char *section, const char *name, const char *value)
{
	struct parse *parse = user;
	struct settings *settings = parse->settings;
	int line = parse->reader.line;
	enum section whose = section_of(parse, section);
	if (whose == SECTION_UNKNOWN) {
		if (strncmp(parse->warned_section, section, sizeof(parse->warned_section)) != 0) {
			if (*section) {
				fprintf(stderr,
					"%s: warning: %s:%d: [%s] is not a section of rcomp's "
					"(run, view, app:NAME, host:NAME); its keys are skipped\n",
					settings->program, parse->file->path, line, section);
			} else {
				fprintf(stderr,
					"%s: warning: %s:%d: %s is outside any section; keys go "
					"under [run] or [view]\n",
					settings->program, parse->file->path, line, name);
			}
			snprintf(parse->warned_section, sizeof(parse->warned_section), "%s",
				section);
		}
		return 1;
	}
	if (whose == SECTION_OTHER_PROGRAM) {
		return 1;
	}
	if (find_key(settings, name) < 0) {
		fprintf(stderr, "%s: warning: %s:%d: unknown key %s in [%s] (see rcomp(5))\n",
			settings->program, parse->file->path, line, name, section);
		return 1;
	}
	if (whose == SECTION_OTHER_SUBJECT) {
		return 1;
	}
	struct file *file = parse->file;
	if (file->nentries == file->capacity) {
		file->capacity = file->capacity ? file->capacity * 2 : 16;
		file->entries = realloc(file->entries, file->capacity * sizeof(struct entry));
		if (!file->entries) {
			abort();
		}
	}
	file->entries[file->nentries++] = (struct entry){
		.line = line,
		.specific = whose == SECTION_SPECIFIC,
		.name = xstrdup(name),
		.value = xstrdup(value),
	};
	return 1;
}

/* Reads path into file; false after printing the error that ends the run. */
static bool read_file(struct parse *parse, struct file *file)
{
	FILE *stream = fopen(file->path, "r");
	if (!stream) {
		if (errno != ENOENT && errno != ENOTDIR) {
			fprintf(stderr, "%s: warning: cannot read %s: %s\n",
				parse->settings->program, file->path, strerror(errno));
		}
		return true;
	}
	parse->file = file;
	parse->reader = (struct reader){.stream = stream};
	parse->warned_section[0] = '\0';
	int error = ini_parse_stream(read_line, &parse->reader, on_entry, parse);
	fclose(stream);
	free(parse->reader.buf);
	if (parse->reader.too_long && (error <= 0 || parse->reader.too_long < error)) {
		fprintf(stderr, "%s: %s:%d: the line is longer than %d characters\n",
			parse->settings->program, file->path, parse->reader.too_long,
			INI_MAX_LINE - 2);
		return false;
	}
	if (error > 0) {
		fprintf(stderr, "%s: %s:%d: not a [section] or key = value line\n",
			parse->settings->program, file->path, error);
		return false;
	}
	if (error < 0) {
		fprintf(stderr, "%s: %s: cannot be read\n", parse->settings->program, file->path);
		return false;
	}
	return true;
}

/* The files, lowest first: $XDG_CONFIG_DIRS from its last entry to its
 * first (the first is the most important), then $XDG_CONFIG_HOME. */
static size_t config_files(struct file **out)
{
	const char *dirs = getenv("XDG_CONFIG_DIRS");
	if (!dirs || !*dirs) {
		dirs = "/etc/xdg";
	}
	size_t n = 0, capacity = 1;
	for (const char *p = dirs; *p; p++) {
		capacity += *p == ':';
	}
	capacity += 1;
	struct file *files = calloc(capacity, sizeof(*files));
	if (!files) {
		abort();
	}
	char *copy = xstrdup(dirs);
	char *save = NULL;
	for (char *dir = strtok_r(copy, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
		if (dir[0] == '/') { /* relative entries are invalid (XDG) */
			files[n++].path = xasprintf("%s/rcomp/rcomp.ini", dir);
		}
	}
	free(copy);
	for (size_t i = 0; i < n / 2; i++) {
		struct file swap = files[i];
		files[i] = files[n - 1 - i];
		files[n - 1 - i] = swap;
	}
	const char *home_config = getenv("XDG_CONFIG_HOME");
	const char *home = getenv("HOME");
	if (home_config && home_config[0] == '/') {
		files[n++].path = xasprintf("%s/rcomp/rcomp.ini", home_config);
	} else if (home && *home) {
		files[n++].path = xasprintf("%s/.config/rcomp/rcomp.ini", home);
	}
	*out = files;
	return n;
}

static bool apply_files(struct settings *settings, struct file *files, size_t nfiles,
	const char *subject, bool specific)
{
	for (size_t f = 0; f < nfiles; f++) {
		for (size_t i = 0; i < files[f].nentries; i++) {
			struct entry *e = &files[f].entries[i];
			if (e->specific != specific) {
				continue;
			}
			char *source = specific ? xasprintf("%s:%d [%s:%s]", files[f].path, e->line,
							  settings->kind, subject)
						: xasprintf("%s:%d", files[f].path, e->line);
			bool ok = store(settings, (size_t)find_key(settings, e->name),
				xstrdup(e->value), source, source);
			if (!ok) {
				return false;
			}
		}
	}
	return true;
}

static bool apply_env(struct settings *settings)
{
	for (size_t i = 0; i < settings->nkeys; i++) {
		char var[64] = "RCOMP_";
		size_t len = strlen(var);
		for (const char *c = settings->keys[i].name; *c && len + 1 < sizeof(var); c++) {
			var[len++] = *c == '-' ? '_' : (char)toupper((unsigned char)*c);
		}
		var[len] = '\0';
		const char *value = getenv(var);
		if (!value) {
			continue;
		}
		char *where = xasprintf("env %s", var);
		bool ok = store(settings, i, xstrdup(value), xstrdup(where), where);
		free(where);
		if (!ok) {
			return false;
		}
	}
	return true;
}

int settings_resolve(struct settings *settings, const char *subject)
{
	for (size_t i = 0; i < settings->nkeys; i++) {
		const struct settings_key *k = &settings->keys[i];
		if (!store(settings, i, xstrdup(k->fallback), xstrdup("default"), "the default")) {
			abort(); /* the program's own table is wrong */
		}
	}
	struct file *files;
	size_t nfiles = config_files(&files);
	struct parse parse = {.settings = settings, .subject = subject};
	bool ok = true;
	for (size_t f = 0; f < nfiles && ok; f++) {
		ok = read_file(&parse, &files[f]);
	}
	ok = ok && apply_files(settings, files, nfiles, subject, false) &&
		apply_files(settings, files, nfiles, subject, true) && apply_env(settings);
	for (size_t i = 0; i < settings->nflags; i++) {
		struct settings_flag *flag = &settings->flags[i];
		const char *name = settings->keys[flag->key].name;
		if (ok) {
			ok = store(settings, flag->key, flag->value, xasprintf("flag --%s", name),
				NULL);
		} else {
			free(flag->value);
		}
	}
	free(settings->flags);
	settings->flags = NULL;
	settings->nflags = 0;
	for (size_t f = 0; f < nfiles; f++) {
		for (size_t i = 0; i < files[f].nentries; i++) {
			free(files[f].entries[i].name);
			free(files[f].entries[i].value);
		}
		free(files[f].entries);
		free(files[f].path);
	}
	free(files);
	return ok ? 0 : 2;
}

void settings_print(const struct settings *settings, FILE *out)
{
	for (size_t i = 0; i < settings->nkeys; i++) {
		const struct settings_value *v = &settings->values[i];
		fprintf(out, "%s = %s  # %s\n", settings->keys[i].name, v->value ? v->value : "",
			v->source ? v->source : "default");
	}
}

bool settings_flagged(const struct settings *settings, const char *name)
{
	ssize_t key = find_key(settings, name);
	if (key < 0) {
		return false;
	}
	for (size_t i = 0; i < settings->nflags; i++) {
		if (settings->flags[i].key == (size_t)key) {
			return true;
		}
	}
	const char *source = settings->values[key].source;
	return source && strncmp(source, "flag ", 5) == 0;
}

const char *settings_source(const struct settings *settings, const char *name)
{
	ssize_t key = find_key(settings, name);
	return key >= 0 && settings->values[key].source ? settings->values[key].source : "default";
}

void settings_finish(struct settings *settings)
{
	for (size_t i = 0; i < settings->nkeys; i++) {
		free(settings->values[i].value);
		free(settings->values[i].source);
	}
	for (size_t i = 0; i < settings->nflags; i++) {
		free(settings->flags[i].value);
	}
	free(settings->flags);
	free(settings->values);
	free(settings->getopt);
	*settings = (struct settings){0};
}

int settings_bad_option(const char *program, int opt, char **argv)
{
	const char *arg = argv[optind - 1];
	int len = (int)strcspn(arg, "=");
	if (opt == ':') {
		fprintf(stderr, "%s: %.*s needs a value: see %s --help\n", program, len, arg,
			program);
	} else if (optopt && arg[1] != '-') {
		fprintf(stderr, "%s: unknown option -%c: see %s --help\n", program, optopt,
			program);
	} else {
		fprintf(stderr, "%s: unknown option %.*s: see %s --help\n", program, len, arg,
			program);
	}
	return 2;
}
