/*
 * The remote cursor: a surface of our own with the app's cursor image. A
 * new image replaces the buffer; the old one goes once the compositor
 * releases it.
 */
#include <string.h>
#include <sys/mman.h>

#include "cursor.h"
#include "shm.h"

void cursor_show(struct rv_viewer *viewer)
{
	struct rv_seat *seat = &viewer->seat;
	if (!seat->pointer || !seat->pointer_focus || !seat->cursor_set) {
		return;
	}
	wl_pointer_set_cursor(seat->pointer, seat->pointer_serial,
		seat->cursor_hidden ? NULL : seat->cursor_surface, seat->cursor_hotspot_x,
		seat->cursor_hotspot_y);
}

static void buffer_release(void *data, struct wl_buffer *buffer)
{
	struct rv_seat *seat = data;
	if (buffer == seat->cursor_old_buffer) {
		wl_buffer_destroy(buffer);
		seat->cursor_old_buffer = NULL;
	}
}

static const struct wl_buffer_listener buffer_listener = {
	.release = buffer_release,
};

static struct wl_buffer *make_buffer(struct rv_viewer *viewer, const struct wire_cursor *msg)
{
	void *data;
	struct wl_buffer *buffer = shm_buffer_create(viewer, msg->width, msg->height, false, &data);
	if (buffer) {
		size_t size = (size_t)msg->width * msg->height * 4;
		memcpy(data, msg->pixels, size);
		munmap(data, size);
		wl_buffer_add_listener(buffer, &buffer_listener, &viewer->seat);
	}
	return buffer;
}

void cursor_set(struct rv_viewer *viewer, const struct wire_cursor *msg)
{
	struct rv_seat *seat = &viewer->seat;
	seat->cursor_set = true;
	seat->cursor_hidden = msg->width == 0;
	seat->cursor_hotspot_x = msg->hotspot_x;
	seat->cursor_hotspot_y = msg->hotspot_y;
	if (!seat->cursor_hidden) {
		if (!seat->cursor_surface) {
			seat->cursor_surface = wl_compositor_create_surface(viewer->compositor);
		}
		struct wl_buffer *buffer = make_buffer(viewer, msg);
		if (!buffer) {
			return;
		}
		/* The old buffer goes when the compositor releases it; one older
		 * still is surely unused by now. */
		if (seat->cursor_old_buffer) {
			wl_buffer_destroy(seat->cursor_old_buffer);
		}
		seat->cursor_old_buffer = seat->cursor_buffer;
		seat->cursor_buffer = buffer;
		wl_surface_attach(seat->cursor_surface, buffer, 0, 0);
		wl_surface_set_buffer_scale(seat->cursor_surface, msg->scale);
		wl_surface_damage_buffer(seat->cursor_surface, 0, 0, INT32_MAX, INT32_MAX);
		wl_surface_commit(seat->cursor_surface);
	}
	cursor_show(viewer);
}

void cursor_finish(struct rv_viewer *viewer)
{
	struct rv_seat *seat = &viewer->seat;
	if (seat->cursor_buffer) {
		wl_buffer_destroy(seat->cursor_buffer);
	}
	if (seat->cursor_old_buffer) {
		wl_buffer_destroy(seat->cursor_old_buffer);
	}
	if (seat->cursor_surface) {
		wl_surface_destroy(seat->cursor_surface);
	}
	seat->cursor_buffer = seat->cursor_old_buffer = NULL;
	seat->cursor_surface = NULL;
}
