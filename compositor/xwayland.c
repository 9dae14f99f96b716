/*
 * X11 apps through Xwayland, started when the first X11 client connects
 * (wlroots' lazy mode). Each X11 window is a window like an xdg one; an
 * override-redirect window (a menu, a tooltip) is a popup of the X11 window
 * that last had focus, placed where the app put it.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <wlr/xwayland.h>
#include <xcb/xproto.h>

#include "announce.h"
#include "log.h"
#include "monotonic.h"
#include "procs.h"
#include "window.h"
#include "xwayland.h"

struct x11_window {
	struct rc_window base;
	struct wlr_xwayland_surface *x;
	struct wl_listener map;
	struct wl_listener unmap;
	struct wl_listener destroy;
	struct wl_listener set_title;
	struct wl_listener set_class;
	struct wl_listener set_parent;
	struct wl_listener request_configure;
	struct wl_listener request_maximize;
	struct wl_listener request_fullscreen;
	struct wl_listener request_minimize;
	struct wl_listener set_hints;
	bool urgent; /* its WM_HINTS say urgent (ICCCM's UrgencyHint) */
};

/* ICCCM's UrgencyHint, in WM_HINTS' flags. */
#define X_URGENCY_HINT (1u << 8)

static struct wlr_xwayland_surface *x11_of(struct rc_window *window)
{
	struct x11_window *xw = wl_container_of(window, xw, base);
	return xw->x;
}

static struct wlr_surface *impl_surface(struct rc_window *window)
{
	return x11_of(window)->surface;
}

static void impl_geometry(struct rc_window *window, struct wlr_box *box)
{
	/* X11 windows are their surface, no shadows around. */
	struct wlr_surface *surface = x11_of(window)->surface;
	*box = (struct wlr_box){0, 0, surface ? surface->current.width : 0,
		surface ? surface->current.height : 0};
}

static const char *impl_title(struct rc_window *window)
{
	const char *title = x11_of(window)->title;
	return title ? title : "";
}

static const char *impl_app_id(struct rc_window *window)
{
	const char *class = x11_of(window)->class;
	return class ? class : "";
}

static struct rc_window *impl_parent(struct rc_window *window)
{
	struct wlr_xwayland_surface *parent = x11_of(window)->parent;
	return parent ? parent->data : NULL;
}

static bool impl_wants_maximized(struct rc_window *window, bool first)
{
	struct wlr_xwayland_surface *x = x11_of(window);
	return x->maximized_horz && x->maximized_vert;
}

static bool impl_wants_fullscreen(struct rc_window *window, bool first)
{
	return x11_of(window)->fullscreen;
}

static bool impl_size_hints(struct rc_window *window, int32_t hints[4])
{
	return false; /* X11 size hints are not forwarded */
}

static void impl_place_popup(struct rc_window *window, struct rc_window *parent,
	struct wire_popup_new *place)
{
	/* Where the app put it, relative to its parent's X position; the local
	 * compositor may not move it, or the app's idea of it would be wrong. */
	struct wlr_xwayland_surface *x = x11_of(window);
	struct wlr_xwayland_surface *px = x11_of(parent);
	*place = (struct wire_popup_new){
		.anchor_x = x->x - px->x,
		.anchor_y = x->y - px->y,
		.anchor_width = 1,
		.anchor_height = 1,
		.width = x->width,
		.height = x->height,
		.anchor = 5, /* top left */
		.gravity = 8, /* bottom right */
	};
}

static void impl_set_activated(struct rc_window *window, bool activated)
{
	struct wlr_xwayland_surface *x = x11_of(window);
	wlr_xwayland_surface_activate(x, activated);
	if (activated) {
		wlr_xwayland_surface_restack(x, NULL, XCB_STACK_MODE_ABOVE);
		window->server->x11_focus = window->id;
	}
}

static void impl_configure(struct rc_window *window, int32_t width, int32_t height, uint32_t states)
{
	struct wlr_xwayland_surface *x = x11_of(window);
	if (width > 0 && height > 0 && width <= UINT16_MAX && height <= UINT16_MAX) {
		wlr_xwayland_surface_configure(x, x->x, x->y, (uint16_t)width, (uint16_t)height);
	}
	wlr_xwayland_surface_set_maximized(x, states & WIRE_STATE_MAXIMIZED);
	wlr_xwayland_surface_set_fullscreen(x, states & WIRE_STATE_FULLSCREEN);
}

static void impl_close(struct rc_window *window)
{
	wlr_xwayland_surface_close(x11_of(window));
}

static void impl_dismiss(struct rc_window *window)
{
	/* X11 menus close themselves, on the click that dismissed them. */
}

static const struct rc_window_impl x11_impl = {
	.surface = impl_surface,
	.geometry = impl_geometry,
	.title = impl_title,
	.app_id = impl_app_id,
	.parent = impl_parent,
	.wants_maximized = impl_wants_maximized,
	.wants_fullscreen = impl_wants_fullscreen,
	.size_hints = impl_size_hints,
	.place_popup = impl_place_popup,
	.set_activated = impl_set_activated,
	.configure = impl_configure,
	.close = impl_close,
	.dismiss = impl_dismiss,
};

