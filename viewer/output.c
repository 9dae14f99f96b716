/* Local outputs and the windows on them; see output.h. */
#include <stdlib.h>
#include <string.h>

#include "connection.h"
#include "output.h"

/* Tells the server the refresh and scale of the output the window is on
 * (the first it entered), so its frame clock matches the local display. */
void output_report(struct rv_window *window)
{
	if (window->noutputs == 0) {
		return;
	}
	struct rv_output *output = window->outputs[0];
	uint32_t refresh = output->refresh_mhz <= WIRE_MAX_REFRESH_MHZ ? output->refresh_mhz : 0;
	int32_t scale = output->scale >= 1 && output->scale <= WIRE_MAX_SCALE ? output->scale : 1;
	if (refresh == window->reported_refresh_mhz && scale == window->reported_scale) {
		return;
	}
	window->reported_refresh_mhz = refresh;
	window->reported_scale = scale;
	struct wire_msg msg = {.type = WIRE_OUTPUT_INFO};
	msg.output_info.window = window->id;
	msg.output_info.refresh_mhz = refresh;
	msg.output_info.scale = scale;
	connection_send(window->viewer, &msg);
}

static void window_output_gone(struct rv_window *window, struct rv_output *output)
{
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

static void output_done(void *data, struct wl_output *wl_output)
{
	struct rv_output *output = data;
	output->refresh_mhz = output->pending_refresh_mhz;
	output->scale = output->pending_scale;
	struct rv_window *window;
	wl_list_for_each(window, &output->viewer->windows, link)
	{
		output_report(window);
	}
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
}

void output_destroy(struct rv_output *output)
{
	struct rv_window *window;
	wl_list_for_each(window, &output->viewer->windows, link)
	{
		window_output_gone(window, output);
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
