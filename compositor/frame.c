/*
 * One tick of a window's frame clock. The clock owns the app's frame rate:
 * frame callbacks are answered here at the window's refresh whatever the
 * network does. The window is captured once a tick for all its viewers, and
 * a frame goes to each viewer only when its own connection has room, so the
 * newest pixels win, nothing superseded is queued, and a slow viewer never
 * holds back a fast one.
 */
#include <math.h>
#include <time.h>
#include <wlr/types/wlr_surface.h>

#include "contenttype.h"
#include "feedback.h"
#include "frame.h"
#include "log.h"
#include "monotonic.h"
#include "server.h"
#include "texture.h"
#include "thumb.h"

/* With no viewer attached, apps get one frame callback in this many ticks:
 * a trickle keeps them alive at little cost. */
#define UNWATCHED_DIVISOR 15

static void settle_iter(struct wlr_surface *surface, int sx, int sy, void *data)
{
	texture_surface_settle(surface);
}

static void send_frame_done_iter(struct wlr_surface *surface, int sx, int sy, void *data)
{
	wlr_surface_send_frame_done(surface, data);
}

static void has_callbacks_iter(struct wlr_surface *surface, int sx, int sy, void *data)
{
	bool *any = data;
	if (!wl_list_empty(&surface->current.frame_callback_list)) {
		*any = true;
	}
}

/* Some view's encoder is at work: the image must stay as it is. */
static bool any_busy(struct rc_window *window)
{
	for (int i = 0; i < RC_MAX_VIEWERS; i++) {
		if (window->views[i] && encoder_busy(&window->views[i]->encoder)) {
			return true;
		}
	}
	return false;
}

/* The most raw bytes the view's next frame may hold: the window whole, or
 * a band of it (a twentieth of that while it streams video). */
static uint64_t estimate(struct rc_view *view)
{
	const struct rc_capture *cap = &view->window->capture;
	uint64_t whole = (uint64_t)cap->width * (uint64_t)cap->height * 4;
	if (!whole) {
		whole = (uint64_t)cap->geometry.width * (uint64_t)cap->geometry.height * 4 *
			(uint64_t)view->window->scale * (uint64_t)view->window->scale;
	}
	uint64_t band = connection_frame_max(view->viewer->conn);
	whole = whole < band ? whole : band;
	return encoder_streaming(&view->encoder) ? whole / 20 : whole;
}

/* The view's link takes a frame now. */
static bool link_ready(struct rc_view *view)
{
	struct rc_encoder *enc = &view->encoder;
	return connection_may_send_frame(view->viewer->conn, encoder_in_flight(enc), enc->queued,
		estimate(view));
}

/* A frame is being encoded for the view's viewer: what it may hold says
 * so, until frame_encoded. */
static void reserve(struct rc_view *view)
{
	view->reserved = estimate(view);
	connection_reserve(view->viewer->conn, view->reserved);
}

static void release(struct rc_view *view)
{
	connection_release(view->viewer->conn, view->reserved);
	view->reserved = 0;
}

/* The view has a new picture to send. */
static bool has_picture(struct rc_view *view)
{
	return pixman_region32_not_empty(&view->window->damage) ||
		pixman_region32_not_empty(&view->damage);
}

/* The view has something to send: a new picture, or a tick its stream
 * wants. */
static bool has_work(struct rc_view *view)
{
	return has_picture(view) || encoder_wants_tick(&view->encoder);
}

/* Whether the view encodes, has something to send and its link takes it
 * now (a follower's frames are its lead's). */
static bool ready(struct rc_view *view)
{
	return !view->lead && !encoder_busy(&view->encoder) && has_work(view) && link_ready(view);
}

/* A follower that left for being slow joins none for this long (a video
 * stream it joins starts anew for all). */
#define REJOIN_US 10000000
/* A video stream starts anew for a viewer that joins it (or a follower
 * that lost a frame) at most this often: a viewer that comes and goes
 * costs the others one keyframe in this long, and one that comes between
 * times encodes on its own until then. */
#define RESTART_US 5000000

