/*
 * One poll for everything, so that no source can starve another and
 * nothing ever blocks: a slow server never freezes the local windows.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "bands.h"
#include "clipboard.h"
#include "cores.h"
#include "connection.h"
#include "decode.h"
#include "dispatch.h"
#include "log.h"
#include "notify.h"
#include "print.h"
#include "loop.h"
#include "monotonic.h"
#include "handover.h"
#include "quic.h"
#include "sound.h"
#include "transport.h"
#include "video.h"

static volatile sig_atomic_t stop_signal;

static void handle_signal(int signo)
{
	stop_signal = signo;
}

/* Every line of one second's stats begins with the time it was taken. */
static char stamp[LOG_CLOCK_SIZE];
#define STATS(fmt, ...) log_info("%s stats " fmt, stamp, __VA_ARGS__)

static void stats_line(const char *text)
{
	STATS("%s", text);
}

static void print_stats(struct rv_viewer *viewer)
{
	log_clock(stamp);
	if (viewer->connection.connected && viewer->connection.welcomed) {
		char pace[160];
		channel_describe(&viewer->connection.channel, pace, sizeof(pace));
		STATS("%s", pace);
		if (viewer->connection.quic) {
			char udp[384];
			quic_describe(viewer->connection.quic, udp, sizeof(udp));
			STATS("%s", udp);
		}
	}
	/* How the work is spread: printed when it changes (and first). */
	static int said_cores = -1, said_helpers = -1;
	int helpers = bands_threads(), cores = cores_available();
	if (cores != said_cores || helpers != said_helpers) {
		said_cores = cores;
		said_helpers = helpers;
		STATS("cores %d: video decoded in slices on up to as many threads; pictures "
		      "scaled in bands on %d more thread%s",
			cores, helpers, helpers == 1 ? "" : "s");
	}
	handover_stats(viewer, stats_line);
	char sound[192];
	sound_describe(viewer, sound, sizeof(sound));
	if (*sound) {
		STATS("%s", sound);
	}
	struct rv_window *window;
	wl_list_for_each(window, &viewer->windows, link)
	{
		char photon[64] = "";
		if (window->stat_photons) {
			snprintf(photon, sizeof(photon), ", input to photon %.1f ms",
				(double)window->stat_photon_us / window->stat_photons / 1000);
		}
		char codec[96] = "lossless";
		if (window->decoder) {
			int threads = video_decoder_threads(window->decoder);
			int pw, ph;
			bool smaller = decode_picture_smaller(window, &pw, &ph);
			int n = snprintf(codec, sizeof(codec), "video decoded on %d thread%s",
				threads, threads == 1 ? "" : "s");
			if (smaller && n > 0 && (size_t)n < sizeof(codec)) {
				snprintf(codec + n, sizeof(codec) - (size_t)n,
					", %dx%d scaled by %s", pw, ph,
					window->picture_scaled ? "the desktop" : "the viewer");
			}
		}
		STATS("window %u: received %u fps, presented %u fps (the desktop's frame "
		      "callbacks %u), %.3f MB/s, %s%s",
			window->id, window->stat_received, window->stat_presented,
			window->stat_callbacks, (double)window->stat_bytes / 1e6, codec, photon);
		window->stat_received = window->stat_presented = window->stat_callbacks = 0;
		window->stat_bytes = 0;
		window->stat_photon_us = 0;
		window->stat_photons = 0;
	}
}

/* Milliseconds until the next stats line, or -1 without --stats. */
static int stats_timeout(struct rv_viewer *viewer)
{
	if (!viewer->options.stats) {
		return -1;
	}
	uint64_t now = monotonic_usec();
	if (viewer->stats_due_us == 0) {
		viewer->stats_due_us = now + 1000000;
	}
	if (now >= viewer->stats_due_us) {
		print_stats(viewer);
		viewer->stats_due_us += 1000000;
		if (viewer->stats_due_us < now) {
			viewer->stats_due_us = now + 1000000;
		}
	}
	return (int)((viewer->stats_due_us - now) / 1000) + 1;
}

static int poll_timeout(struct rv_viewer *viewer)
{
	int timeout = stats_timeout(viewer);
	int retry = transport_retry_timeout(viewer);
	if (retry >= 0 && (timeout < 0 || retry < timeout)) {
		timeout = retry;
	}
	return timeout;
}

static void read_server(struct rv_viewer *viewer)
{
	char err[256];
	switch (connection_read(viewer, dispatch_message, err, sizeof(err))) {
	case CHANNEL_OK:
		break;
	case CHANNEL_CLOSED:
		dispatch_link_lost(viewer, "closed");
		break;
	case CHANNEL_FAILED:
		dispatch_link_lost(viewer, strerror(errno));
		break;
	case CHANNEL_INVALID:
		connection_fail(viewer, "%s", err);
		break;
	}
}

