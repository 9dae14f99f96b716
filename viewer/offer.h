/*
 * What the local desktop offers us (a selection, or a drag over our
 * windows): its MIME types and a drag's actions, as its data offer says;
 * and what a local app asks of what we offer it (a paste of the remote
 * selection, the data of an app's drag), fetched from the server. Shared
 * by the clipboard (clipboard.c) and drag and drop (dnd.c).
 */
#ifndef RCOMP_VIEWER_OFFER_H
#define RCOMP_VIEWER_OFFER_H

#include <wayland-client.h>

#include "mime.h"
#include "viewer.h"

struct zwp_primary_selection_offer_v1;

struct rv_offer {
	void *proxy; /* wl_data_offer or zwp_primary_selection_offer_v1 */
	bool primary;
	bool own;
	struct mime_list types;
	uint32_t source_actions; /* a drag's */
	struct rv_viewer *viewer;
};

/* A new data offer of the local desktop's, named by its types as they come
 * (NULL when out of memory: the proxy is destroyed). */
struct rv_offer *offer_new(struct rv_viewer *viewer, struct wl_data_offer *proxy);
struct rv_offer *offer_new_primary(struct zwp_primary_selection_offer_v1 *proxy);
/* NULL is a no-op. */
void offer_destroy(struct rv_offer *offer);

/* A local app reads what we offer of kind (a selection, or WIRE_SELECTION_DND
 * for an app's drag) as mime: the server sends it into fd (taken). */
void offer_fetch(struct rv_viewer *viewer, enum wire_selection_kind kind, const char *mime, int fd);
/* mime_list_each's callback: source (a wl_data_source) offers mime. */
void offer_source_type(void *source, const char *mime);

#endif
