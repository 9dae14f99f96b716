/*
 * The session's own sound server, as a process (sound_daemon.h).
 *
 * Each kind of server is one row of a small table: the programs it needs,
 * what it needs written before it starts (a script, a configuration) and
 * how it is started. PulseAudio is one process with a script of our own.
 * PipeWire is four: a D-Bus session bus (wireplumber 0.4 will not run
 * without one), pipewire, wireplumber and pipewire-pulse; a shell of ours
 * starts them in order and ends them all together. Its wireplumber has
 * its device monitors off, so a session never opens the host's sound cards
 * or cameras, and its private bus means it claims nothing on the host's.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
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

#include "audio.h"
#include "log.h"
#include "sound_daemon.h"

#define SINK "rcomp"
#define MIC_SINK "rcomp_mic"
#define READY_WAIT_MS 10000
#define STOP_WAIT_MS 1000

struct sound_daemon_kind {
	const char *name;
	/* Every program it runs, each with the Debian package that has it. */
	const char *const (*programs)[2];
	size_t program_count;
	bool client_makes_sinks;
	/* Before the fork: files it needs, and d->socket. */
	bool (*prepare)(struct sound_daemon *d);
	/* In the child: environment set; returns only if exec failed. */
	void (*exec)(struct sound_daemon *d);
};

static bool make_subdir(const struct sound_daemon *d, const char *name)
{
	char path[SESSION_PATH_MAX + 64];
	snprintf(path, sizeof(path), "%s/%s", d->dir, name);
	return mkdir(path, 0700) == 0 || errno == EEXIST;
}

static bool write_file(const struct sound_daemon *d, const char *name, const char *text)
{
	char path[SESSION_PATH_MAX + 96];
	snprintf(path, sizeof(path), "%s/%s", d->dir, name);
	FILE *f = fopen(path, "we");
	if (!f) {
		log_error("no sound: cannot write %s: %s", path, strerror(errno));
		return false;
	}
	fputs(text, f);
	if (fclose(f) != 0) {
		log_error("no sound: cannot write %s: %s", path, strerror(errno));
		return false;
	}
	return true;
}

static bool set_socket(struct sound_daemon *d, const char *name)
{
	if (snprintf(d->socket, sizeof(d->socket), "%s/%s", d->dir, name) >=
			(int)sizeof(d->socket) ||
		snprintf(d->address, sizeof(d->address), "unix:%s", d->socket) >=
			(int)sizeof(d->address)) {
		log_error("no sound: the path %s is too long for a socket", d->dir);
		return false;
	}
	return true;
}

/* PulseAudio: the native protocol on our socket, the null sinks, and the
 * defaults, all from its start-up script. */
static bool pulseaudio_prepare(struct sound_daemon *d)
{
	if (!set_socket(d, "native")) {
		return false;
	}
	char script[1024];
	snprintf(script, sizeof(script),
		"load-module module-native-protocol-unix auth-anonymous=1 socket=%s\n"
		"load-module module-null-sink sink_name=" SINK " rate=%d channels=%d norewinds=1 "
		"sink_properties=device.description=rcomp\n"
		"load-module module-null-sink sink_name=" MIC_SINK " rate=%d channels=%d "
		"sink_properties=device.description=rcomp-microphone\n"
		"load-module module-always-sink\n"
		"load-module module-suspend-on-idle timeout=1\n"
		"set-default-sink " SINK "\n"
		"set-default-source " MIC_SINK ".monitor\n",
		d->socket, WIRE_AUDIO_RATE, WIRE_AUDIO_CHANNELS, WIRE_AUDIO_RATE,
		WIRE_AUDIO_CHANNELS);
	return write_file(d, "default.pa", script);
}

/* In the daemon's child: name sets the variable name to prefix, then a
 * place in the daemon's directory. */
static void set_env_in(const struct sound_daemon *d, const char *name, const char *prefix,
	const char *place)
{
	char value[SESSION_PATH_MAX + 48];
	snprintf(value, sizeof(value), "%s%s/%s", prefix, d->dir, place);
	setenv(name, value, 1);
}

