/*
 * A client of a PulseAudio server (PipeWire's pulse server too), as both
 * programs are one: rcomp-run of the session's own server, rcomp-view of
 * the local desktop's. libpulse's threaded main loop runs the client on a
 * thread of its own; its callbacks run there with the loop's lock held,
 * and any other thread takes the lock (pa_threaded_mainloop_lock) around
 * its calls.
 */
#ifndef RCOMP_PULSE_H
#define RCOMP_PULSE_H

#include <pulse/pulseaudio.h>
#include <stdbool.h>
#include <stddef.h>

#include "audio.h"

struct pulse {
	pa_threaded_mainloop *loop;
	pa_context *context;
};

/* Sound as the wire carries it (16-bit, its rate and channels), for every
 * stream of either program. */
extern const pa_sample_spec pulse_wire_spec;

/* Starts a client named name of the server at address (NULL: the user's
 * own), never spawning one; each change of its state is told to on_state
 * on the loop's thread. False, with nothing left to close, if it cannot:
 * *error then says why. */
bool pulse_open(struct pulse *p, const char *name, const char *address,
	pa_context_notify_cb_t on_state, void *data, const char **error);
/* Stops the loop, ends each of the count streams that is not NULL (and
 * sets it NULL), then the client. A pulse never opened, or zeroed, is a
 * no-op. */
void pulse_close(struct pulse *p, pa_stream **streams, size_t count);

/* A record stream of wire sound from device (NULL: the default source),
 * 10 ms a read, each read told to on_read; NULL if it cannot be made (its
 * reason in pa_context_errno). Under the loop's lock. */
pa_stream *pulse_record(struct pulse *p, const char *name, const char *device,
	pa_stream_flags_t flags, pa_stream_request_cb_t on_read, void *data);
/* Takes all a record stream holds. Where keep, into the framer (started,
 * if it is not running, at the time the first of it was heard), whose
 * packets go to queue; otherwise it is dropped. */
void pulse_read(pa_stream *stream, bool keep, struct audio_framer *framer,
	struct audio_queue *queue);

/* An operation nobody waits for (NULL if it could not be started). */
void pulse_forget(pa_operation *op);

#endif