static void handle_map(struct wl_listener *listener, void *data)
{
	struct x11_window *xw = wl_container_of(listener, xw, map);
	struct rc_window *window = &xw->base;
	struct rc_server *server = window->server;
	window->popup = xw->x->override_redirect;
	if (window->popup) {
		/* The focused X11 window, else any mapped one. */
		struct rc_window *parent = window_from_id(server, server->x11_focus);
		if (!parent || !parent->mapped || parent->impl != &x11_impl || parent->popup) {
			parent = NULL;
			struct rc_window *w;
			wl_list_for_each(w, &server->windows, link)
			{
				if (w->impl == &x11_impl && w->mapped && !w->popup) {
					parent = w;
				}
			}
		}
		window->parent_id = parent ? parent->id : 0;
	}
	window_map(window);
}

static void handle_unmap(struct wl_listener *listener, void *data)
{
	struct x11_window *xw = wl_container_of(listener, xw, unmap);
	window_unmap(&xw->base);
}

static void handle_set_title(struct wl_listener *listener, void *data)
{
	struct x11_window *xw = wl_container_of(listener, xw, set_title);
	window_titled(&xw->base);
}

static void handle_set_class(struct wl_listener *listener, void *data)
{
	struct x11_window *xw = wl_container_of(listener, xw, set_class);
	announce_app_id(&xw->base);
}

static void handle_set_parent(struct wl_listener *listener, void *data)
{
	struct x11_window *xw = wl_container_of(listener, xw, set_parent);
	announce_parent(&xw->base);
}

/* X11 windows place and size themselves until they are shown; after that
 * the local compositor decides, through the viewer. */
static void handle_request_configure(struct wl_listener *listener, void *data)
{
	struct x11_window *xw = wl_container_of(listener, xw, request_configure);
	struct wlr_xwayland_surface_configure_event *event = data;
	wlr_xwayland_surface_configure(xw->x, event->x, event->y, event->width, event->height);
}

static void handle_request_maximize(struct wl_listener *listener, void *data)
{
	struct x11_window *xw = wl_container_of(listener, xw, request_maximize);
	announce_request(&xw->base,
		xw->x->maximized_horz && xw->x->maximized_vert ? WIRE_REQUEST_MAXIMIZE
							       : WIRE_REQUEST_UNMAXIMIZE);
}

static void handle_request_fullscreen(struct wl_listener *listener, void *data)
{
	struct x11_window *xw = wl_container_of(listener, xw, request_fullscreen);
	announce_request(&xw->base,
		xw->x->fullscreen ? WIRE_REQUEST_FULLSCREEN : WIRE_REQUEST_UNFULLSCREEN);
}

static void handle_request_minimize(struct wl_listener *listener, void *data)
{
	struct x11_window *xw = wl_container_of(listener, xw, request_minimize);
	struct wlr_xwayland_minimize_event *event = data;
	if (event->minimize) {
		announce_request(&xw->base, WIRE_REQUEST_MINIMIZE);
	}
}

/* An X11 app's urgency (xterm's bell with bellIsUrgent, a chat window):
 * as xdg-activation's, the viewers' desktops are asked to activate it. */
static void handle_set_hints(struct wl_listener *listener, void *data)
{
	struct x11_window *xw = wl_container_of(listener, xw, set_hints);
	bool urgent = xw->x->hints && (xw->x->hints->flags & X_URGENCY_HINT);
	if (urgent && !xw->urgent && xw->base.mapped) {
		log_debug("X11 window %u is urgent", xw->base.id);
		announce_activate(&xw->base);
	}
	xw->urgent = urgent;
}

static void handle_destroy(struct wl_listener *listener, void *data)
{
	struct x11_window *xw = wl_container_of(listener, xw, destroy);
	struct wl_listener *listeners[] = {&xw->map, &xw->unmap, &xw->destroy, &xw->set_title,
		&xw->set_class, &xw->set_parent, &xw->request_configure, &xw->request_maximize,
		&xw->request_fullscreen, &xw->request_minimize, &xw->set_hints};
	for (size_t i = 0; i < sizeof(listeners) / sizeof(listeners[0]); i++) {
		wl_list_remove(&listeners[i]->link);
	}
	xw->x->data = NULL;
	window_finish(&xw->base);
	free(xw);
}

