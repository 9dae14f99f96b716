/*
 * Presentation feedback on the app's clock (wp_presentation): a commit is
 * presented when the person saw the frame that carried it, at the time
 * the viewer's desktop gave, moved onto rcomp-run's clock by the link's
 * measured offset; a commit whose frame never reached the screen (the
 * link or a newer frame replaced it, the viewer went) is discarded. The
 * viewer with input tells, else the first that sees the window.
 */
#ifndef RCOMP_FEEDBACK_H
#define RCOMP_FEEDBACK_H

#include <stdint.h>

#include "server.h"

bool feedback_init(struct rc_server *server);
/* A frame is being captured from the window's surfaces now. */
void feedback_sampled(struct rc_window *window);
/* Frame seq of the window goes to view's viewer. */
void feedback_sent(struct rc_view *view, uint32_t seq);
/* The viewer's frame_ack of frame seq, sent at viewer_us on its clock: a
 * sample of the clocks' offset, and for a viewer older than minor 11 (or
 * the page) the moment it showed the frame, near enough. */
void feedback_acked(struct rc_viewer *viewer, struct rc_window *window, uint32_t seq,
	uint64_t viewer_us);
/* The viewer's frame_presented; false for a frame never sent. */
bool feedback_presented(struct rc_viewer *viewer, struct rc_window *window,
	const struct wire_frame_presented *msg);
/* The view is going: what waits on its viewer is discarded. */
void feedback_view_gone(struct rc_view *view);
/* The window is going: all it holds is discarded. */
void feedback_window_finish(struct rc_window *window);

#endif