static void pulseaudio_exec(struct sound_daemon *d)
{
	set_env_in(d, "PULSE_RUNTIME_PATH", "", "runtime");
	set_env_in(d, "PULSE_STATE_PATH", "", "state");
	char path[SESSION_PATH_MAX + 32];
	snprintf(path, sizeof(path), "%s/default.pa", d->dir);
	/* Without shared memory: pulseaudio 16's memfd path logs errors with
	 * some clients (its issue 824), and sound is a few hundred KB/s. */
	execlp("pulseaudio", "pulseaudio", "-n", "--daemonize=no", "--exit-idle-time=-1",
		"--use-pid-file=no", "--disable-shm=yes", "--log-target=stderr",
		"--log-level=error", "-F", path, (char *)NULL);
}

static const char *const pulseaudio_programs[][2] = {{"pulseaudio", "pulseaudio"}};

/* PipeWire: its runtime directory is ours, so pipewire-pulse's socket is
 * runtime/pulse/native, linked as native where PulseAudio's would be; the
 * sinks are made by our client once it answers. */
static bool pipewire_prepare(struct sound_daemon *d)
{
	static const char *const dirs[] = {"runtime", "config", "config/pipewire",
		"config/pipewire/pipewire.conf.d", "config/wireplumber",
		"config/wireplumber/main.lua.d", "config/wireplumber/bluetooth.lua.d", "state"};
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		if (!make_subdir(d, dirs[i])) {
			log_error("no sound: cannot make %s/%s: %s", d->dir, dirs[i],
				strerror(errno));
			return false;
		}
	}
	char link[SESSION_PATH_MAX + 16];
	snprintf(link, sizeof(link), "%s/native", d->dir);
	unlink(link);
	if (symlink("runtime/pulse/native", link) < 0) {
		log_error("no sound: cannot link %s: %s", link, strerror(errno));
		return false;
	}
	/* After 50-*-config.lua turns them on, before 90-enable-all.lua. */
	/* One graph period, 10 ms at 48 kHz as our capture reads, fixed: a
	 * graph that changes its period as streams come and go (PipeWire's
	 * default) glitches each time it does. */
	return set_socket(d, "native") &&
		write_file(d, "config/pipewire/pipewire.conf.d/60-rcomp.conf",
			"# rcomp: one rate and one period for the session's graph\n"
			"context.properties = {\n"
			"    default.clock.rate = 48000\n"
			"    default.clock.allowed-rates = [ 48000 ]\n"
			"    default.clock.quantum = 480\n"
			"    default.clock.min-quantum = 480\n"
			"    default.clock.max-quantum = 480\n"
			"}\n") &&
		write_file(d, "config/wireplumber/main.lua.d/60-rcomp.lua",
			"-- rcomp: a session's sound server opens no device of the host's\n"
			"alsa_monitor.enabled = false\n"
			"v4l2_monitor.enabled = false\n"
			"libcamera_monitor.enabled = false\n") &&
		write_file(d, "config/wireplumber/bluetooth.lua.d/60-rcomp.lua",
			"bluez_monitor.enabled = false\n");
}

/* The bus, then pipewire (whose portal module looks for the bus), then
 * wireplumber (which needs both) and pipewire-pulse; the first TERM, or
 * pipewire-pulse ending, ends the whole group. Each waits at most 8 s. */
static const char pipewire_script[] =
	"trap 'trap - TERM; kill 0' TERM HUP INT\n"
	"await() {\n"
	"\ti=0\n"
	"\tuntil [ -S \"$XDG_RUNTIME_DIR/$1\" ]; do\n"
	"\t\tkill -0 $2 2>/dev/null || exit 1\n"
	"\t\ti=$((i + 1)); [ $i -lt 400 ] || exit 1\n"
	"\t\tsleep 0.02\n"
	"\tdone\n"
	"}\n"
	"dbus-daemon --session --nofork --nopidfile --address=\"$DBUS_SESSION_BUS_ADDRESS\" "
	"2>/dev/null &\n"
	"await bus $!\n"
	"pipewire &\n"
	"await pipewire-0 $!\n"
	"wireplumber &\n"
	"pipewire-pulse &\n"
	"wait $!\n"
	"trap - TERM\n"
	"kill 0\n";

