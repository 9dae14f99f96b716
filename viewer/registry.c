/*
 * The local compositor: connecting to it, and the globals rcomp-view binds
 * (compositor, shm, xdg_wm_base, xdg-decoration, viewporter, data devices,
 * outputs and the seat).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "clipboard.h"
#include "constraint.h"
#include "desktop.h"
#include "gesture.h"
#include "tablet.h"
#include "input.h"
#include "log.h"
#include "status.h"
#include "output.h"
#include "idle-inhibit-unstable-v1-client-protocol.h"
#include "keyboard-shortcuts-inhibit-unstable-v1-client-protocol.h"
#include "pointer-gestures-unstable-v1-client-protocol.h"
#include "pointer-constraints-unstable-v1-client-protocol.h"
#include "primary-selection-unstable-v1-client-protocol.h"
#include "registry.h"
#include "relative-pointer-unstable-v1-client-protocol.h"
#include "text-input-unstable-v3-client-protocol.h"
#include "textinput.h"
#include "presentation-time-client-protocol.h"
#include "viewporter-client-protocol.h"
#include "xdg-activation-v1-client-protocol.h"
#include "tablet-unstable-v2-client-protocol.h"
#include "xdg-output-unstable-v1-client-protocol.h"
#include "xdg-decoration-unstable-v1-client-protocol.h"
#include "xdg-shell-client-protocol.h"

static void wm_base_ping(void *data, struct xdg_wm_base *wm_base, uint32_t serial)
{
	xdg_wm_base_pong(wm_base, serial);
}

static const struct xdg_wm_base_listener wm_base_listener = {
	.ping = wm_base_ping,
};

static void presentation_clock_id(void *data, struct wp_presentation *presentation, uint32_t clock)
{
	struct rv_viewer *viewer = data;
	viewer->presentation_clock = (clockid_t)clock;
}

static const struct wp_presentation_listener presentation_listener = {
	.clock_id = presentation_clock_id,
};

static void registry_global(void *data, struct wl_registry *registry, uint32_t name,
	const char *interface, uint32_t version)
{
	struct rv_viewer *viewer = data;
	if (strcmp(interface, wl_compositor_interface.name) == 0) {
		viewer->compositor = wl_registry_bind(registry, name, &wl_compositor_interface,
			version < 4 ? version : 4);
	} else if (strcmp(interface, wl_subcompositor_interface.name) == 0) {
		viewer->subcompositor =
			wl_registry_bind(registry, name, &wl_subcompositor_interface, 1);
	} else if (strcmp(interface, wp_presentation_interface.name) == 0) {
		viewer->presentation =
			wl_registry_bind(registry, name, &wp_presentation_interface, 1);
		wp_presentation_add_listener(viewer->presentation, &presentation_listener, viewer);
	} else if (strcmp(interface, wp_viewporter_interface.name) == 0) {
		viewer->viewporter = wl_registry_bind(registry, name, &wp_viewporter_interface, 1);
	} else if (strcmp(interface, wl_shm_interface.name) == 0) {
		viewer->shm = wl_registry_bind(registry, name, &wl_shm_interface, 1);
	} else if (strcmp(interface, xdg_wm_base_interface.name) == 0) {
		/* Version 2 tells tiled states. */
		viewer->wm_base = wl_registry_bind(registry, name, &xdg_wm_base_interface,
			version < 2 ? version : 2);
		xdg_wm_base_add_listener(viewer->wm_base, &wm_base_listener, viewer);
	} else if (strcmp(interface, zxdg_decoration_manager_v1_interface.name) == 0 &&
		!viewer->options.app_decorations) {
		viewer->decoration_manager =
			wl_registry_bind(registry, name, &zxdg_decoration_manager_v1_interface, 1);
	} else if (strcmp(interface, wl_data_device_manager_interface.name) == 0) {
		viewer->clipboard.manager = wl_registry_bind(registry, name,
			&wl_data_device_manager_interface, version < 3 ? version : 3);
	} else if (strcmp(interface, zwp_primary_selection_device_manager_v1_interface.name) == 0) {
		viewer->clipboard.primary_manager = wl_registry_bind(registry, name,
			&zwp_primary_selection_device_manager_v1_interface, 1);
	} else if (strcmp(interface, zwp_keyboard_shortcuts_inhibit_manager_v1_interface.name) ==
		0) {
		constraint_bind_inhibit(viewer, registry, name);
	} else if (strcmp(interface, zwp_idle_inhibit_manager_v1_interface.name) == 0) {
		desktop_bind_idle(viewer, registry, name);
	} else if (strcmp(interface, zwp_pointer_gestures_v1_interface.name) == 0) {
		gesture_bind(viewer, registry, name, version);
	} else if (strcmp(interface, xdg_activation_v1_interface.name) == 0) {
		desktop_bind_activation(viewer, registry, name);
	} else if (strcmp(interface, zwp_text_input_manager_v3_interface.name) == 0) {
		textinput_bind(viewer, registry, name);
	} else if (strcmp(interface, zwp_pointer_constraints_v1_interface.name) == 0) {
		constraint_bind(viewer, registry, name);
	} else if (strcmp(interface, zwp_relative_pointer_manager_v1_interface.name) == 0) {
		viewer->seat.relative_manager = wl_registry_bind(registry, name,
			&zwp_relative_pointer_manager_v1_interface, 1);
		input_relative_pointer(viewer);
	} else if (strcmp(interface, zwp_tablet_manager_v2_interface.name) == 0) {
		tablet_bind(viewer, registry, name);
	} else if (strcmp(interface, zxdg_output_manager_v1_interface.name) == 0) {
		output_bind_places(viewer, name, version);
	} else if (strcmp(interface, wl_output_interface.name) == 0) {
		output_add(viewer, name, version);
	} else if (strcmp(interface, wl_seat_interface.name) == 0 && !viewer->seat.seat) {
		uint32_t v = version < 5 ? version : 5;
		struct wl_seat *seat = wl_registry_bind(registry, name, &wl_seat_interface, v);
		input_seat_init(viewer, seat, v);
	}
}

