/*
 * The connection of the attached viewer: its channel, the send queue and
 * flow control that frames wait for, and reading its messages for the
 * handler that owns it. A connection never calls up into the compositor: it
 * hands messages and its end to the handler's functions.
 */
#ifndef RCOMP_CONNECTION_H
#define RCOMP_CONNECTION_H

#include <stdbool.h>
#include <stdint.h>
#include <wayland-server-core.h>

#include "channel.h"
#include "flow.h"
#include "wire.h"

struct rc_connection_handler {
	/* A message from the viewer; false to stop reading (after closing). */
	bool (*message)(void *data, const struct wire_msg *msg);
	/* The connection is about to be freed. */
	void (*closed)(void *data);
};

struct rc_connection {
	struct channel channel;
	struct wl_event_source *in_source, *out_source;
	bool writable_armed; /* out_source waits for WL_EVENT_WRITABLE */
	bool welcomed; /* the hello was answered: frames may flow */
	bool video; /* the viewer decodes H.264 */
	bool copy_rect; /* the viewer applies copy_rect */
	bool replace; /* and frames of new pixels (WIRE_FRAME_REPLACE) */
	enum wire_compression compression; /* what its lossless frames use */
	uint16_t minor; /* the viewer's minor version: what it understands */
	bool closing; /* flush what is queued, then close */
	struct flow flow;
	uint64_t frames; /* sent, for stats */
	uint32_t focus; /* the window with the viewer's keyboard focus; 0: none */
	bool stats_wanted; /* window_stats once a second (its HUD shows them) */
	/* What its frames may hold (connection_may_send_frame): raw bytes
	 * reserved for frames being encoded for it. */
	uint64_t reserved;
	/* Progress: the channel's bytes written at the last flush, and since
	 * when something has waited while the link took nothing (0: it took
	 * something, or nothing waits). After stall_timeout_ms of that the
	 * viewer is dropped. */
	uint64_t written;
	uint64_t waiting_since_us;
	int stall_timeout_ms;
	struct wl_event_source *stall_timer;
	bool stall_armed;
	char name[32]; /* "viewer 3", for the log */
	const struct rc_connection_handler *handler;
	void *data;
};

/* Takes the fds; NULL (fds closed) when out of memory. A viewer whose
 * link takes nothing for stall_timeout_ms while something waits is
 * dropped; name says who it is in the log. */
struct rc_connection *connection_create(struct wl_event_loop *loop, int in_fd, int out_fd,
	int stall_timeout_ms, const char *name, const struct rc_connection_handler *handler,
	void *data);
/* Tells the handler, then frees. NULL is ignored. */
void connection_destroy(struct rc_connection *conn);

/* Queues one message. A viewer that stops reading is disconnected at the
 * next flush; until then messages to it are dropped. */
void connection_send(struct rc_connection *conn, const struct wire_msg *msg);
/* Queues a message about a window after the window's last frame if that
 * is still queued (so the two stay in order), else with control; *last
 * then marks it. */
void connection_send_window(struct rc_connection *conn, struct channel_mark *last,
	const struct wire_msg *msg);
/* Queues a frame of window, already encoded (after a frame_mark if it
 * answers an input_mark) (by an encoder's worker): in
 * the focus class if the window has the viewer's keyboard focus, else with
 * the other windows' frames. False, with nothing queued, if the queue would
 * pass its limit. */
bool connection_send_frame(struct rc_connection *conn, uint32_t window, uint32_t input_mark,
	const uint8_t *bytes, size_t size, struct channel_mark *mark);
/* Sends a goodbye; the connection closes once it is written. */
void connection_goodbye(struct rc_connection *conn, enum wire_goodbye_reason reason, int status,
	const char *text);
/* The viewer broke the protocol: says why, in the log and to it, and
 * closes. */
void connection_refuse(struct rc_connection *conn, const char *text);

/* Writes what is queued. May destroy the connection (the handler hears
 * of it); the caller must not use conn afterwards. */
void connection_flush(struct rc_connection *conn);
/* Tries for up to wait_ms to write what is queued (a last goodbye), then
 * destroys. */
void connection_close_now(struct rc_connection *conn, int wait_ms);

/*
 * What a viewer's frames may hold. One frame carries at most
 * connection_frame_max raw bytes (encode.c sends more damage as bands):
 * FRAME_RAW_MIN until the viewer has acknowledged a frame, FRAME_RAW_MAX
 * after, so one that never reads holds a band of a huge window, not the
 * window.
 * Its frames queued and being encoded hold at most twice that.
 */
uint64_t connection_frame_max(const struct rc_connection *conn);
/* A window's next frame is encoded only once its last one has left the
 * send queue (the newest pixels win; while the link is short, frames of
 * windows without focus wait behind the focused one's and come less often),
 * the flow allows (a window with nothing in flight may always send), and
 * a frame of up to estimate raw bytes fits what the viewer may hold. */
bool connection_may_send_frame(const struct rc_connection *conn, bool window_in_flight,
	struct channel_mark last, uint64_t estimate);
/* A frame of up to bytes is being encoded for the viewer, until released. */
void connection_reserve(struct rc_connection *conn, uint64_t bytes);
void connection_release(struct rc_connection *conn, uint64_t bytes);
/* The send queue is short enough for bulk data (clipboard) to join it. */
bool connection_may_send_bulk(const struct rc_connection *conn);
void connection_frame_sent(struct rc_connection *conn, uint32_t window, uint32_t seq,
	uint32_t bytes, uint64_t now_us);
/* The round trip of the newest frame acknowledged, or -1. */
int64_t connection_acked(struct rc_connection *conn, uint32_t window, uint32_t seq);
/* The window is gone: its frames in flight will never be acknowledged. */
void connection_forget_window(struct rc_connection *conn, uint32_t window);

#endif
