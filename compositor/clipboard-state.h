/*
 * What the clipboard keeps (clipboard.h): types only, for server.h.
 */
#ifndef RCOMP_CLIPBOARD_STATE_H
#define RCOMP_CLIPBOARD_STATE_H

#include <stdint.h>
#include <wayland-server-core.h>

#include "transfer.h"

/* Clipboard and primary selection (clipboard.c). */
struct rc_clipboard {
	struct transfers transfers;
	struct wl_event_source *sources[TRANSFER_MAX]; /* by transfer slot */
	uint32_t masks[TRANSFER_MAX]; /* what each source waits for now */
	struct wl_event_source *idle_timer; /* ends transfers that stall */
	struct wl_listener request_set_selection;
	struct wl_listener request_set_primary_selection;
	struct wl_listener set_selection;
	struct wl_listener set_primary_selection;
};

#endif
