/* Outputs per scale, and telling surfaces which one they are on. */
#include <stdlib.h>
#include <wayland-server-protocol.h>
#include <wlr/backend/headless.h>
#include <wlr/types/wlr_output.h>
#include <wlr/types/wlr_surface.h>

#include "log.h"
#include "output.h"

struct rc_output {
	struct rc_server *server;
	struct wlr_output *output;
	int32_t scale;
	struct wl_listener bind;
};

struct enter_args {
	struct wlr_output *output;
	bool enter;
	struct wl_resource *output_resource; /* just bound: enter on it alone */
};

static void enter_iter(struct wlr_surface *surface, int sx, int sy, void *data)
{
	struct enter_args *args = data;
	if (args->output_resource) {
		if (wl_resource_get_client(surface->resource) ==
			wl_resource_get_client(args->output_resource)) {
			wl_surface_send_enter(surface->resource, args->output_resource);
		}
	} else if (args->enter) {
		wlr_surface_send_enter(surface, args->output);
	} else {
		wlr_surface_send_leave(surface, args->output);
	}
}

static void window_surfaces(struct rc_window *window, struct enter_args *args)
{
	struct wlr_surface *surface = window_surface(window);
	if (args->output && window->mapped && surface) {
		wlr_surface_for_each_surface(surface, enter_iter, args);
	}
}

/* A client bound an output after its surfaces were said to enter it (the
 * enter reached nobody then): tell it now. */
static void handle_bind(struct wl_listener *listener, void *data)
{
	struct rc_output *output = wl_container_of(listener, output, bind);
	struct wlr_output_event_bind *event = data;
	struct enter_args args = {.output = output->output, .output_resource = event->resource};
	struct rc_window *window;
	wl_list_for_each(window, &output->server->windows, link)
	{
		if (window->scale == output->scale) {
			window_surfaces(window, &args);
		}
	}
}

static struct wlr_output *output_for_scale(struct rc_server *server, int32_t scale)
{
	if (scale < 1 || scale > WIRE_MAX_SCALE) {
		return NULL;
	}
	if (server->outputs[scale]) {
		return server->outputs[scale]->output;
	}
	struct rc_output *output = calloc(1, sizeof(*output));
	struct wlr_output *wlr_output =
		output ? wlr_headless_add_output(server->backend, 1920, 1080) : NULL;
	if (!wlr_output) {
		free(output);
		log_error("cannot create an output of scale %d; the app stays at scale 1", scale);
		return NULL;
	}
	wlr_output_set_scale(wlr_output, (float)scale);
	if (!wlr_output_commit(wlr_output)) {
		log_error("cannot set scale %d on an output", scale);
	}
	wlr_output_create_global(wlr_output);
	output->server = server;
	output->output = wlr_output;
	output->scale = scale;
	output->bind.notify = handle_bind;
	wl_signal_add(&wlr_output->events.bind, &output->bind);
	server->outputs[scale] = output;
	return wlr_output;
}

bool output_window_can_enter(struct rc_server *server, int32_t scale)
{
	return output_for_scale(server, scale) != NULL;
}

void output_window_enter(struct rc_window *window)
{
	struct enter_args args = {.output = output_for_scale(window->server, window->scale),
		.enter = true};
	window_surfaces(window, &args);
}

void output_window_leave(struct rc_window *window)
{
	struct enter_args args = {.output = output_for_scale(window->server, window->scale)};
	window_surfaces(window, &args);
}

bool output_init(struct rc_server *server)
{
	return output_for_scale(server, 1) != NULL;
}

void output_finish(struct rc_server *server)
{
	for (int32_t scale = 1; scale <= WIRE_MAX_SCALE; scale++) {
		if (server->outputs[scale]) {
			wl_list_remove(&server->outputs[scale]->bind.link);
			free(server->outputs[scale]);
			server->outputs[scale] = NULL;
		}
	}
}