static void registry_global_remove(void *data, struct wl_registry *registry, uint32_t name)
{
	struct rv_viewer *viewer = data;
	output_remove(viewer, name);
}

static const struct wl_registry_listener registry_listener = {
	.global = registry_global,
	.global_remove = registry_global_remove,
};

bool registry_connect(struct rv_viewer *viewer)
{
	viewer->display = wl_display_connect(NULL);
	if (!viewer->display) {
		int err = errno;
		const char *runtime = getenv("XDG_RUNTIME_DIR");
		const char *name = getenv("WAYLAND_DISPLAY");
		if (!runtime || !*runtime) {
			log_error("no local Wayland display: XDG_RUNTIME_DIR is not set; run "
				  "rcomp-view inside your Wayland session, or set XDG_RUNTIME_DIR "
				  "and "
				  "WAYLAND_DISPLAY to its socket");
		} else {
			log_error("no local Wayland display: nothing answers at %s%s%s (%s); run "
				  "rcomp-view inside your Wayland session, or set WAYLAND_DISPLAY "
				  "to "
				  "its socket",
				name && name[0] == '/' ? "" : runtime,
				name && name[0] == '/' ? "" : "/",
				name && *name ? name : "wayland-0", strerror(err));
		}
		viewer->exit_code = RC_EXIT_NO_DISPLAY;
		return false;
	}
	viewer->registry = wl_display_get_registry(viewer->display);
	wl_registry_add_listener(viewer->registry, &registry_listener, viewer);
	wl_display_roundtrip(viewer->display);
	if (!viewer->compositor || !viewer->shm || !viewer->wm_base) {
		log_error("the local compositor lacks wl_compositor, wl_shm or xdg_wm_base");
		return false;
	}
	clipboard_seat(viewer);
	textinput_seat(viewer);
	wl_display_roundtrip(viewer->display); /* seat capabilities, keymap */
	return true;
}

void registry_finish(struct rv_viewer *viewer)
{
	if (viewer->wm_base) {
		xdg_wm_base_destroy(viewer->wm_base);
	}
	if (viewer->shm) {
		wl_shm_destroy(viewer->shm);
	}
	if (viewer->decoration_manager) {
		zxdg_decoration_manager_v1_destroy(viewer->decoration_manager);
	}
	if (viewer->presentation) {
		wp_presentation_destroy(viewer->presentation);
		viewer->presentation = NULL;
	}
	if (viewer->viewporter) {
		wp_viewporter_destroy(viewer->viewporter);
	}
	if (viewer->subcompositor) {
		wl_subcompositor_destroy(viewer->subcompositor);
	}
	if (viewer->compositor) {
		wl_compositor_destroy(viewer->compositor);
	}
	if (viewer->registry) {
		wl_registry_destroy(viewer->registry);
	}
	if (viewer->display) {
		wl_display_disconnect(viewer->display);
	}
}
