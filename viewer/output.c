/* Local outputs and the windows on them; see output.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "connection.h"
#include "output.h"
#include "xdg-output-unstable-v1-client-protocol.h"

/* Its name and logical place, after its scale (output_place), where the
 * desktop told them and the server knows the message. */
static void report_place(struct rv_window *window, const struct rv_output *output, int32_t scale)
{
	const struct rv_output_place *place = &output->place;
	if (place->name[0] == '\0' || window->viewer->connection.server_minor < 10 ||
		place->width < 1 || place->width > WIRE_MAX_DIM || place->height < 1 ||
		place->height > WIRE_MAX_DIM || place->x < WIRE_MIN_POSITION ||
		place->x > WIRE_MAX_POSITION || place->y < WIRE_MIN_POSITION ||
		place->y > WIRE_MAX_POSITION) {
		return;
	}
	if (window->reported_place == output &&
		window->reported_place_generation == output->place_generation) {
		return;
	}
	window->reported_place = output;
	window->reported_place_generation = output->place_generation;
	struct wire_msg msg = {.type = WIRE_OUTPUT_PLACE};
	msg.output_place = (struct wire_output_place){.window = window->id,
		.x = place->x,
		.y = place->y,
		.width = place->width,
		.height = place->height,
		.scale = scale,
		.name_len = (uint32_t)strlen(place->name),
		.name = place->name,
		.description_len = (uint32_t)strlen(place->description),
		.description = place->description};
	connection_send(window->viewer, &msg);
}

/* Tells the server the refresh and scale of the output the window is on
 * (the first it entered), so its frame clock matches the local display,
 * and its name and place. */
void output_report(struct rv_window *window)
{
	if (window->noutputs == 0) {
		return;
	}
	struct rv_output *output = window->outputs[0];
	uint32_t refresh = output->refresh_mhz <= WIRE_MAX_REFRESH_MHZ ? output->refresh_mhz : 0;
	int32_t scale = output->scale >= 1 && output->scale <= WIRE_MAX_SCALE ? output->scale : 1;
	if (refresh != window->reported_refresh_mhz || scale != window->reported_scale) {
		window->reported_refresh_mhz = refresh;
		window->reported_scale = scale;
		window->reported_place = NULL;
		struct wire_msg msg = {.type = WIRE_OUTPUT_INFO};
		msg.output_info.window = window->id;
		msg.output_info.refresh_mhz = refresh;
		msg.output_info.scale = scale;
		connection_send(window->viewer, &msg);
	}
	report_place(window, output, scale);
}

static void window_output_gone(struct rv_window *window, struct rv_output *output)
{
	if (window->reported_place == output) {
		window->reported_place = NULL;
	}
	for (int i = 0; i < window->noutputs; i++) {
		if (window->outputs[i] == output) {
			memmove(&window->outputs[i], &window->outputs[i + 1],
				(size_t)(window->noutputs - i - 1) * sizeof(window->outputs[0]));
			window->noutputs--;
			i--;
		}
	}
	output_report(window);
}

static struct rv_output *output_of(struct rv_viewer *viewer, struct wl_output *wl_output)
{
	struct rv_output *output;
	wl_list_for_each(output, &viewer->outputs, link)
	{
		if (output->output == wl_output) {
			return output;
		}
	}
	return NULL;
}

void output_window_enter(struct rv_window *window, struct wl_output *wl_output)
{
	struct rv_output *output = output_of(window->viewer, wl_output);
	if (!output || window->noutputs == RV_MAX_WINDOW_OUTPUTS) {
		return;
	}
	window->outputs[window->noutputs++] = output;
	output_report(window);
}

void output_window_leave(struct rv_window *window, struct wl_output *wl_output)
{
	struct rv_output *output = output_of(window->viewer, wl_output);
	if (output) {
		window_output_gone(window, output);
	}
}

void output_forget_reports(struct rv_window *window)
{
	window->reported_refresh_mhz = 0;
	window->reported_scale = 0;
	window->reported_place = NULL;
}

static void output_geometry(void *data, struct wl_output *wl_output, int32_t x, int32_t y,
	int32_t pw, int32_t ph, int32_t subpixel, const char *make, const char *model,
	int32_t transform)
{
}

static void output_mode(void *data, struct wl_output *wl_output, uint32_t flags, int32_t width,
	int32_t height, int32_t refresh)
{
	struct rv_output *output = data;
	if (flags & WL_OUTPUT_MODE_CURRENT) {
		output->pending_refresh_mhz = refresh > 0 ? (uint32_t)refresh : 0;
	}
}

static void place_done(struct rv_output *output)
{
	if (memcmp(&output->place, &output->pending_place, sizeof(output->place)) != 0) {
		output->place = output->pending_place;
		output->place_generation++;
	}
}

