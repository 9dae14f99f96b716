/*
 * Statistics for --stats. Per window: the app's commits and the frames
 * sent in the last second, the codec, bytes/s, round trip and frames in
 * flight; for the link: bytes in flight, their limit, the delivery rate,
 * the minimum round trip, and the writes and frames so far. The same
 * numbers go to a viewer that shows them (window_stats, for its HUD). The
 * window counters reset each second; the timer runs only while somebody
 * wants them.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "bands.h"
#include "log.h"
#include "procs.h"
#include "quic.h"
#include "sound.h"
#include "stats.h"

/* Every line of one second's stats begins with the time it was taken. */
static char stamp[LOG_CLOCK_SIZE];
#define STATS(fmt, ...) log_info("%s stats " fmt, stamp, __VA_ARGS__)

/* A window's app id, safe for a log line. */
#define NAME_MAX_ESCAPED (WIRE_MAX_APP_ID * 4 + 1)
static const char *window_name(struct rc_window *window, char name[NAME_MAX_ESCAPED])
{
	const char *app_id = window->impl->app_id(window);
	log_escape(name, NAME_MAX_ESCAPED, app_id, strnlen(app_id, WIRE_MAX_APP_ID));
	return name;
}

/* The window's frames on their way to the viewer. */
static uint32_t frames_in_flight(const struct flow *flow, uint32_t window)
{
	uint32_t n = 0;
	for (uint32_t i = 0; i < flow->count; i++) {
		n += flow->frames[i].window == window;
	}
	return n;
}

static void print_viewer(struct rc_server *server, struct rc_viewer *viewer, const char *who)
{
	struct rc_connection *conn = viewer->conn;
	const struct flow *flow = &conn->flow;
	char pace[160];
	channel_describe(&conn->channel, pace, sizeof(pace));
	STATS("%s%s", pace, who);
	STATS("frames: in flight %u frames %.1f KiB (limit %.1f KiB, most %.1f "
	      "KiB), delivery %.2f Mbit/s, min rtt %.1f ms, %llu writes for %llu frames%s",
		flow->count, (double)flow->in_flight / 1024, (double)flow_limit(flow) / 1024,
		(double)flow->max_in_flight / 1024, (double)flow_rate(flow) * 8 / 1e6,
		(double)flow->min_rtt_us / 1000, (unsigned long long)conn->channel.writes,
		(unsigned long long)conn->frames, who);
	struct rc_window *window;
	wl_list_for_each(window, &server->windows, link)
	{
		struct rc_view *view = window_view(window, viewer);
		if (!window->mapped || !view) {
			continue;
		}
		struct rc_encoder *enc = &view->encoder;
		char codec[384], name[NAME_MAX_ESCAPED];
		encoder_describe(enc, codec, sizeof(codec));
		bool focus = conn->focus == window->id;
		char shared[48] = "";
		if (view->lead) {
			snprintf(shared, sizeof(shared), ", encoded once with viewer %u's",
				view->lead->viewer->number);
		}
		STATS("window %u (%s): app %u fps, sent %u fps, %s, %u scrolls, %.3f "
		      "MB/s, rtt %.1f ms, in flight %u%s%s%s",
			window->id, window_name(window, name), window->stat_commits,
			enc->stat_frames, codec, enc->stat_copies, (double)enc->stat_bytes / 1e6,
			enc->rtt_ms, frames_in_flight(&conn->flow, window->id),
			focus ? ", focus (its frames go first)" : "", shared, who);
	}
}

/* Each viewer's link and windows; with more than one, each line names its
 * viewer. */
static void print_stats(struct rc_server *server)
{
	log_clock(stamp);
	if (!server_watched(server)) {
		struct rc_window *window;
		wl_list_for_each(window, &server->windows, link)
		{
			char name[NAME_MAX_ESCAPED];
			if (window->mapped) {
				STATS("window %u (%s): app %u fps, no viewer", window->id,
					window_name(window, name), window->stat_commits);
			}
		}
	}
	struct rc_viewer *viewer;
	wl_list_for_each(viewer, &server->viewers, link)
	{
		if (!viewer->conn->welcomed) {
			continue;
		}
		char who[64] = "";
		if (server->nviewers > 1) {
			snprintf(who, sizeof(who), " [viewer %u%s%s]", viewer->number,
				viewer->view_only ? ", watching" : "",
				viewer == server->input_viewer ? ", input" : "");
		}
		print_viewer(server, viewer, who);
	}
	if (server->doors.quic) {
		char udp[384];
		quic_describe(server->doors.quic, udp, sizeof(udp));
		STATS("%s (all viewers)", udp);
	}
	const struct rc_encode_context *encode = &server->encode;
	int streams = atomic_load(&encode->cores.streams);
	int workers = workers_count(encode->workers), helpers = bands_threads();
	/* The cores line says how the work is spread: printed when that
	 * changes (and first), not each second. */
	static struct {
		int total, streams, workers, helpers;
	} said = {-1, -1, -1, -1};
	if (said.total != encode->cores.total || said.streams != streams ||
		said.workers != workers || said.helpers != helpers) {
		said.total = encode->cores.total;
		said.streams = streams;
		said.workers = workers;
		said.helpers = helpers;
		STATS("cores %d: %d video stream%s share them; frames encoded on %d worker%s; "
		      "pictures scaled and copied in bands on %d more thread%s",
			encode->cores.total, streams, streams == 1 ? "" : "s", workers,
			workers == 1 ? "" : "s", helpers, helpers == 1 ? "" : "s");
	}
	char sound[128];
	sound_describe(server, sound, sizeof(sound));
	if (*sound) {
		STATS("%s", sound);
	}
	/* Everything the session runs: the reaper, the sound server,
	 * Xwayland, and what the app started. */
	int procs = procs_below(getpid(), NULL, 0);
	if (procs >= 0) {
		STATS("session: %d process%s", procs, procs == 1 ? "" : "es");
	}
}

