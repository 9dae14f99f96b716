/* Files to and from the viewers (handover.c, over protocol/files.h). */
#ifndef RCOMP_HANDOVER_H
#define RCOMP_HANDOVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wire.h"

struct rc_server;
struct rc_viewer;

bool handover_init(struct rc_server *server);
/* drag_files: the files of the drag the viewer's desktop took (its
 * text/uri-list read from the app) go to it as a group of kind drag, or
 * drag_no_files says there are none. */
void handover_drag_files(struct rc_viewer *viewer, uint32_t serial);
void handover_finish(struct rc_server *server);
/* Each turn of the loop: bytes go where the links have room. */
void handover_sync(struct rc_server *server);
/* A file_* message from viewer; false with err where it broke the protocol. */
bool handover_handle(struct rc_viewer *viewer, const struct wire_msg *msg, char *err,
	size_t err_size);
void handover_viewer_gone(struct rc_viewer *viewer);
/* A viewer attached: groups waiting for one go on with it. */
void handover_viewer_welcomed(struct rc_viewer *viewer);
/* The answer to a question about a viewer's group (files = ask), from
 * viewer number by (0: none could be asked). */
void handover_answer(struct rc_server *server, uint32_t group, bool yes, uint32_t by);
#define HANDOVER_NO_VIEWER (-2)
/* rcomp-run --send (kind WIRE_FILES_SEND): paths to every full viewer, or
 * viewer number to; a print (WIRE_FILES_PRINT) to one viewer. The groups
 * started, or -1 with err, or HANDOVER_NO_VIEWER where none takes files. */
int handover_send(struct rc_server *server, uint32_t to, uint32_t kind, const char *const *paths,
	int n, char *err, size_t err_size);
/* rcomp-run --send on the session's socket (fd, taken), its hello read:
 * its send_files is read, the files go, and it is told how they did. */
void handover_add_sender(struct rc_server *server, int fd);
/* --stats: a line for each group under way. */
void handover_stats(struct rc_server *server, void (*line)(const char *text));

#endif
