/*
 * The session's sound: a private PulseAudio server (the pulseaudio daemon,
 * our child) that the app plays into, its null sink's monitor captured and
 * sent to the viewer as Opus while some app plays and a viewer that wants
 * sound is attached, and the viewer's microphone played into a second null
 * sink whose monitor is the session's default source.
 */
#ifndef RCOMP_SOUND_H
#define RCOMP_SOUND_H

#include <stdbool.h>
#include <sys/types.h>

#include "server.h"

/* Starts the sound server (unless --audio off). Without one the session
 * runs silent, after one line that says why. */
void sound_start(struct rc_server *server);
/* The session's end: the capture and the microphone stop (while the event
 * loop still runs); the sound server itself goes with sound_end_server,
 * once the apps that play into it have ended. */
void sound_finish(struct rc_server *server);
void sound_end_server(struct rc_server *server);
/* What the app's environment needs (PULSE_SERVER), NULL: nothing. */
const char *sound_server_address(const struct rc_server *server);
/* Whether pid is the sound server: it is no app's and does not keep the
 * session. */
bool sound_owns_pid(const struct rc_server *server, pid_t pid);
/* The sound server exited (reaped by the app room's SIGCHLD handler). */
void sound_daemon_exited(struct rc_server *server, int status);
/* A viewer attached (wants: its hello asked for sound) or left. */
void sound_viewer_changed(struct rc_server *server, bool wants);
/* The viewer's microphone. */
void sound_mic(struct rc_server *server, const struct wire_msg *msg);
/* Whether sound goes to viewers and its end has not yet: what the apps
 * played last is still on its way (the session waits for it to end). */
bool sound_playing_out(struct rc_server *server);
/* For --stats; empty when there is nothing to say. */
void sound_describe(struct rc_server *server, char *out, size_t size);

#endif
