/* Presentation feedback on the app's clock (feedback.h). */
#include <string.h>
#include <time.h>
#include <wlr/types/wlr_presentation_time.h>
#include <wlr/types/wlr_surface.h>

#include "announce.h"
#include "feedback.h"
#include "log.h"
#include "monotonic.h"
#include "output.h"
#include "presentation-time-protocol.h"

/* The clocks' offset is the largest sample of two spans this long: delays
 * only lower a sample, and a clock that drifts is followed. */
#define OFFSET_SPAN_US 5000000

bool feedback_init(struct rc_server *server)
{
	server->presentation = wlr_presentation_create(server->display, server->backend);
	return server->presentation != NULL;
}

/* Entry i goes: discarded unless it was presented just before. */
static void drop(struct rc_window *window, int i)
{
	wlr_presentation_feedback_destroy(window->feedback[i].feedback);
	window->nfeedback--;
	memmove(&window->feedback[i], &window->feedback[i + 1],
		(size_t)(window->nfeedback - i) * sizeof(window->feedback[0]));
}

struct sampling {
	struct rc_window *window;
	bool found; /* a surface had feedback to take */
};

static void sampled_iter(struct wlr_surface *surface, int sx, int sy, void *data)
{
	struct sampling *sampling = data;
	struct rc_window *window = sampling->window;
	struct wlr_presentation_feedback *feedback =
		wlr_presentation_surface_sampled(window->server->presentation, surface);
	if (!feedback) {
		return;
	}
	sampling->found = true;
	if (window->nfeedback == RC_FEEDBACKS) {
		drop(window, 0); /* the oldest: no viewer answered for it */
	}
	window->feedback[window->nfeedback++] = (struct rc_feedback){.feedback = feedback};
}

/* The viewers tell when frames are shown while the app asks, and for a
 * second after its last ask: a frame_presented for every picture of every
 * window would double what a viewer sends. */
#define WANTED_US 1000000

void feedback_sampled(struct rc_window *window)
{
	struct wlr_surface *surface = window_surface(window);
	if (!surface || !window->server->presentation) {
		return;
	}
	struct sampling sampling = {.window = window};
	wlr_surface_for_each_surface(surface, sampled_iter, &sampling);
	uint64_t now = monotonic_usec();
	bool found = sampling.found;
	if (found) {
		window->feedback_sampled_us = now;
	}
	bool wanted =
		found || (window->feedback_wanted && now - window->feedback_sampled_us < WANTED_US);
	if (wanted != window->feedback_wanted) {
		window->feedback_wanted = wanted;
		log_debug("window %u: the app %s when its frames are shown", window->id,
			wanted ? "asks" : "no longer asks");
		announce_feedback(window);
	}
}

/* The viewer whose screen the app hears of: the one with input where it
 * sees the window, else the first that does. */
static struct rc_viewer *presenter(struct rc_window *window)
{
	struct rc_view *view = window_view(window, window->server->input_viewer);
	if (view && view->viewer->conn->welcomed) {
		return view->viewer;
	}
	window_for_each_view(view, window, i)
	{
		return view->viewer;
	}
	return NULL;
}

void feedback_sent(struct rc_view *view, uint32_t seq)
{
	struct rc_window *window = view->window;
	if (presenter(window) != view->viewer) {
		return;
	}
	for (int i = 0; i < window->nfeedback; i++) {
		struct rc_feedback *f = &window->feedback[i];
		if (!f->sent) {
			f->sent = true;
			f->seq = seq;
			f->viewer = view->viewer->number;
		}
	}
}

/* The largest sample, which the fewest delays lowered, and half the
 * link's least round trip for the ack's way over (the least known now:
 * an early sample's round trip was a large first frame's). */
static int64_t offset(const struct rc_viewer *viewer)
{
	int64_t best = viewer->offset_span[0] > viewer->offset_span[1] ? viewer->offset_span[0]
								       : viewer->offset_span[1];
	return best + (int64_t)(viewer->conn->flow.min_rtt_us / 2);
}