/* Every window hears again what it is on, where that changed. */
static void report_all(struct rv_output *output)
{
	struct rv_window *window;
	wl_list_for_each(window, &output->viewer->windows, link)
	{
		output_report(window);
	}
}

static void output_done(void *data, struct wl_output *wl_output)
{
	struct rv_output *output = data;
	output->refresh_mhz = output->pending_refresh_mhz;
	output->scale = output->pending_scale;
	place_done(output);
	report_all(output);
}

static void output_scale(void *data, struct wl_output *wl_output, int32_t factor)
{
	struct rv_output *output = data;
	output->pending_scale = factor;
}

static const struct wl_output_listener output_listener = {
	.geometry = output_geometry,
	.mode = output_mode,
	.done = output_done,
	.scale = output_scale,
};

/* xdg-output: the local output's name, description and logical place. */
static void copy_text(char *dst, size_t size, const char *text)
{
	snprintf(dst, size, "%s", text ? text : "");
	/* Cut on a character's boundary, not within one. */
	size_t n = strlen(dst);
	if (n == size - 1 && text && strlen(text) > n) {
		while (n > 0 && ((unsigned char)dst[n] & 0xc0) == 0x80) {
			n--;
		}
		dst[n] = '\0';
	}
}

static void xdg_position(void *data, struct zxdg_output_v1 *xdg, int32_t x, int32_t y)
{
	struct rv_output *output = data;
	output->pending_place.x = x;
	output->pending_place.y = y;
}

static void xdg_size(void *data, struct zxdg_output_v1 *xdg, int32_t width, int32_t height)
{
	struct rv_output *output = data;
	output->pending_place.width = width;
	output->pending_place.height = height;
}

static void xdg_done(void *data, struct zxdg_output_v1 *xdg)
{
	/* Before version 3 the place is whole here; from 3, at wl_output.done. */
	struct rv_output *output = data;
	place_done(output);
	report_all(output);
}

static void xdg_name(void *data, struct zxdg_output_v1 *xdg, const char *name)
{
	struct rv_output *output = data;
	copy_text(output->pending_place.name, sizeof(output->pending_place.name), name);
}

static void xdg_description(void *data, struct zxdg_output_v1 *xdg, const char *description)
{
	struct rv_output *output = data;
	copy_text(output->pending_place.description, sizeof(output->pending_place.description),
		description);
}

static const struct zxdg_output_v1_listener xdg_output_listener = {
	.logical_position = xdg_position,
	.logical_size = xdg_size,
	.done = xdg_done,
	.name = xdg_name,
	.description = xdg_description,
};

static void output_want_place(struct rv_output *output)
{
	struct rv_viewer *viewer = output->viewer;
	if (!viewer->xdg_output_manager || output->xdg_output) {
		return;
	}
	output->xdg_output =
		zxdg_output_manager_v1_get_xdg_output(viewer->xdg_output_manager, output->output);
	zxdg_output_v1_add_listener(output->xdg_output, &xdg_output_listener, output);
}

void output_bind_places(struct rv_viewer *viewer, uint32_t name, uint32_t version)
{
	if (version < 2 || viewer->xdg_output_manager) {
		return; /* version 1 names no output */
	}
	viewer->xdg_output_manager = wl_registry_bind(viewer->registry, name,
		&zxdg_output_manager_v1_interface, version < 3 ? version : 3);
	struct rv_output *output;
	wl_list_for_each(output, &viewer->outputs, link)
	{
		output_want_place(output);
	}
}

void output_finish_places(struct rv_viewer *viewer)
{
	if (viewer->xdg_output_manager) {
		zxdg_output_manager_v1_destroy(viewer->xdg_output_manager);
		viewer->xdg_output_manager = NULL;
	}
}

void output_add(struct rv_viewer *viewer, uint32_t name, uint32_t version)
{
	if (version < 2) {
		return; /* no done event to know when its state is complete */
	}
	struct rv_output *output = calloc(1, sizeof(*output));
	if (!output) {
		return;
	}
	output->viewer = viewer;
	output->name = name;
	output->scale = output->pending_scale = 1;
	output->output = wl_registry_bind(viewer->registry, name, &wl_output_interface, 2);
	wl_output_add_listener(output->output, &output_listener, output);
	wl_list_insert(&viewer->outputs, &output->link);
	output_want_place(output);
}

void output_destroy(struct rv_output *output)
{
	struct rv_window *window;
	wl_list_for_each(window, &output->viewer->windows, link)
	{
		window_output_gone(window, output);
	}
	if (output->xdg_output) {
		zxdg_output_v1_destroy(output->xdg_output);
	}
	wl_output_destroy(output->output);
	wl_list_remove(&output->link);
	free(output);
}

void output_remove(struct rv_viewer *viewer, uint32_t name)
{
	struct rv_output *output;
	wl_list_for_each(output, &viewer->outputs, link)
	{
		if (output->name == name) {
			output_destroy(output);
			return;
		}
	}
}