/* One turn: flush, poll, handle what is ready. False to stop. */
static bool turn(struct rv_viewer *viewer)
{
	struct rv_connection *conn = &viewer->connection;
	while (wl_display_prepare_read(viewer->display) != 0) {
		if (wl_display_dispatch_pending(viewer->display) < 0) {
			break;
		}
	}
	if (wl_display_flush(viewer->display) < 0 && errno != EAGAIN) {
		wl_display_cancel_read(viewer->display);
		log_error("the local compositor connection failed: %s", strerror(errno));
		viewer->exit_code = 1;
		return false;
	}
	/* Files go where the link has room, before the flush. */
	bool hashing = handover_sync(viewer);
	/* Stalled transfers end before the flush that tells the server. */
	int stall = clipboard_expire(viewer);
	if (conn->connected && !conn->connecting) {
		connection_flush(viewer);
	}
	if (!viewer->running) {
		wl_display_cancel_read(viewer->display);
		return false;
	}
	bool up = conn->connected;
	/* What pacing holds back goes when the server's ack is read. */
	bool want_out = up && (conn->connecting || channel_blocked(&conn->channel));
	/* Where each part's descriptors sit (the probe has two). */
	enum {
		FD_SOUND = 3,
		FD_PROBE = 4,
		FD_NOTIFY = 6,
		FD_PRINT,
		FD_CLIP = FD_PRINT + RV_PRINT_JOBS
	};
	struct pollfd fds[FD_CLIP + TRANSFER_MAX] = {
		{.fd = wl_display_get_fd(viewer->display), .events = POLLIN},
		{.fd = up ? conn->channel.in_fd : -1, .events = conn->connecting ? 0 : POLLIN},
		{.fd = up ? conn->channel.out_fd : -1, .events = want_out ? POLLOUT : 0},
	};
	if (conn->channel.out_fd == conn->channel.in_fd) {
		fds[1].events |= fds[2].events;
		fds[2].fd = -1;
	}
	/* Clipboard data is read only while the server keeps up. */
	int timeout = poll_timeout(viewer);
	if (hashing) {
		timeout = 0; /* a file is being hashed: the next step at once */
	}
	if (stall >= 0 && (timeout < 0 || stall < timeout)) {
		timeout = stall;
	}
	sound_poll_fd(viewer, &fds[FD_SOUND]);
	transport_probe_poll(viewer, &fds[FD_PROBE]);
	notify_poll_fd(viewer, &fds[FD_NOTIFY]);
	print_poll_fds(viewer, fds + FD_PRINT);
	clipboard_poll_fds(viewer, fds + FD_CLIP,
		up && channel_queued_class(&conn->channel, CHANNEL_BULK) < TRANSFER_HIGH_WATER);
	if (poll(fds, sizeof(fds) / sizeof(fds[0]), timeout) < 0) {
		wl_display_cancel_read(viewer->display);
		if (errno == EINTR) {
			return true;
		}
		log_error("poll failed: %s", strerror(errno));
		return false;
	}
	if (fds[0].revents & POLLIN) {
		if (wl_display_read_events(viewer->display) < 0) {
			log_error("the local compositor connection failed: %s", strerror(errno));
			viewer->exit_code = 1;
			return false;
		}
	} else {
		wl_display_cancel_read(viewer->display);
	}
	if (fds[0].revents & (POLLHUP | POLLERR)) {
		log_error("the local compositor went away");
		viewer->exit_code = 1;
		return false;
	}
	if (wl_display_dispatch_pending(viewer->display) < 0) {
		log_error("the local compositor connection failed: %s", strerror(errno));
		viewer->exit_code = 1;
		return false;
	}
	if (up && conn->connected && conn->connecting &&
		(fds[1].revents & (POLLOUT | POLLHUP | POLLERR))) {
		if (!transport_finish_connect(viewer)) {
			dispatch_link_lost(viewer, strerror(errno));
		}
	} else if (up && conn->connected && (fds[1].revents & (POLLIN | POLLHUP | POLLERR))) {
		read_server(viewer);
	}
	sound_handle_poll(viewer, &fds[FD_SOUND]);
	if (transport_probe_ready(viewer, &fds[FD_PROBE])) {
		dispatch_move_to_udp(viewer);
	}
	notify_handle_poll(viewer, &fds[FD_NOTIFY]);
	print_handle_poll(viewer, fds + FD_PRINT);
	clipboard_handle_poll(viewer, fds + FD_CLIP);
	if (transport_retry(viewer)) {
		dispatch_hello(viewer);
	}
	return true;
}

void loop_run(struct rv_viewer *viewer)
{
	struct sigaction sa = {.sa_handler = handle_signal};
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	while (viewer->running && !stop_signal && turn(viewer)) {
	}
	if (stop_signal) {
		log_info("%s: closing", strsignal(stop_signal));
		viewer->exit_code = 0;
	}
}
