/*
 * Outputs per scale and per viewer output named, and telling surfaces which
 * one they are on. Nothing is ever rendered to them, so they are our own
 * outputs rather than the headless backend's: those tick a 60 Hz frame timer
 * forever, which woke an idle session 60 times a second.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wayland-server-protocol.h>
#include <wlr/interfaces/wlr_output.h>
#include <wlr/types/wlr_output.h>
#include <wlr/types/wlr_output_layout.h>
#include <wlr/types/wlr_surface.h>
#include <wlr/types/wlr_xdg_output_v1.h>

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

static struct rc_output *window_output(struct rc_window *window);

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
		if (window_output(window) == output) {
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

static struct rc_output *output_create(struct rc_server *server, const char *name,
	const char *description)
{
	struct rc_output *output = calloc(1, sizeof(*output));
	if (!output) {
		return NULL;
	}
	struct wlr_output *wlr_output = &output->wlr_output;
	wlr_output_init(wlr_output, server->backend, &output_impl, server->display);
	wlr_output_set_name(wlr_output, name);
	wlr_output_set_description(wlr_output, description);
	snprintf(wlr_output->make, sizeof(wlr_output->make), "rcomp");
	snprintf(wlr_output->model, sizeof(wlr_output->model), "remote");
	wlr_output_update_enabled(wlr_output, true);
	output->server = server;
	output->output = wlr_output;
	output->bind.notify = handle_bind;
	wl_signal_add(&wlr_output->events.bind, &output->bind);
	return output;
}

/* Its scale and mode in pixels, told to apps; its global made at the first. */
static void output_set(struct rc_output *output, int32_t scale, int32_t width, int32_t height,
	int32_t refresh_mhz)
{
	struct wlr_output *wlr_output = output->output;
	if (output->scale == scale && wlr_output->width == width && wlr_output->height == height &&
		wlr_output->refresh == refresh_mhz) {
		return;
	}
	wlr_output_update_custom_mode(wlr_output, width, height, refresh_mhz);
	wlr_output_set_scale(wlr_output, (float)scale);
	if (!wlr_output_commit(wlr_output)) {
		log_error("cannot set scale %d on an output", scale);
	}
	output->scale = scale;
	if (!wlr_output->global) {
		wlr_output_create_global(wlr_output);
	}
}

static struct rc_output *output_for_scale(struct rc_server *server, int32_t scale)
{
	if (scale < 1 || scale > WIRE_MAX_SCALE) {
		return NULL;
	}
	if (server->outputs[scale]) {
		return server->outputs[scale];
	}
	char name[32], description[64];
	snprintf(name, sizeof(name), "RCOMP-%d", scale);
	snprintf(description, sizeof(description), "rcomp output of scale %d", scale);
	struct rc_output *output = output_create(server, name, description);
	if (!output) {
		log_error("cannot create an output of scale %d; the app stays at scale 1", scale);
		return NULL;
	}
	output_set(output, scale, 1920, 1080, 60000);
	wlr_output_layout_add_auto(server->output_layout, output->output);
	server->outputs[scale] = output;
	return output;
}

bool output_window_can_enter(struct rc_server *server, int32_t scale)
{
	return output_for_scale(server, scale) != NULL;
}

/* The viewer output it is on, where that has its scale; else its scale's. */
static struct rc_output *window_output(struct rc_window *window)
{
	if (window->place_output && window->place_output->scale == window->scale) {
		return window->place_output;
	}
	return output_for_scale(window->server, window->scale);
}

struct wlr_output *output_of_window(struct rc_window *window)
{
	struct rc_output *output = window_output(window);
	return output ? output->output : NULL;
}

void output_window_enter(struct rc_window *window)
{
	struct rc_output *output = window_output(window);
	struct enter_args args = {.output = output ? output->output : NULL, .enter = true};
	window_surfaces(window, &args);
}

void output_window_leave(struct rc_window *window)
{
	struct rc_output *output = window_output(window);
	struct enter_args args = {.output = output ? output->output : NULL};
	window_surfaces(window, &args);
}

static bool output_in_use(struct rc_server *server, struct rc_output *output)
{
	struct rc_window *window;
	wl_list_for_each(window, &server->windows, link)
	{
		if (window->place_output == output) {
			return true;
		}
	}
	return false;
}

/* The output of that name, made (in a free slot, or one no window is on)
 * where there is none; NULL where all of them are in use. */
static struct rc_output *named_output(struct rc_server *server, const struct rc_place *place)
{
	int slot = -1;
	for (int i = 0; i < RC_MAX_NAMED_OUTPUTS; i++) {
		struct rc_output *output = server->named_outputs[i];
		if (output && strcmp(output->output->name, place->name) == 0) {
			return output;
		}
		if (slot < 0 && (!output || !output_in_use(server, output))) {
			slot = i;
		}
	}
	if (slot < 0) {
		return NULL;
	}
	if (server->named_outputs[slot]) {
		wlr_output_destroy(server->named_outputs[slot]->output);
		server->named_outputs[slot] = NULL;
	}
	struct rc_output *output = output_create(server, place->name, place->description);
	if (!output) {
		return NULL;
	}
	server->named_outputs[slot] = output;
	return output;
}

void output_window_place(struct rc_window *window, const struct rc_place *place)
{
	struct rc_server *server = window->server;
	struct rc_output *output = named_output(server, place);
	if (!output) {
		log_info("window %u: the viewer's output %s is one more than %d named at once; "
			 "it stays on its scale's",
			window->id, place->name, RC_MAX_NAMED_OUTPUTS);
	} else {
		const char *now = output->output->description;
		if (!now || strcmp(now, place->description) != 0) {
			wlr_output_set_description(output->output, place->description);
		}
		uint32_t refresh = window->refresh_mhz ? window->refresh_mhz : 60000;
		output_set(output, place->scale, place->width * place->scale,
			place->height * place->scale, (int32_t)refresh);
		wlr_output_layout_add(server->output_layout, output->output, place->x, place->y);
	}
	if (output == window->place_output) {
		return;
	}
	output_window_leave(window);
	window->place_output = output;
	output_window_enter(window);
}

bool output_init(struct rc_server *server)
{
	server->output_layout = wlr_output_layout_create();
	if (!server->output_layout ||
		!wlr_xdg_output_manager_v1_create(server->display, server->output_layout)) {
		return false;
	}
	return output_for_scale(server, 1) != NULL;
}

void output_finish(struct rc_server *server)
{
	for (int i = 0; i < RC_MAX_NAMED_OUTPUTS; i++) {
		if (server->named_outputs[i]) {
			wlr_output_destroy(server->named_outputs[i]->output);
			server->named_outputs[i] = NULL;
		}
	}
	for (int32_t scale = 1; scale <= WIRE_MAX_SCALE; scale++) {
		if (server->outputs[scale]) {
			wlr_output_destroy(server->outputs[scale]->output);
			server->outputs[scale] = NULL;
		}
	}
	if (server->output_layout) {
		wlr_output_layout_destroy(server->output_layout);
		server->output_layout = NULL;
	}
}