/* Whether lead's stream may start anew for another viewer now. */
static bool may_restart(const struct rc_view *lead, uint64_t now)
{
	return !lead->restarted_us || now - lead->restarted_us >= RESTART_US;
}

static void restart(struct rc_view *lead, struct rc_view *joiner, uint64_t now)
{
	encoder_reset(&lead->encoder);
	encoder_follow(&joiner->encoder);
	lead->restarted_us = now;
}

/* The follower goes its own way, or (to_lead) follows another that left
 * its lead in the same turn: all hold the same picture. */
static void leave(struct rc_view *view, struct rc_view *to_lead)
{
	encoder_take_state(&view->encoder, &view->lead->encoder);
	view->lead = to_lead;
	view->left_us = monotonic_usec();
}

/* Two viewers that decode the same, over links alike (frame round trips
 * within 10 ms and half the longer of each other: the lead's link chooses
 * the codec and its rate for both): one may get the other's frames. Half,
 * not a quarter: two viewers on one loaded host measured 24 and 47 ms and
 * never joined, while a slow link's frames take several times a local
 * one's (a 1 Mbit/s link: over 100 ms against under 20). A newcomer has
 * no round trip: against a lead's of over 20 ms it never was alike, and
 * on a loaded host it streamed on its own for good. */
static bool alike(const struct rc_view *a, const struct rc_view *b)
{
	const struct rc_connection *ca = a->viewer->conn, *cb = b->viewer->conn;
	double ra = a->encoder.rtt_ms, rb = b->encoder.rtt_ms;
	/* A viewer whose frames have no round trip yet (it just attached)
	 * differs from none: it joins, and leaves if its link is slower. */
	bool unknown = ra == 0 || rb == 0;
	return ca->video == cb->video && ca->copy_rect == cb->copy_rect &&
		ca->replace == cb->replace && ca->compression == cb->compression &&
		(unknown || fabs(ra - rb) <= 10 + 0.5 * (ra > rb ? ra : rb));
}

/*
 * Encoding once: views whose viewers hold the same lossless picture and the
 * same damage share their lead's frames (a check a second, while idle); a
 * follower whose link is full when the lead sends, or that could send
 * while its lead cannot, goes its own way with the lead's state. So viewers
 * in step cost one encode, and a slow one leaves the group and gets the
 * newest picture its own link carries.
 */
static void regroup(struct rc_window *window)
{
	struct rc_view *views[RC_MAX_VIEWERS], *view;
	int n = 0;
	/* The input viewer's view first, so that others join its stream
	 * rather than it theirs; and a watcher leads only watchers, so
	 * watchers that come and go never leave a full viewer without a lead
	 * (which would start its stream anew). */
	struct rc_view *input = window_view(window, window->server->input_viewer);
	if (input && input->viewer->conn->welcomed) {
		views[n++] = input;
	}
	window_for_each_view(view, window, i)
	{
		if (view != input) {
			views[n++] = view;
		}
	}
	/* Followers that could go while their lead cannot leave it together. */
	for (int i = 0; i < n; i++) {
		struct rc_view *lead = views[i];
		if (lead->lead || encoder_busy(&lead->encoder) || !has_work(lead) ||
			link_ready(lead)) {
			continue;
		}
		struct rc_view *first = NULL;
		for (int j = 0; j < n; j++) {
			if (views[j]->lead == lead && link_ready(views[j])) {
				leave(views[j], first);
				first = first ? first : views[j];
			}
		}
	}
	uint64_t now = monotonic_usec();
	bool compare = now - window->share_checked_us >= 1000000, compared = false;
	for (int i = 0; i < n; i++) {
		struct rc_view *a = views[i];
		for (int j = 0; j < n && !a->lead; j++) {
			struct rc_view *b = views[j];
			if (b == a || b->lead || now - b->left_us <= REJOIN_US || !alike(a, b)) {
				continue;
			}
			bool join;
			if (encoder_streaming(&a->encoder)) {
				/* A viewer that needs a whole picture, or that
				 * streams on its own, joins a video stream, which
				 * starts anew for all: one keyframe more, one
				 * encoder less from then on. Not one that just left
				 * for being slow. */
				join = (!a->viewer->view_only || b->viewer->view_only) &&
					(encoder_wants_whole(&b->encoder) ||
						encoder_streaming(&b->encoder)) &&
					!encoder_busy(&b->encoder) && link_ready(b) &&
					may_restart(a, now);
				if (join) {
					restart(a, b, now);
				}
			} else {
				/* Lossless: the same picture and the same damage.
				 * Comparing pictures costs a pass over both: a
				 * window's are compared at most once a second. */
				join = compare && i < j &&
					pixman_region32_equal(&a->damage, &b->damage) &&
					!encoder_wants_whole(&a->encoder) &&
					!encoder_wants_whole(&b->encoder);
				if (join) {
					compared = true;
					join = encoder_can_share(&a->encoder, &b->encoder);
				}
			}
			if (!join) {
				continue;
			}
			/* b, and those that followed it, follow a. */
			for (int k = 0; k < n; k++) {
				if (views[k]->lead == b) {
					views[k]->lead = a;
				}
			}
			b->lead = a;
			log_debug("window %u: viewer %u gets viewer %u's frames (%s)", window->id,
				b->viewer->number, a->viewer->number,
				encoder_streaming(&a->encoder) ? "its stream, anew"
							       : "the same picture");
		}
	}
	if (compared) {
		window->share_checked_us = now;
	}
}