/* A video window's encoding, for a viewer of minor 7 or later. */
static void send_video_stats(struct rc_connection *conn, uint32_t window,
	const struct rc_encoder *enc)
{
	int32_t width = enc->picture_shown[0], height = enc->picture_shown[1];
	double qp = enc->qp_shown < WIRE_MAX_QP ? enc->qp_shown : WIRE_MAX_QP;
	struct wire_msg msg = {
		.type = WIRE_VIDEO_STATS,
		.video_stats =
			{
				.window = window,
				.bitrate = enc->bitrate_shown < WIRE_MAX_BITRATE
					? (uint32_t)enc->bitrate_shown
					: WIRE_MAX_BITRATE,
				.width = (uint16_t)(width < WIRE_MAX_DIM ? width : WIRE_MAX_DIM),
				.height = (uint16_t)(height < WIRE_MAX_DIM ? height : WIRE_MAX_DIM),
				.preset = (uint8_t)enc->preset_shown,
				.qp = (uint8_t)(qp > 0 ? qp + 0.5 : 0),
			},
	};
	connection_send(conn, &msg);
}

/* The same numbers to a viewer that shows them (its HUD). */
static void send_stats(struct rc_server *server, struct rc_viewer *viewer)
{
	struct rc_window *window;
	wl_list_for_each(window, &server->windows, link)
	{
		struct rc_view *view = window_view(window, viewer);
		if (!window->mapped || !view) {
			continue;
		}
		const struct rc_encoder *enc = &view->encoder;
		struct wire_msg msg = {
			.type = WIRE_WINDOW_STATS,
			.window_stats =
				{
					.window = window->id,
					.app_fps = window->stat_commits < WIRE_MAX_FPS
						? window->stat_commits
						: WIRE_MAX_FPS,
					.sent_fps = enc->stat_frames < WIRE_MAX_FPS
						? enc->stat_frames
						: WIRE_MAX_FPS,
					.bytes = enc->stat_bytes < UINT32_MAX
						? (uint32_t)enc->stat_bytes
						: UINT32_MAX,
					.rtt_us = (uint32_t)(enc->rtt_ms * 1000),
					.video = enc->video_shown && enc->video_name,
					.motion = (uint8_t)encoder_motion(enc),
					.threads = (uint8_t)(enc->threads_shown < 255
							? enc->threads_shown
							: 255),
					.compression = viewer->conn->compression,
				},
		};
		connection_send(viewer->conn, &msg);
		if (msg.window_stats.video && viewer->conn->minor >= 7) {
			send_video_stats(viewer->conn, window->id, enc);
		}
	}
}

static void reset_counters(struct rc_server *server)
{
	struct rc_window *window;
	wl_list_for_each(window, &server->windows, link)
	{
		window->stat_commits = 0;
		for (int i = 0; i < RC_MAX_VIEWERS; i++) {
			struct rc_view *view = window->views[i];
			if (view) {
				view->encoder.stat_frames = view->encoder.stat_copies = 0;
				view->encoder.stat_bytes = 0;
			}
		}
	}
}

static bool viewer_wants_stats(const struct rc_viewer *viewer)
{
	const struct rc_connection *conn = viewer->conn;
	return conn->welcomed && conn->stats_wanted && conn->minor >= 2;
}

/* Whether any viewer wants the numbers; sends them to each that does. */
static bool send_all_stats(struct rc_server *server)
{
	bool any = false;
	struct rc_viewer *viewer;
	wl_list_for_each(viewer, &server->viewers, link)
	{
		if (viewer_wants_stats(viewer)) {
			send_stats(server, viewer);
			any = true;
		}
	}
	return any;
}

static int handle_timer(void *data)
{
	struct rc_server *server = data;
	if (server->options.stats) {
		print_stats(server);
	}
	bool wanted = send_all_stats(server);
	reset_counters(server);
	/* Nobody wants them: no more wake-ups until somebody does. */
	if (server->options.stats || wanted) {
		wl_event_source_timer_update(server->stats_timer, 1000);
	} else {
		server->stats_armed = false;
	}
	return 0;
}

bool stats_init(struct rc_server *server)
{
	server->stats_timer = wl_event_loop_add_timer(server->loop, handle_timer, server);
	if (!server->stats_timer) {
		return false;
	}
	if (server->options.stats) {
		stats_start(server);
	}
	return true;
}

void stats_start(struct rc_server *server)
{
	if (server->stats_armed || !server->stats_timer) {
		return;
	}
	/* The first second counts from now. */
	reset_counters(server);
	server->stats_armed = wl_event_source_timer_update(server->stats_timer, 1000) == 0;
}

void stats_finish(struct rc_server *server)
{
	if (server->stats_timer) {
		wl_event_source_remove(server->stats_timer);
		server->stats_timer = NULL;
	}
}
