/*
 * The app's asks of the desktop, on the local window (desktop.h). An
 * activation is asked with a token of the local compositor's made for the
 * window's surface and no input serial: wlroots takes a serial only from
 * the surface that has the keyboard focus, and a window asking to be
 * activated has not; the desktop then focuses it or marks it urgent, as
 * its own rule says (sway's focus_on_window_activation, urgent by
 * default).
 */
#include <stdint.h>

#include "desktop.h"
#include "idle-inhibit-unstable-v1-client-protocol.h"
#include "log.h"
#include "xdg-activation-v1-client-protocol.h"

void desktop_bind_idle(struct rv_viewer *viewer, struct wl_registry *registry, uint32_t name)
{
	viewer->idle_manager =
		wl_registry_bind(registry, name, &zwp_idle_inhibit_manager_v1_interface, 1);
}

/* The viewer whose tokens come (rcomp-view has one): a token's listener
 * data is the window's id, since the window may go before its token
 * comes. */
static struct rv_viewer *asking;

void desktop_bind_activation(struct rv_viewer *viewer, struct wl_registry *registry, uint32_t name)
{
	viewer->activation = wl_registry_bind(registry, name, &xdg_activation_v1_interface, 1);
	asking = viewer;
}

void desktop_idle_inhibit(struct rv_window *window, const struct wire_window_idle_inhibit *msg)
{
	struct rv_viewer *viewer = window->viewer;
	if (msg->inhibit && !window->idle_inhibitor) {
		if (!viewer->idle_manager) {
			log_info("window %u keeps the screen awake, but this desktop has no "
				 "idle-inhibit: it may sleep",
				window->id);
			return;
		}
		window->idle_inhibitor =
			zwp_idle_inhibit_manager_v1_create_inhibitor(viewer->idle_manager,
				window->surface);
		log_debug("window %u keeps the screen awake", window->id);
	} else if (!msg->inhibit && window->idle_inhibitor) {
		zwp_idle_inhibitor_v1_destroy(window->idle_inhibitor);
		window->idle_inhibitor = NULL;
		log_debug("window %u no longer keeps the screen awake", window->id);
	}
}

/* The token came: the window, if it is still here, is activated with it. */
static void token_done(void *data, struct xdg_activation_token_v1 *token, const char *name)
{
	uint32_t id = (uint32_t)(uintptr_t)data;
	xdg_activation_token_v1_destroy(token);
	struct rv_window *window = asking ? idmap_get(&asking->window_ids, id) : NULL;
	if (window && asking->activation) {
		xdg_activation_v1_activate(asking->activation, name, window->surface);
		log_debug("window %u: activated on this desktop", id);
	}
}

static const struct xdg_activation_token_v1_listener token_listener = {
	.done = token_done,
};

void desktop_activate(struct rv_window *window)
{
	struct rv_viewer *viewer = window->viewer;
	if (!viewer->activation) {
		log_info("window %u asks to be activated, but this desktop has no xdg-activation",
			window->id);
		return;
	}
	struct xdg_activation_token_v1 *token =
		xdg_activation_v1_get_activation_token(viewer->activation);
	xdg_activation_token_v1_add_listener(token, &token_listener, (void *)(uintptr_t)window->id);
	xdg_activation_token_v1_set_surface(token, window->surface);
	xdg_activation_token_v1_commit(token);
}

void desktop_window_gone(struct rv_window *window)
{
	if (window->idle_inhibitor) {
		zwp_idle_inhibitor_v1_destroy(window->idle_inhibitor);
		window->idle_inhibitor = NULL;
	}
}

void desktop_finish(struct rv_viewer *viewer)
{
	if (viewer->idle_manager) {
		zwp_idle_inhibit_manager_v1_destroy(viewer->idle_manager);
		viewer->idle_manager = NULL;
	}
	if (viewer->activation) {
		xdg_activation_v1_destroy(viewer->activation);
		viewer->activation = NULL;
	}
}