static void handle_new_surface(struct wl_listener *listener, void *data)
{
	struct rc_server *server = wl_container_of(listener, server, new_x11_surface);
	struct wlr_xwayland_surface *x = data;
	struct x11_window *xw = calloc(1, sizeof(*xw));
	if (!xw || !window_init(&xw->base, server, &x11_impl)) {
		free(xw);
		return;
	}
	xw->x = x;
	x->data = &xw->base;
	struct {
		struct wl_listener *listener;
		struct wl_signal *signal;
		wl_notify_func_t notify;
	} table[] = {
		{&xw->map, &x->events.map, handle_map},
		{&xw->unmap, &x->events.unmap, handle_unmap},
		{&xw->destroy, &x->events.destroy, handle_destroy},
		{&xw->set_title, &x->events.set_title, handle_set_title},
		{&xw->set_class, &x->events.set_class, handle_set_class},
		{&xw->set_parent, &x->events.set_parent, handle_set_parent},
		{&xw->request_configure, &x->events.request_configure, handle_request_configure},
		{&xw->request_maximize, &x->events.request_maximize, handle_request_maximize},
		{&xw->request_fullscreen, &x->events.request_fullscreen, handle_request_fullscreen},
		{&xw->request_minimize, &x->events.request_minimize, handle_request_minimize},
		{&xw->set_hints, &x->events.set_hints, handle_set_hints},
	};
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		table[i].listener->notify = table[i].notify;
		wl_signal_add(table[i].signal, table[i].listener);
	}
	log_debug("new X11 window %u%s", xw->base.id,
		x->override_redirect ? " (override-redirect)" : "");
}

/* wlroots forks Xwayland itself, and a fork keeps the signal mask: ours
 * blocks SIGTERM, SIGINT, SIGHUP and SIGCHLD for the event loop's signalfd,
 * so an Xwayland started as it is would never see a SIGTERM (neither the
 * one below nor the session's end's). Every child of rcomp-run starts with
 * none blocked; those rcomp-run forks itself set theirs again anyway. */
static void unblock_in_child(void)
{
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
}

bool xwayland_init(struct rc_server *server)
{
	if (!server->options.xwayland) {
		return true;
	}
	pthread_atfork(NULL, NULL, unblock_in_child);
	server->xwayland = wlr_xwayland_create(server->display, server->compositor, true);
	if (!server->xwayland) {
		log_error("cannot set up Xwayland (see above); X11 apps will not run");
		return true;
	}
	wlr_xwayland_set_seat(server->xwayland, server->seat);
	server->new_x11_surface.notify = handle_new_surface;
	wl_signal_add(&server->xwayland->events.new_surface, &server->new_x11_surface);
	server->x11_display = server->xwayland->display_name;
	log_info("X11 apps connect to DISPLAY=%s (Xwayland starts when one does)",
		server->x11_display);
	return true;
}

/* Xwayland, where it runs, is asked to end before its Wayland connection
 * goes: cut off first, it reports the broken pipe as an error ("(EE)
 * failed to read Wayland events") at every session's end. On SIGTERM it
 * ends in a few milliseconds and says nothing (see unblock_in_child), but
 * it speaks to us as it goes, so the loop runs while it does; it has at most XWAYLAND_STOP_MS.
 * (It is rcomp-run's child once wlroots' double fork has left it to the
 * subreaper; the SIGCHLD handler is gone by now, and this reaps it.) */
#define XWAYLAND_STOP_MS 1000

static bool still_runs(pid_t pid)
{
	return waitpid(pid, NULL, WNOHANG) == 0;
}

/* Xwayland's pid: the child of ours named so (wlroots keeps only the pid
 * of the fork between, gone by now, and the peer of a socketpair is its
 * maker, us); 0 where there is none. */
static pid_t xwayland_pid(void)
{
	pid_t below[64];
	int n = procs_below(getpid(), below, 64);
	for (int i = 0; i < n; i++) {
		char path[64], stat[256];
		snprintf(path, sizeof(path), "/proc/%d/stat", (int)below[i]);
		FILE *f = fopen(path, "r");
		if (!f) {
			continue;
		}
		size_t got = fread(stat, 1, sizeof(stat) - 1, f);
		fclose(f);
		stat[got] = '\0';
		const char *close = strrchr(stat, ')');
		int ppid = 0;
		if (strstr(stat, " (Xwayland) ") && close &&
			sscanf(close + 1, " %*c %d", &ppid) == 1 && ppid == (int)getpid()) {
			return below[i];
		}
	}
	return 0;
}

static void stop_server(struct rc_server *server)
{
	struct wlr_xwayland_server *x = server->xwayland->server;
	if (!x || !x->client) {
		return;
	}
	pid_t pid = xwayland_pid();
	if (pid <= 0 || !procs_signal_below(getpid(), pid, SIGTERM)) {
		return;
	}
	uint64_t deadline = monotonic_usec() + XWAYLAND_STOP_MS * 1000ull;
	while (still_runs(pid)) {
		if (monotonic_usec() >= deadline) {
			log_debug("Xwayland (pid %d) did not end within %d ms of SIGTERM", (int)pid,
				XWAYLAND_STOP_MS);
			return;
		}
		wl_display_flush_clients(server->display);
		if (wl_event_loop_dispatch(server->loop, 10) < 0 && errno != EINTR) {
			return;
		}
	}
}

void xwayland_finish(struct rc_server *server)
{
	if (!server->xwayland) {
		return;
	}
	stop_server(server);
	wl_list_remove(&server->new_x11_surface.link);
	wlr_xwayland_destroy(server->xwayland);
	server->xwayland = NULL;
	server->x11_display = NULL;
}
