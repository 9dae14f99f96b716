/*
 * Statistics for --stats. Per window: the app's commits and the frames
 * sent in the last second, the codec, bytes/s, round trip and frames in
 * flight; for the link: bytes in flight, their limit, the delivery rate,
 * the minimum round trip, and the writes and frames so far. The window
 * counters reset after each line.
 */
#include <stdio.h>
#include <string.h>

#include "log.h"
#include "sound.h"
#include "stats.h"

static void print_stats(struct rc_server *server)
{
	struct rc_connection *conn = server->connection;
	if (conn && conn->welcomed) {
		const struct flow *flow = &conn->flow;
		char pace[160];
		channel_describe(&conn->channel, pace, sizeof(pace));
		log_info("stats %s", pace);
		log_info("stats frames: in flight %u frames %.1f KiB (limit %.1f KiB, most %.1f "
			 "KiB), delivery %.2f Mbit/s, min rtt %.1f ms, %llu writes for %llu frames",
			flow->count, (double)flow->in_flight / 1024,
			(double)flow_limit(flow) / 1024, (double)flow->max_in_flight / 1024,
			(double)flow_rate(flow) * 8 / 1e6, (double)flow->min_rtt_us / 1000,
			(unsigned long long)conn->channel.writes, (unsigned long long)conn->frames);
		char sound[128];
		sound_describe(server, sound, sizeof(sound));
		if (*sound) {
			log_info("stats %s", sound);
		}
	}
	struct rc_window *window;
	wl_list_for_each(window, &server->windows, link)
	{
		if (!window->mapped) {
			continue;
		}
		struct rc_encoder *enc = &window->encoder;
		char codec[64], name[WIRE_MAX_APP_ID * 4 + 1];
		encoder_describe(enc, &server->encode, codec, sizeof(codec));
		const char *app_id = window->impl->app_id(window);
		log_escape(name, sizeof(name), app_id, strnlen(app_id, WIRE_MAX_APP_ID));
		bool focus = conn && conn->focus == window->id;
		log_info("stats window %u (%s): app %u fps, sent %u fps, %s, %u scrolls, %.3f "
			 "MB/s, rtt %.1f ms, in flight %u%s",
			window->id, name, window->stat_commits, enc->stat_frames, codec,
			enc->stat_copies, (double)enc->stat_bytes / 1e6, enc->rtt_ms,
			enc->seq - enc->acked, focus ? ", focus (its frames go first)" : "");
		window->stat_commits = enc->stat_frames = enc->stat_copies = 0;
		enc->stat_bytes = 0;
	}
}

static int handle_timer(void *data)
{
	struct rc_server *server = data;
	print_stats(server);
	wl_event_source_timer_update(server->stats_timer, 1000);
	return 0;
}

bool stats_init(struct rc_server *server)
{
	if (!server->options.stats) {
		return true;
	}
	server->stats_timer = wl_event_loop_add_timer(server->loop, handle_timer, server);
	return server->stats_timer && wl_event_source_timer_update(server->stats_timer, 1000) == 0;
}

void stats_finish(struct rc_server *server)
{
	if (server->stats_timer) {
		wl_event_source_remove(server->stats_timer);
		server->stats_timer = NULL;
	}
}
