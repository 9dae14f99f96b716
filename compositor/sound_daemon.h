/*
 * The session's own sound server, as a process: PulseAudio where the host
 * has it, else PipeWire with pipewire-pulse. Either way the apps and
 * rcomp-run speak the PulseAudio protocol to a socket in the session's
 * sound directory, so sessions never hear each other or the host's own.
 */
#ifndef RCOMP_SOUND_DAEMON_H
#define RCOMP_SOUND_DAEMON_H

#include <stdbool.h>
#include <sys/types.h>

#include "server.h"

struct sound_daemon_kind;

struct sound_daemon {
	const struct sound_daemon_kind *kind;
	pid_t pid; /* 0: none; the leader of its own process group */
	char dir[SESSION_PATH_MAX];
	char socket[SESSION_PATH_MAX];
	char address[SESSION_PATH_MAX + 16]; /* unix:SOCKET */
	bool dir_made;
};

/* Starts the server want asks for (RC_AUDIO_ON: PulseAudio, else PipeWire)
 * and waits until it answers. False after one log line saying why; then
 * nothing is left behind. */
bool sound_daemon_start(struct sound_daemon *d, enum rc_audio want, const struct rc_record *record);
/* Ends the server and everything it started, and removes its directory.
 * Quiet for one never started. */
void sound_daemon_stop(struct sound_daemon *d);
/* The server's name, for messages. */
const char *sound_daemon_name(const struct sound_daemon *d);
/* Whether its sinks are made by its client over the protocol (PipeWire),
 * not by the server's own start-up script (PulseAudio). */
bool sound_daemon_client_makes_sinks(const struct sound_daemon *d);

#endif
