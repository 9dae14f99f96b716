/*
 * Sound at the viewer: the apps' sound played through the user's own sound
 * server (libpulse, which PipeWire's pulse server answers too), behind a
 * jitter buffer that never grows, kept in step with the frames; and, with
 * --mic, the default source sent to the session.
 */
#ifndef RCOMP_VIEWER_SOUND_H
#define RCOMP_VIEWER_SOUND_H

#include <poll.h>

#include "viewer.h"

void sound_init(struct rv_viewer *viewer);
void sound_finish(struct rv_viewer *viewer);
/* The caps bit for hello. */
uint32_t sound_caps(struct rv_viewer *viewer);
/* The server welcomed us: microphone on if it takes one (server_caps). */
void sound_link_up(struct rv_viewer *viewer, uint32_t server_caps);
void sound_link_down(struct rv_viewer *viewer);
/* The viewer is leaving: what the session's sound left to play is played
 * first, for at most most_ms (it ends with a sound's tail, not a cut). */
void sound_play_out(struct rv_viewer *viewer, int most_ms);
/* audio or audio_end from the server. */
void sound_message(struct rv_viewer *viewer, const struct wire_msg *msg);
/* A frame drawn at drawn_us (server clock) was on screen at shown_us. */
void sound_frame_presented(struct rv_viewer *viewer, uint64_t drawn_us, uint64_t shown_us);
/* The microphone's packets: its fd in the poll, and sending them. */
void sound_poll_fd(struct rv_viewer *viewer, struct pollfd *fd);
void sound_handle_poll(struct rv_viewer *viewer, const struct pollfd *fd);
/* For --stats; empty when there is nothing to say. */
void sound_describe(struct rv_viewer *viewer, char *out, size_t size);

#endif