static void pipewire_exec(struct sound_daemon *d)
{
	set_env_in(d, "XDG_RUNTIME_DIR", "", "runtime");
	set_env_in(d, "DBUS_SESSION_BUS_ADDRESS", "unix:path=", "runtime/bus");
	set_env_in(d, "XDG_CONFIG_HOME", "", "config");
	set_env_in(d, "XDG_STATE_HOME", "", "state");
	static const char *const gone[] = {"PIPEWIRE_RUNTIME_DIR", "PIPEWIRE_REMOTE",
		"PIPEWIRE_CONFIG_DIR", "DISPLAY", "WAYLAND_DISPLAY"};
	for (size_t i = 0; i < sizeof(gone) / sizeof(gone[0]); i++) {
		unsetenv(gone[i]);
	}
	execlp("sh", "sh", "-c", pipewire_script, (char *)NULL);
}

static const char *const pipewire_programs[][2] = {{"pipewire", "pipewire"},
	{"pipewire-pulse", "pipewire-pulse"}, {"wireplumber", "wireplumber"},
	{"dbus-daemon", "dbus-daemon"}};

static const struct sound_daemon_kind kinds[] = {
	[0] = {"pulseaudio", pulseaudio_programs, 1, false, pulseaudio_prepare, pulseaudio_exec},
	[1] = {"pipewire", pipewire_programs, 4, true, pipewire_prepare, pipewire_exec},
};
static const struct sound_daemon_kind *const pulseaudio = &kinds[0];
static const struct sound_daemon_kind *const pipewire = &kinds[1];

static bool on_path(const char *program)
{
	const char *path = getenv("PATH");
	if (!path) {
		return false;
	}
	while (*path) {
		size_t n = strcspn(path, ":");
		char file[4096];
		if (n > 0 && n + strlen(program) + 2 <= sizeof(file)) {
			snprintf(file, sizeof(file), "%.*s/%s", (int)n, path, program);
			if (access(file, X_OK) == 0) {
				return true;
			}
		}
		path += n + (path[n] == ':');
	}
	return false;
}

/* The first program of kind that is missing, NULL if none is. */
static const char *const *missing(const struct sound_daemon_kind *kind)
{
	for (size_t i = 0; i < kind->program_count; i++) {
		if (!on_path(kind->programs[i][0])) {
			return kind->programs[i];
		}
	}
	return NULL;
}

static const struct sound_daemon_kind *choose(enum rc_audio want)
{
	const struct sound_daemon_kind *kind = want == RC_AUDIO_PIPEWIRE ? pipewire : pulseaudio;
	const char *const *lacking = missing(kind);
	if (want == RC_AUDIO_ON && lacking) {
		if (!missing(pipewire)) {
			return pipewire;
		}
		log_error("no sound: neither pulseaudio nor pipewire-pulse is installed (Debian: "
			  "apt install pulseaudio, or pipewire-pulse wireplumber dbus-daemon); the "
			  "app runs without sound");
		return NULL;
	}
	if (lacking) {
		log_error("no sound: %s is not installed (Debian: apt install %s); the app runs "
			  "without sound",
			lacking[0], lacking[1]);
		return NULL;
	}
	return kind;
}

/* DIR/NAME.sound beside the session's socket, or a private directory in
 * the runtime directory for a session that is not recorded. */
