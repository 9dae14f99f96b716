/*
 * Viewer slots and views. A slot is reused once its viewer is gone; a
 * window's views are made as viewers are told of it, and go with the
 * viewer or the window.
 */
#include <stdlib.h>
#include <xkbcommon/xkbcommon.h>

#include "feedback.h"
#include "log.h"
#include "viewers.h"

struct rc_viewer *viewer_new(struct rc_server *server, bool view_only)
{
	bool used[RC_MAX_VIEWERS] = {false};
	struct rc_viewer *other;
	wl_list_for_each(other, &server->viewers, link)
	{
		used[other->slot] = true;
	}
	int slot = 0;
	while (slot < RC_MAX_VIEWERS && used[slot]) {
		slot++;
	}
	if (slot == RC_MAX_VIEWERS) {
		return NULL;
	}
	struct rc_viewer *viewer = calloc(1, sizeof(*viewer));
	if (!viewer) {
		return NULL;
	}
	viewer->server = server;
	viewer->slot = slot;
	viewer->number = ++server->viewers_ever;
	viewer->view_only = view_only;
	wl_list_insert(server->viewers.prev, &viewer->link);
	server->nviewers++;
	return viewer;
}

static void view_free(struct rc_view *view)
{
	struct rc_window *window = view->window;
	/* Its followers go their own way: the first leads the others. */
	struct rc_view *first = NULL;
	for (int i = 0; i < RC_MAX_VIEWERS; i++) {
		struct rc_view *other = window->views[i];
		if (other && other->lead == view) {
			encoder_take_state(&other->encoder, &view->encoder);
			other->lead = first;
			if (other->in_job) {
				other->in_job = false;
				connection_release(other->viewer->conn, other->reserved);
				other->reserved = 0;
			}
			first = first ? first : other;
		}
	}
	feedback_view_gone(view);
	/* A frame being encoded for its viewer holds no more. */
	connection_release(view->viewer->conn, view->reserved);
	/* The encoder first: a job may be reading the captured image. */
	encoder_finish(&view->encoder, &window->server->encode);
	pixman_region32_fini(&view->damage);
	window->views[view->viewer->slot] = NULL;
	free(view);
}

void viewer_free(struct rc_viewer *viewer)
{
	struct rc_server *server = viewer->server;
	struct rc_window *window;
	wl_list_for_each(window, &server->windows, link)
	{
		struct rc_view *view = window->views[viewer->slot];
		if (view) {
			view_free(view);
		}
	}
	if (server->input_viewer == viewer) {
		server->input_viewer = NULL;
	}
	wl_list_remove(&viewer->link);
	server->nviewers--;
	xkb_keymap_unref(viewer->keymap);
	free(viewer);
}

struct rc_view *view_get(struct rc_window *window, struct rc_viewer *viewer,
	void (*encoded)(struct rc_encoder *enc))
{
	struct rc_view *view = window->views[viewer->slot];
	if (view) {
		return view;
	}
	view = calloc(1, sizeof(*view));
	if (!view) {
		log_error("out of memory showing window %u to viewer %u", window->id,
			viewer->number);
		return NULL;
	}
	view->window = window;
	view->viewer = viewer;
	pixman_region32_init(&view->damage);
	encoder_init(&view->encoder, window->id, encoded);
	window->views[viewer->slot] = view;
	return view;
}

void views_free(struct rc_window *window)
{
	for (int i = 0; i < RC_MAX_VIEWERS; i++) {
		if (window->views[i]) {
			view_free(window->views[i]);
		}
	}
}
