/* What the local desktop offers us, and what we fetch for it (see offer.h). */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "connection.h"
#include "log.h"
#include "offer.h"
#include "primary-selection-unstable-v1-client-protocol.h"

void offer_destroy(struct rv_offer *offer)
{
	if (!offer) {
		return;
	}
	if (offer->primary) {
		zwp_primary_selection_offer_v1_destroy(offer->proxy);
	} else {
		wl_data_offer_destroy(offer->proxy);
	}
	free(offer);
}

static void offer_add_type(struct rv_offer *offer, const char *mime)
{
	mime_list_add(&offer->types, mime, strlen(mime));
}

static void data_offer_offer(void *data, struct wl_data_offer *proxy, const char *mime)
{
	offer_add_type(data, mime);
}

static void data_offer_source_actions(void *data, struct wl_data_offer *proxy, uint32_t actions)
{
	struct rv_offer *offer = data;
	offer->source_actions = actions & WIRE_DND_ALL;
}

static void data_offer_action(void *data, struct wl_data_offer *proxy, uint32_t action)
{
	/* The local desktop chose the drag's action (or after the drop, took
	 * the one the app picked after an ask): the app hears it. */
	struct rv_offer *offer = data;
	struct rv_viewer *viewer = offer->viewer;
	struct rv_clipboard *c = viewer ? &viewer->clipboard : NULL;
	bool ours = c && (c->dnd_offer == offer || (!c->dnd_offer && c->dnd_dropped == offer));
	if (ours && (action & (action - 1)) == 0) {
		struct wire_msg msg = {.type = WIRE_DND_ACTION,
			.dnd_action = {.action = action & WIRE_DND_ALL}};
		connection_send(viewer, &msg);
	}
}

static const struct wl_data_offer_listener data_offer_listener = {
	.offer = data_offer_offer,
	.source_actions = data_offer_source_actions,
	.action = data_offer_action,
};

static void primary_offer_offer(void *data, struct zwp_primary_selection_offer_v1 *proxy,
	const char *mime)
{
	offer_add_type(data, mime);
}

static const struct zwp_primary_selection_offer_v1_listener primary_offer_listener = {
	.offer = primary_offer_offer,
};

struct rv_offer *offer_new(struct rv_viewer *viewer, struct wl_data_offer *proxy)
{
	struct rv_offer *offer = calloc(1, sizeof(*offer));
	if (!offer) {
		wl_data_offer_destroy(proxy);
		return NULL;
	}
	offer->proxy = proxy;
	offer->viewer = viewer;
	wl_data_offer_add_listener(proxy, &data_offer_listener, offer);
	return offer;
}

struct rv_offer *offer_new_primary(struct zwp_primary_selection_offer_v1 *proxy)
{
	struct rv_offer *offer = calloc(1, sizeof(*offer));
	if (!offer) {
		zwp_primary_selection_offer_v1_destroy(proxy);
		return NULL;
	}
	offer->proxy = proxy;
	offer->primary = true;
	zwp_primary_selection_offer_v1_add_listener(proxy, &primary_offer_listener, offer);
	return offer;
}

void offer_fetch(struct rv_viewer *viewer, enum wire_selection_kind kind, const char *mime, int fd)
{
	struct rv_clipboard *c = &viewer->clipboard;
	if (!viewer->connection.connected) {
		close(fd);
		return;
	}
	if (!transfers_request(&c->transfers, kind, mime, fd)) {
		log_error("clipboard: too many pastes at once; this one gets nothing");
	}
}

void offer_source_type(void *source, const char *mime)
{
	wl_data_source_offer(source, mime);
}