/* Captures what changed, once for all views: each gets the damage, so one
 * that does not send now (its link is full) sends all of it later. */
static struct image capture(struct rc_window *window)
{
	struct wlr_box geometry;
	window->impl->geometry(window, &geometry);
	struct image image = capture_update(&window->capture, window->id, window_surface(window),
		geometry, window->scale, &window->damage);
	if (!image.pixels) {
		return image;
	}
	feedback_sampled(window);
	/* The first frame captured after the app answered an input says so,
	 * to the viewer that gave it. */
	if (window->input_mark_armed) {
		struct rc_view *input_view = window_view(window, window->server->input_viewer);
		if (input_view) {
			input_view->input_mark = window->input_mark;
		}
		window->input_mark = 0;
		window->input_mark_armed = false;
	}
	if (pixman_region32_not_empty(&window->damage)) {
		thumb_changed(window->server);
		uint64_t drawn = window->drawn_us ? window->drawn_us : monotonic_usec();
		struct rc_view *view;
		window_for_each_view(view, window, i)
		{
			pixman_region32_union(&view->damage, &view->damage, &window->damage);
			if (!view->drawn_us) {
				view->drawn_us = drawn;
			}
		}
		pixman_region32_clear(&window->damage);
		window->drawn_us = 0;
	}
	return image;
}

/* Hands the image to the view's encoder, with what changed since its last
 * frame; its followers whose links take it get the frame too, and the
 * others go their own way. */
static void send(struct rc_view *view, struct image image)
{
	struct rc_window *window = view->window;
	long interval = window->clock.interval_ns;
	int fps = (int)((1000000000L + interval / 2) / interval);
	struct rc_view *other, *first = NULL;
	uint64_t now = monotonic_usec();
	uint32_t seq = ++window->frame_seq;
	window_for_each_view(other, window, i)
	{
		if (other->lead != view) {
			continue;
		}
		bool whole = encoder_wants_whole(&other->encoder);
		if (!link_ready(other) || (whole && !may_restart(view, now))) {
			/* Its link is full, or it lost a frame (its viewer
			 * stopped reading) just after the stream started anew
			 * for another: it goes its own way. */
			leave(other, first);
			first = first ? first : other;
			continue;
		}
		if (whole) {
			/* Its last frame was lost to it: this frame is whole,
			 * for all. */
			restart(view, other, now);
		}
		other->in_job = true;
		feedback_sent(other, seq);
		reserve(other);
		other->job_mark = other->input_mark;
		other->input_mark = 0;
		other->drawn_us = 0;
		pixman_region32_clear(&other->damage);
	}
	pixman_region32_intersect_rect(&view->damage, &view->damage, 0, 0, (unsigned)image.width,
		(unsigned)image.height);
	uint64_t drawn = view->drawn_us ? view->drawn_us : monotonic_usec();
	uint32_t mark = view->input_mark;
	view->drawn_us = 0;
	view->input_mark = 0;
	reserve(view);
	feedback_sent(view, seq);
	view->encoder.content = contenttype_of(window_surface(window));
	encoder_send(&view->encoder, &window->server->encode, view->viewer->conn, image,
		&view->damage, fps, seq, mark, drawn);
}