static bool make_dir(struct sound_daemon *d, const struct rc_record *record)
{
	if (record->dir[0] &&
		session_path(d->dir, sizeof(d->dir), record->dir, record->name, "sound") &&
		strlen(d->dir) + strlen("/runtime/pulse/native") < SESSION_PATH_MAX) {
		if (mkdir(d->dir, 0700) == 0 || errno == EEXIST) {
			d->dir_made = true;
			return true;
		}
	}
	const char *runtime = getenv("XDG_RUNTIME_DIR");
	int n = snprintf(d->dir, sizeof(d->dir), "%s/rcomp-sound-XXXXXX",
		runtime && *runtime ? runtime : "/tmp");
	if (n <= 0 || (size_t)n + strlen("/runtime/pulse/native") >= SESSION_PATH_MAX ||
		!mkdtemp(d->dir)) {
		log_error("no sound: cannot make a directory for the sound server: %s",
			strerror(errno));
		return false;
	}
	d->dir_made = true;
	return true;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	remove(path);
	return 0;
}

static pid_t spawn(struct sound_daemon *d)
{
	pid_t pid = fork();
	if (pid != 0) {
		return pid;
	}
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	setpgid(0, 0); /* not in the app's group: ending the app's leftovers spares it */
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null >= 0) {
		dup2(null, STDIN_FILENO);
	}
	dup2(STDERR_FILENO, STDOUT_FILENO); /* stdout may carry the stream (--stdio) */
	setenv("HOME", d->dir, 1); /* its cookie and config: nothing of the user's */
	unsetenv("PULSE_SERVER");
	d->kind->exec(d);
	_exit(127);
}

/* Until the server answers on its socket, or gives up. */
static bool wait_ready(struct sound_daemon *d)
{
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", d->socket);
	for (int waited = 0; waited < READY_WAIT_MS; waited += 5) {
		int status;
		if (waitpid(d->pid, &status, WNOHANG) == d->pid) {
			d->pid = 0;
			log_error("no sound: %s did not start (it exited with status %d); the app "
				  "runs without sound",
				d->kind->name, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
			return false;
		}
		int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		bool up = fd >= 0 && connect(fd, (struct sockaddr *)&addr, sizeof(addr)) == 0;
		if (fd >= 0) {
			close(fd);
		}
		if (up) {
			return true;
		}
		nanosleep(&(struct timespec){.tv_nsec = 5000000}, NULL);
	}
	log_error("no sound: %s did not answer within %d s; the app runs without sound",
		d->kind->name, READY_WAIT_MS / 1000);
	return false;
}

bool sound_daemon_start(struct sound_daemon *d, enum rc_audio want, const struct rc_record *record)
{
	*d = (struct sound_daemon){0};
	d->kind = choose(want);
	if (!d->kind || !make_dir(d, record) || !d->kind->prepare(d)) {
		goto fail;
	}
	d->pid = spawn(d);
	if (d->pid < 0) {
		d->pid = 0;
		log_error("no sound: cannot start %s: %s", d->kind->name, strerror(errno));
		goto fail;
	}
	if (!wait_ready(d)) {
		goto fail;
	}
	log_debug("sound server (%s) at %s", d->kind->name, d->address);
	return true;
fail:
	sound_daemon_stop(d);
	return false;
}

void sound_daemon_stop(struct sound_daemon *d)
{
	if (d->pid > 0) {
		kill(-d->pid, SIGTERM);
		/* It exits at once; a server that does not is not waited for. */
		for (int waited = 0; waited < STOP_WAIT_MS; waited += 10) {
			if (waitpid(d->pid, NULL, WNOHANG) != 0) {
				break;
			}
			nanosleep(&(struct timespec){.tv_nsec = 10000000}, NULL);
		}
		d->pid = 0;
	}
	if (d->dir_made) {
		/* Ours alone (mode 0700), with whatever the server kept there. */
		nftw(d->dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
		d->dir_made = false;
	}
}

const char *sound_daemon_name(const struct sound_daemon *d)
{
	return d->kind ? d->kind->name : "none";
}

bool sound_daemon_client_makes_sinks(const struct sound_daemon *d)
{
	return d->kind && d->kind->client_makes_sinks;
}
