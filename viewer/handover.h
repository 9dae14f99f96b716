/* Files to and from the session (handover.c, over protocol/files.h). */
#ifndef RCOMP_VIEWER_HANDOVER_H
#define RCOMP_VIEWER_HANDOVER_H

#include <stdbool.h>
#include <stdint.h>

#include "wire.h"

struct rv_viewer;

bool handover_init(struct rv_viewer *viewer);
void handover_finish(struct rv_viewer *viewer);
/* Each turn: bytes go while the link has room. True while hashing is left
 * that no message will wake the loop for. */
bool handover_sync(struct rv_viewer *viewer);
void handover_handle(struct rv_viewer *viewer, const struct wire_msg *msg);
void handover_link_down(struct rv_viewer *viewer);
void handover_link_up(struct rv_viewer *viewer);
/* Local files dropped on window at x, y (24.8): to the session. The
 * group's id, or 0 (logged). */
uint32_t handover_drop(struct rv_viewer *viewer, uint32_t window, int32_t x, int32_t y,
	const char *const *paths, int n);
/* An app's drag, dropped on a local target that asked for its
 * text/uri-list (written to fd, which this takes): the session is asked for
 * the files (drag_files), and fd gets the URIs of their copies here once
 * whole; where the drag names no file, its list as any drag's data. */
void handover_drag_files(struct rv_viewer *viewer, int fd);
void handover_drag_no_files(struct rv_viewer *viewer, uint32_t serial);
/* The person's answer to a question about the session's group (files =
 * ask). */
void handover_answer(struct rv_viewer *viewer, uint32_t group, bool yes);
/* --stats: a line for each group under way. */
void handover_stats(struct rv_viewer *viewer, void (*line)(const char *text));

#endif