static void offset_sample(struct rc_viewer *viewer, int64_t sample, uint64_t now)
{
	bool first = !viewer->offset_known;
	if (first) {
		viewer->offset_span[0] = viewer->offset_span[1] = sample;
		viewer->offset_span_us = now;
		viewer->offset_known = true;
	} else if (now - viewer->offset_span_us >= OFFSET_SPAN_US) {
		viewer->offset_span[1] = viewer->offset_span[0];
		viewer->offset_span[0] = sample;
		viewer->offset_span_us = now;
	} else if (sample > viewer->offset_span[0]) {
		viewer->offset_span[0] = sample;
	}
	int64_t now_offset = offset(viewer);
	if (first || now_offset - viewer->offset_said > 1000 ||
		viewer->offset_said - now_offset > 1000) {
		viewer->offset_said = now_offset;
		log_debug("viewer %u: its clock is %+.1f ms from ours", viewer->number,
			(double)now_offset / 1000);
	}
}

/* Tells the app that frame seq, which carried f's commit, was shown at
 * time_us on the viewer's clock. */
static void send_presented(struct rc_window *window, struct rc_viewer *viewer,
	struct rc_feedback *f, uint64_t time_us, uint32_t refresh_ns, uint32_t flags)
{
	uint64_t now = monotonic_usec();
	int64_t at = (int64_t)time_us - offset(viewer);
	/* Shown before it was sent, or after now, is the offset's error. */
	if (at > (int64_t)now) {
		at = (int64_t)now;
	} else if (at < 0) {
		at = 0;
	}
	clockid_t clock = window->server->presentation->clock;
	if (clock != CLOCK_MONOTONIC) {
		struct timespec ts;
		clock_gettime(clock, &ts);
		at += ((int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000) - (int64_t)now;
	}
	long interval = window->clock.interval_ns;
	struct wlr_presentation_event event = {
		.output = output_of_window(window),
		.tv_sec = (uint64_t)at / 1000000,
		.tv_nsec = (uint32_t)((uint64_t)at % 1000000) * 1000,
		.refresh = refresh_ns ? refresh_ns : (uint32_t)(interval > 0 ? interval : 0),
		.seq = f->seq,
		.flags = (flags & WIRE_PRESENTED_VSYNC) ? WP_PRESENTATION_FEEDBACK_KIND_VSYNC : 0,
	};
	wlr_presentation_feedback_send_presented(f->feedback, &event);
}

/* The viewer's word on frame seq: the commits it carried were shown at
 * time_us (0: never), those of frames before it never were. */
static void answer(struct rc_window *window, struct rc_viewer *viewer, uint32_t seq,
	uint64_t time_us, uint32_t refresh_ns, uint32_t flags)
{
	for (int i = 0; i < window->nfeedback;) {
		struct rc_feedback *f = &window->feedback[i];
		if (!f->sent || f->viewer != viewer->number || (int32_t)(seq - f->seq) < 0) {
			i++;
			continue;
		}
		if (f->seq == seq && time_us) {
			send_presented(window, viewer, f, time_us, refresh_ns, flags);
		}
		drop(window, i);
	}
}

void feedback_acked(struct rc_viewer *viewer, struct rc_window *window, uint32_t seq,
	uint64_t viewer_us)
{
	uint64_t now = monotonic_usec();
	offset_sample(viewer, (int64_t)viewer_us - (int64_t)now, now);
	if (viewer->conn->minor < 11) {
		/* It acks as it commits the frame to its desktop. */
		answer(window, viewer, seq, viewer_us, 0, 0);
	}
}

bool feedback_presented(struct rc_viewer *viewer, struct rc_window *window,
	const struct wire_frame_presented *msg)
{
	if ((int32_t)(window->frame_seq - msg->seq) < 0) {
		return false;
	}
	if (viewer->offset_known) {
		answer(window, viewer, msg->seq, msg->time_us, msg->refresh_ns, msg->flags);
	} else {
		answer(window, viewer, msg->seq, 0, 0, 0); /* no time to tell it in */
	}
	return true;
}

void feedback_view_gone(struct rc_view *view)
{
	struct rc_window *window = view->window;
	for (int i = 0; i < window->nfeedback;) {
		if (window->feedback[i].sent &&
			window->feedback[i].viewer == view->viewer->number) {
			drop(window, i);
		} else {
			i++;
		}
	}
}

void feedback_window_finish(struct rc_window *window)
{
	while (window->nfeedback) {
		drop(window, window->nfeedback - 1);
	}
}
