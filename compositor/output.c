/*
 * Outputs per scale, and telling surfaces which one they are on. Nothing is
 * ever rendered to them, so they are our own outputs rather than the
 * headless backend's: those tick a 60 Hz frame timer forever, which woke an
 * idle session 60 times a second.
 */
#include <stdio.h>
#include <stdlib.h>
#include <wayland-server-protocol.h>
#include <wlr/interfaces/wlr_output.h>
#include <wlr/types/wlr_output.h>
#include <wlr/types/wlr_surface.h>

#include "log.h"
#include "output.h"

struct rc_output {
	struct wlr_output wlr_output;
	struct rc_server *server;
	struct wlr_output *output; /* &wlr_output */
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

/* A mode, a scale, on or off: what apps are told. No buffer is ever
 * committed. */
static bool output_commit(struct wlr_output *wlr_output)
{
	const struct wlr_output_state *pending = &wlr_output->pending;
	if (pending->committed & WLR_OUTPUT_STATE_BUFFER) {
		return false;
	}
	if (pending->committed & WLR_OUTPUT_STATE_MODE) {
		if (pending->mode_type != WLR_OUTPUT_STATE_MODE_CUSTOM) {
			return false;
		}
		wlr_output_update_custom_mode(wlr_output, pending->custom_mode.width,
			pending->custom_mode.height, pending->custom_mode.refresh);
	}
	if (pending->committed & WLR_OUTPUT_STATE_ENABLED) {
		wlr_output_update_enabled(wlr_output, pending->enabled);
	}
	return true;
}

static void output_destroy(struct wlr_output *wlr_output)
{
	struct rc_output *output = wl_container_of(wlr_output, output, wlr_output);
	wl_list_remove(&output->bind.link);
	free(output);
}

static const struct wlr_output_impl output_impl = {
	.commit = output_commit,
	.destroy = output_destroy,
};

static struct wlr_output *output_for_scale(struct rc_server *server, int32_t scale)
{
	if (scale < 1 || scale > WIRE_MAX_SCALE) {
		return NULL;
	}
	if (server->outputs[scale]) {
		return server->outputs[scale]->output;
	}
	struct rc_output *output = calloc(1, sizeof(*output));
	if (!output) {
		log_error("cannot create an output of scale %d; the app stays at scale 1", scale);
		return NULL;
	}
	struct wlr_output *wlr_output = &output->wlr_output;
	wlr_output_init(wlr_output, server->backend, &output_impl, server->display);
	char text[64];
	snprintf(text, sizeof(text), "RCOMP-%d", scale);
	wlr_output_set_name(wlr_output, text);
	snprintf(text, sizeof(text), "rcomp output of scale %d", scale);
	wlr_output_set_description(wlr_output, text);
	snprintf(wlr_output->make, sizeof(wlr_output->make), "rcomp");
	snprintf(wlr_output->model, sizeof(wlr_output->model), "remote");
	wlr_output_update_custom_mode(wlr_output, 1920, 1080, 60000);
	wlr_output_update_enabled(wlr_output, true);
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
			wlr_output_destroy(server->outputs[scale]->output);
			server->outputs[scale] = NULL;
		}
	}
}
