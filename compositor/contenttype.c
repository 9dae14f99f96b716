/*
 * wp_content_type_v1: an app says what a surface shows (a photo, a video,
 * a game, or nothing in particular); the window's encoders take its root
 * surface's as a hint (encode.c). wlroots 0.15 has no implementation:
 * libwayland-server with the staging XML from Debian's wayland-protocols.
 * The type is double-buffered: it applies with the surface's next commit,
 * and a surface whose object is destroyed is back to none.
 */
#include <stdlib.h>
#include <wayland-server-core.h>
#include <wlr/types/wlr_surface.h>
#include <wlr/util/addon.h>

#include "content-type-v1-protocol.h"
#include "contenttype.h"
#include "log.h"

struct rc_content_type {
	struct wl_resource *resource;
	struct wlr_surface *surface; /* NULL once the surface is gone */
	struct wlr_addon addon; /* on the surface, its owner &addon_impl */
	struct wl_listener commit;
	uint32_t pending, current;
};

/* Lets go of the surface: the object stays, inert. */
static void detach(struct rc_content_type *ct)
{
	if (ct->surface) {
		wl_list_remove(&ct->commit.link);
		wlr_addon_finish(&ct->addon);
		ct->surface = NULL;
	}
}

static void addon_destroy(struct wlr_addon *addon)
{
	struct rc_content_type *ct = wl_container_of(addon, ct, addon);
	detach(ct);
}

static const struct wlr_addon_interface addon_impl = {
	.name = "rcomp_content_type",
	.destroy = addon_destroy,
};

static void handle_commit(struct wl_listener *listener, void *data)
{
	struct rc_content_type *ct = wl_container_of(listener, ct, commit);
	if (ct->current != ct->pending) {
		log_debug("a surface shows %s now",
			ct->pending == WP_CONTENT_TYPE_V1_TYPE_GAME	       ? "a game"
				: ct->pending == WP_CONTENT_TYPE_V1_TYPE_VIDEO ? "a video"
				: ct->pending == WP_CONTENT_TYPE_V1_TYPE_PHOTO
				? "a photo"
				: "nothing in particular");
	}
	ct->current = ct->pending;
}

static void set_content_type(struct wl_client *client, struct wl_resource *resource, uint32_t type)
{
	struct rc_content_type *ct = wl_resource_get_user_data(resource);
	/* An unknown type (a later version's) is none. */
	ct->pending = type <= WP_CONTENT_TYPE_V1_TYPE_GAME ? type : WP_CONTENT_TYPE_V1_TYPE_NONE;
}

static void content_type_destroy(struct wl_client *client, struct wl_resource *resource)
{
	wl_resource_destroy(resource);
}

static const struct wp_content_type_v1_interface content_type_impl = {
	.destroy = content_type_destroy,
	.set_content_type = set_content_type,
};

static void content_type_resource_destroy(struct wl_resource *resource)
{
	struct rc_content_type *ct = wl_resource_get_user_data(resource);
	detach(ct);
	free(ct);
}

static void get_surface_content_type(struct wl_client *client, struct wl_resource *manager,
	uint32_t id, struct wl_resource *surface_resource)
{
	struct wlr_surface *surface = wlr_surface_from_resource(surface_resource);
	if (wlr_addon_find(&surface->addons, &addon_impl, &addon_impl)) {
		wl_resource_post_error(manager,
			WP_CONTENT_TYPE_MANAGER_V1_ERROR_ALREADY_CONSTRUCTED,
			"the surface has a wp_content_type_v1 already");
		return;
	}
	struct rc_content_type *ct = calloc(1, sizeof(*ct));
	if (!ct) {
		wl_client_post_no_memory(client);
		return;
	}
	ct->resource = wl_resource_create(client, &wp_content_type_v1_interface,
		wl_resource_get_version(manager), id);
	if (!ct->resource) {
		free(ct);
		wl_client_post_no_memory(client);
		return;
	}
	wl_resource_set_implementation(ct->resource, &content_type_impl, ct,
		content_type_resource_destroy);
	ct->surface = surface;
	wlr_addon_init(&ct->addon, &surface->addons, &addon_impl, &addon_impl);
	ct->commit.notify = handle_commit;
	wl_signal_add(&surface->events.commit, &ct->commit);
}

static void manager_destroy(struct wl_client *client, struct wl_resource *resource)
{
	wl_resource_destroy(resource);
}

static const struct wp_content_type_manager_v1_interface manager_impl = {
	.destroy = manager_destroy,
	.get_surface_content_type = get_surface_content_type,
};

static void manager_bind(struct wl_client *client, void *data, uint32_t version, uint32_t id)
{
	struct wl_resource *resource =
		wl_resource_create(client, &wp_content_type_manager_v1_interface, version, id);
	if (!resource) {
		wl_client_post_no_memory(client);
		return;
	}
	wl_resource_set_implementation(resource, &manager_impl, data, NULL);
}

bool contenttype_init(struct wl_display *display)
{
	return wl_global_create(display, &wp_content_type_manager_v1_interface, 1, NULL,
		       manager_bind) != NULL;
}

enum rc_content contenttype_of(struct wlr_surface *surface)
{
	struct wlr_addon *addon =
		surface ? wlr_addon_find(&surface->addons, &addon_impl, &addon_impl) : NULL;
	if (!addon) {
		return RC_CONTENT_NONE;
	}
	struct rc_content_type *ct = wl_container_of(addon, ct, addon);
	switch (ct->current) {
	case WP_CONTENT_TYPE_V1_TYPE_PHOTO:
		return RC_CONTENT_PHOTO;
	case WP_CONTENT_TYPE_V1_TYPE_VIDEO:
		return RC_CONTENT_VIDEO;
	case WP_CONTENT_TYPE_V1_TYPE_GAME:
		return RC_CONTENT_GAME;
	default:
		return RC_CONTENT_NONE;
	}
}