/* Captures once and sends to each view that is ready; none may be busy. */
static void send_ready(struct rc_window *window)
{
	struct rc_view *view;
	bool any = false;
	regroup(window);
	window_for_each_view(view, window, i)
	{
		any = any || ready(view);
	}
	if (!any) {
		return;
	}
	struct image image = capture(window);
	if (!image.pixels) {
		return;
	}
	window_for_each_view(view, window, i)
	{
		if (ready(view)) {
			send(view, image);
		}
	}
}

void frame_encoded(struct rc_encoder *enc)
{
	struct rc_view *view = wl_container_of(enc, view, encoder);
	struct rc_window *window = view->window;
	struct rc_view *other;
	window_for_each_view(other, window, i)
	{
		if (other->lead == view && other->in_job) {
			other->in_job = false;
			release(other);
			encoder_deliver_copy(&other->encoder, enc, other->viewer->conn,
				other->job_mark, &other->damage);
		}
	}
	release(view);
	encoder_deliver(enc, view->viewer->conn, &view->damage);
	/* Frames that waited on this one go now: encoding that ends just
	 * after a tick would otherwise cost a whole tick, and a window whose
	 * encode takes most of a tick would send at half its rate. */
	if (window->frame_waits && window->mapped && window_surface(window) && !any_busy(window)) {
		window->frame_waits = false;
		send_ready(window);
	}
}

void frame_tick(struct rc_clock *clock)
{
	struct rc_window *window = wl_container_of(clock, window, clock);
	struct wlr_surface *surface = window_surface(window);
	if (!window->mapped || !surface) {
		clock_tick_done(clock, false);
		return;
	}
	/* Damage keeps the clock going only while someone can receive it; a
	 * viewer that attaches damages every window and restarts its clock. */
	bool watched = false, work = false;
	struct rc_view *view;
	window_for_each_view(view, window, i)
	{
		watched = true;
		work = work || has_work(view);
	}
	/* While a frame is being encoded the window's image stays as it is,
	 * and new damage waits for the next tick after. */
	bool encoding = any_busy(window);
	bool busy = watched && (encoding || work);
	window->frame_waits = busy && encoding;
	/* The app drew since the last tick. A picture that waits is not
	 * counted again at the ticks it waits through: the fit judges the
	 * app's pictures, and its rate is theirs. */
	bool drew = window->pictures != window->pictures_ticked;
	window->pictures_ticked = window->pictures;
	if (busy && drew) {
		window_for_each_view(view, window, i)
		{
			/* A new picture to send, not a tick a stream merely
			 * wants (encoder_wants_tick). */
			if (has_picture(view)) {
				encoder_tick(&view->encoder, encoding || !link_ready(view));
			}
		}
	}
	if (busy && !encoding) {
		send_ready(window);
	}

	/* Each buffer committed since the last tick is copied (if capture did
	 * not) and released before the app hears it may draw again, so it never
	 * finds its last buffer busy. One copy a tick, however often it commits. */
	wlr_surface_for_each_surface(surface, settle_iter, NULL);
	bool callbacks = false;
	wlr_surface_for_each_surface(surface, has_callbacks_iter, &callbacks);
	if (callbacks && (watched || clock->ticks % UNWATCHED_DIVISOR == 0)) {
		struct timespec now;
		clock_gettime(CLOCK_MONOTONIC, &now);
		wlr_surface_for_each_surface(surface, send_frame_done_iter, &now);
	}
	clock_tick_done(clock, busy || callbacks);
}
