/* Writes the seed corpus of the fuzz harnesses: one valid message of each
 * kind, frames under every compression, and an H.264 stream start.
 * Usage: fuzz-seeds DIR (creates DIR/wire, DIR/frame, DIR/video and, with
 * UDP, DIR/lanes and DIR/door). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "channel.h"
#include "codec.h"
#include "video.h"
#include "wire.h"
#ifdef RCOMP_HAVE_UDP
#include "lanes.h"
#endif

static void save(const char *dir, const char *sub, const char *name, const struct buffer *buf,
	const uint8_t *prefix, size_t prefix_len)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", dir, sub);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%s/%s", dir, sub, name);
	FILE *f = fopen(path, "wb");
	if (!f) {
		perror(path);
		exit(1);
	}
	fwrite(prefix, 1, prefix_len, f);
	fwrite(buffer_head(buf), 1, buffer_size(buf), f);
	fclose(f);
}

/* The same messages as a channel writes them (the first as it is, the rest
 * in records), for the harness that reads through a channel. */
static void save_records(const char *dir, const char *name, const struct buffer *plain,
	enum wire_sender from)
{
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) {
		perror("socketpair");
		exit(1);
	}
	struct channel ch;
	channel_init(&ch, sv[0], sv[0], 1 << 20, 1 << 20);
	ch.unpaced = true;
	size_t pos = 0;
	while (pos < buffer_size(plain)) {
		struct wire_msg msg;
		size_t used = 0;
		char err[256];
		if (wire_decode(from, buffer_head(plain) + pos, buffer_size(plain) - pos, &msg,
			    &used, err, sizeof(err)) != WIRE_OK) {
			fprintf(stderr, "fuzz-seeds: %s\n", err);
			exit(1);
		}
		channel_send(&ch, &msg);
		pos += used;
	}
	channel_flush(&ch);
	struct buffer out;
	buffer_init(&out, 1 << 20);
	uint8_t *dst = buffer_reserve(&out, 1 << 20);
	ssize_t n = read(sv[1], dst, 1 << 20);
	buffer_commit(&out, n > 0 ? (size_t)n : 0);
	save(dir, "wire", name, &out, NULL, 0);
	buffer_finish(&out);
	channel_close(&ch);
	close(sv[1]);
}

#ifdef RCOMP_HAVE_UDP

/* Records of each lane's class as a sender's datagrams, each after its
 * length: plain shards, then (the sender taught 10% loss) with parity, and
 * with the first data shards missing so the receiver rebuilds them. */
static void lanes_seeds(const char *dir)
{
	static const enum channel_class classes[] = {CHANNEL_CONTROL, CHANNEL_AUDIO, CHANNEL_FOCUS,
		CHANNEL_FRAMES, CHANNEL_LINK};
	for (int lossy = 0; lossy < 2; lossy++) {
		struct lanes *l = lanes_new();
		struct buffer buf;
		buffer_init(&buf, 1 << 24);
		for (int i = 0; lossy && i < 400; i++) {
			if (i % 10 == 0) {
				lanes_lost(l, UINT64_MAX);
			} else {
				lanes_acked(l, UINT64_MAX);
			}
		}
		uint8_t record[CHANNEL_RECORD_HEADER + 3000];
		for (unsigned r = 0; r < 10; r++) {
			size_t n = r % 2 ? 3000 : 20 + r;
			record[0] = (uint8_t)classes[r % 5];
			record[1] = 0;
			record[2] = (uint8_t)n;
			record[3] = (uint8_t)(n >> 8);
			memset(record + CHANNEL_RECORD_HEADER, 'a' + (int)r, n);
			lanes_queue(l, record, CHANNEL_RECORD_HEADER + n);
		}
		uint8_t dg[LANES_DATAGRAM_MAX];
		uint64_t id;
		bool share;
		size_t len;
		for (unsigned sent = 0; (len = lanes_next(l, dg, &id, &share)) > 0; sent++) {
			lanes_commit(l, 0);
			lanes_acked(l, id);
			/* Leave out the first shard of each record with parity. */
			if (lossy && dg[2] == 0 && dg[1] > 1) {
				continue;
			}
			uint8_t head[2] = {(uint8_t)len, (uint8_t)(len >> 8)};
			buffer_append(&buf, head, 2);
			buffer_append(&buf, dg, len);
		}
		save(dir, "lanes", lossy ? "with-parity" : "plain", &buf, NULL, 0);
		buffer_finish(&buf);
		lanes_free(l);
	}
}

/* One Initial of each kind of token for the door's harness (fuzz-door.c
 * says what the bytes mean): none, forged, its own, altered. */
static void door_seeds(const char *dir)
{
	static const char *const names[] = {"no-token", "forged", "sealed", "altered"};
	for (uint8_t kind = 0; kind < 4; kind++) {
		struct buffer buf;
		buffer_init(&buf, 4096);
		uint8_t head[] = {kind, 1, kind, kind, 8};
		buffer_append(&buf, head, sizeof(head));
		for (uint8_t i = 0; i < 16 + 1 + 8; i++) {
			uint8_t b = i == 16 ? 8 : (uint8_t)(i * 37 + kind);
			buffer_append(&buf, &b, 1);
		}
		uint8_t tail[64];
		memset(tail, kind == 3 ? 0 : 0xb6, sizeof(tail));
		tail[5] = kind == 3 ? 1 : 0xb6;
		buffer_append(&buf, tail, sizeof(tail));
		save(dir, "door", names[kind], &buf, NULL, 0);
		buffer_finish(&buf);
	}
}
#endif

/* Upgrades for the upgrade harness (fuzz-upgrade.c): the page's offer and
 * Hosts of each kind, split by a zero byte. */
static void upgrade_seeds(const char *dir)
{
	static const char *const seeds[][3] = {
		{"page",
			"rcomp, "
			"rcomp-key."
			"5f4e733631a99690009d9db6190a5d399d38ac231fcfb32457a07c399abe79ef",
			"127.0.0.1:8080"},
		{"unkeyed", "rcomp", "localhost:9000"},
		{"ipv6",
			"rcomp-key."
			"5f4e733631a99690009d9db6190a5d399d38ac231fcfb32457a07c399abe79ef,rcomp",
			"[::1]:8080"},
		{"foreign", "chat, superchat", "evil.example:8080"},
	};
	for (size_t i = 0; i < sizeof(seeds) / sizeof(seeds[0]); i++) {
		struct buffer buf;
		buffer_init(&buf, 4096);
		buffer_append(&buf, seeds[i][1], strlen(seeds[i][1]) + 1);
		buffer_append(&buf, seeds[i][2], strlen(seeds[i][2]));
		save(dir, "upgrade", seeds[i][0], &buf, NULL, 0);
		buffer_finish(&buf);
	}
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: fuzz-seeds DIR\n");
		return 2;
	}
	const char *dir = argv[1];
	mkdir(dir, 0755);
	struct buffer buf;
	buffer_init(&buf, 1 << 24);

	/* A viewer's opening, and a server's, as one stream each. */
	uint8_t keys[2 * 4];
	wire_put_key(keys, 0, 30);
	wire_put_key(keys, 1, 42);
	struct wire_msg m = {.type = WIRE_HELLO};
	m.hello.magic = WIRE_MAGIC;
	m.hello.major = WIRE_VERSION_MAJOR;
	m.hello.caps = 7;
	m.hello.token = "0123456789abcdef0123456789abcdef";
	m.hello.token_len = 32;
	wire_encode(&buf, &m);
	m = (struct wire_msg){.type = WIRE_KEYMAP};
	m.keymap.format = 1;
	m.keymap.data = "xkb_keymap { xkb_keycodes { include \"evdev\" }; };";
	m.keymap.size = (uint32_t)strlen(m.keymap.data);
	wire_encode(&buf, &m);
	m = (struct wire_msg){.type = WIRE_KEYBOARD_ENTER};
	m.keyboard_enter.window = 1;
	m.keyboard_enter.nkeys = 2;
	m.keyboard_enter.keys = keys;
	wire_encode(&buf, &m);
	m = (struct wire_msg){.type = WIRE_KEY_CHAR};
	m.key_char = (struct wire_key_char){5, '$', 1};
	wire_encode(&buf, &m);
	m.key_char.state = 0;
	wire_encode(&buf, &m);
	m = (struct wire_msg){.type = WIRE_POINTER_MOTION};
	m.pointer_motion.window = 1;
	m.pointer_motion.x = 256 * 10;
	wire_encode(&buf, &m);
	m = (struct wire_msg){.type = WIRE_CONFIGURE};
	m.configure.window = 1;
	m.configure.width = 640;
	m.configure.height = 480;
	wire_encode(&buf, &m);
	m = (struct wire_msg){.type = WIRE_FRAME_ACK};
	m.frame_ack.window = 1;
	m.frame_ack.seq = 3;
	wire_encode(&buf, &m);
	static const uint8_t drag_types[] = {10, 0, 't', 'e', 'x', 't', '/', 'p', 'l', 'a', 'i',
		'n'};
	m = (struct wire_msg){.type = WIRE_DND_ENTER};
	m.dnd_enter.window = 1;
	m.dnd_enter.x = 256 * 5;
	m.dnd_enter.source_actions = WIRE_DND_COPY | WIRE_DND_MOVE;
	m.dnd_enter.count = 1;
	m.dnd_enter.types = drag_types;
	m.dnd_enter.types_len = sizeof(drag_types);
	wire_encode(&buf, &m);
	m = (struct wire_msg){.type = WIRE_DND_DROP};
	wire_encode(&buf, &m);
	m = (struct wire_msg){.type = WIRE_DRAG_LOCAL};
	m.drag_local.state = WIRE_DRAG_DROPPED;
	m.drag_local.action = WIRE_DND_MOVE;
	wire_encode(&buf, &m);
	m = (struct wire_msg){.type = WIRE_TEXT_INPUT_EVENT};
	m.text_input_event.window = 1;
	m.text_input_event.flags = WIRE_TEXT_INPUT_PREEDIT;
	m.text_input_event.preedit_cursor_begin = 0;
	m.text_input_event.preedit_cursor_end = 3;
	m.text_input_event.preedit = "abc";
	m.text_input_event.preedit_len = 3;
	m.text_input_event.commit = "de";
	m.text_input_event.commit_len = 2;
	wire_encode(&buf, &m);
	static const uint8_t opus[] = {0xfc, 0xff, 0xfe}; /* a silent 10 ms packet */
	m = (struct wire_msg){.type = WIRE_AUDIO};
	m.audio.time_us = 1000000;
	m.audio.seq = 1;
	m.audio.samples = 480;
	m.audio.data = opus;
	m.audio.size = sizeof(opus);
	wire_encode(&buf, &m);
	m = (struct wire_msg){.type = WIRE_AUDIO_END};
	m.audio_end.seq = 1;
	wire_encode(&buf, &m);
	save(dir, "wire", "viewer-stream", &buf, NULL, 0);
	save_records(dir, "viewer-records", &buf, WIRE_FROM_VIEWER);
	buffer_consume(&buf, buffer_size(&buf));

	m = (struct wire_msg){.type = WIRE_WELCOME};
	m.welcome.magic = WIRE_MAGIC;
	m.welcome.major = WIRE_VERSION_MAJOR;
	m.welcome.name = "0";
	m.welcome.name_len = 1;
	wire_encode(&buf, &m);
	m = (struct wire_msg){.type = WIRE_WINDOW_NEW};
	m.window_new.window = 1;
	m.window_new.width = 64;
	m.window_new.height = 48;
	m.window_new.title = "foot";
	m.window_new.title_len = 4;
	m.window_new.app_id = "foot";
	m.window_new.app_id_len = 4;
	wire_encode(&buf, &m);
	m = (struct wire_msg){.type = WIRE_HOST_NAME};
	m.host_name.text = "build-7";
	m.host_name.len = 7;
	wire_encode(&buf, &m);
	m = (struct wire_msg){.type = WIRE_WATCH_TOKEN};
	m.watch_token.token = "watch-0123456789abcdef";
	m.watch_token.len = 22;
	wire_encode(&buf, &m);
	m = (struct wire_msg){.type = WIRE_TEXT_INPUT};
	m.text_input.window = 1;
	m.text_input.flags = WIRE_TEXT_INPUT_ENABLED;
	m.text_input.cursor = 5;
	m.text_input.anchor = 5;
	m.text_input.rect_width = 2;
	m.text_input.rect_height = 16;
	m.text_input.text = "hello world";
	m.text_input.text_len = 11;
	wire_encode(&buf, &m);
	m = (struct wire_msg){.type = WIRE_DRAG_START};
	m.drag_start.window = 1;
	m.drag_start.mark = 1;
	m.drag_start.source_actions = WIRE_DND_COPY;
	m.drag_start.count = 1;
	m.drag_start.types = drag_types;
	m.drag_start.types_len = sizeof(drag_types);
	wire_encode(&buf, &m);
	static const uint32_t icon_pixels[4] = {0xffe020e0, 0, 0x80808080, 0xff000000};
	m = (struct wire_msg){.type = WIRE_DRAG_ICON};
	m.drag_icon.x = -1;
	m.drag_icon.width = 2;
	m.drag_icon.height = 2;
	m.drag_icon.scale = 1;
	m.drag_icon.pixels = (const uint8_t *)icon_pixels;
	m.drag_icon.pixels_len = sizeof(icon_pixels);
	wire_encode(&buf, &m);
	m = (struct wire_msg){.type = WIRE_DND_STATUS};
	m.dnd_status.actions = WIRE_DND_MOVE;
	m.dnd_status.preferred = WIRE_DND_MOVE;
	m.dnd_status.mime = "text/plain";
	m.dnd_status.mime_len = 10;
	wire_encode(&buf, &m);
	m = (struct wire_msg){.type = WIRE_WINDOW_STATS};
	m.window_stats.window = 1;
	m.window_stats.app_fps = 60;
	m.window_stats.sent_fps = 30;
	m.window_stats.bytes = 123456;
	m.window_stats.rtt_us = 20000;
	m.window_stats.compression = WIRE_COMPRESS_LZ4;
	wire_encode(&buf, &m);
	m = (struct wire_msg){.type = WIRE_VIDEO_STATS};
	m.video_stats.window = 1;
	m.video_stats.bitrate = 8000000;
	m.video_stats.width = 960;
	m.video_stats.height = 540;
	m.video_stats.qp = 31;
	wire_encode(&buf, &m);
	m = (struct wire_msg){.type = WIRE_WINDOW_GRAB};
	m.window_grab.window = 1;
	m.window_grab.kind = WIRE_GRAB_RESIZE;
	m.window_grab.mark = 1;
	m.window_grab.edges = 10;
	wire_encode(&buf, &m);
	m = (struct wire_msg){.type = WIRE_AUDIO};
	m.audio.time_us = 2000000;
	m.audio.seq = 7;
	m.audio.samples = 480;
	m.audio.data = opus;
	m.audio.size = sizeof(opus);
	wire_encode(&buf, &m);
	m = (struct wire_msg){.type = WIRE_GOODBYE};
	m.goodbye.text = "bye";
	m.goodbye.text_len = 3;
	wire_encode(&buf, &m);
	save(dir, "wire", "server-stream", &buf, NULL, 0);
	save_records(dir, "server-records", &buf, WIRE_FROM_SERVER);
	buffer_consume(&buf, buffer_size(&buf));

	/* Frames: a text-like 64x48 image as diffs under each compression. */
	uint32_t prev[64 * 48] = {0}, next[64 * 48];
	for (int i = 0; i < 64 * 48; i++) {
		next[i] = (i % 7 < 3) ? 0xffd0d0d0 : 0xff101010;
	}
	const char *names[] = {"none", "lz4", "zstd"};
	for (int c = 0; c < 3; c++) {
		struct compressor comp;
		compressor_init(&comp, (enum wire_compression)c, 3);
		uint32_t base[64 * 48];
		memcpy(base, prev, sizeof(base));
		struct image cur = {next, 64, 48, 64}, b = {base, 64, 48, 64};
		struct wire_rect rects[2] = {{0, 0, 64, 20}, {8, 20, 40, 28}};
		uint8_t raw[64 * 48 * 4];
		size_t n = codec_diff_encode(&cur, &b, rects, 2, raw);
		m = (struct wire_msg){.type = WIRE_FRAME};
		m.frame.window = 1;
		m.frame.seq = 1;
		m.frame.width = 64;
		m.frame.height = 48;
		m.frame.compression = (uint8_t)c;
		m.frame.flags = WIRE_FRAME_RESET;
		m.frame.nrects = 2;
		m.frame.raw_size = (uint32_t)n;
		uint8_t packed[2 * WIRE_RECT_SIZE];
		wire_put_rect(packed, 0, rects[0]);
		wire_put_rect(packed, 1, rects[1]);
		m.frame.rects = packed;
		size_t start;
		wire_begin(&buf, &m, &start);
		compressor_compress(&comp, raw, n, &buf);
		wire_finish(&buf, start);
		/* Then a scroll: a copy_rect and the frame that completes it. */
		m = (struct wire_msg){.type = WIRE_COPY_RECT,
			.copy_rect = {.window = 1, .y = 8, .width = 64, .height = 40, .dy = -8}};
		wire_encode(&buf, &m);
		m = (struct wire_msg){.type = WIRE_FRAME,
			.frame = {.window = 1, .seq = 2, .width = 64, .height = 48}};
		wire_encode(&buf, &m);
		char name[32];
		snprintf(name, sizeof(name), "frame-%s", names[c]);
		save(dir, "frame", name, &buf, NULL, 0);
		buffer_consume(&buf, buffer_size(&buf));
		compressor_finish(&comp);
	}

	/* The start of an H.264 stream of a 64x48 window. */
	char err[256];
	struct video_encoder *enc = video_encoder_create(64, 48, 1, 60, 1, 1000000,
		WIRE_PRESET_ULTRAFAST, err, sizeof(err));
	if (enc) {
		bool produced;
		video_encoder_encode(enc, next, 64, 1000000, &buf, &produced);
		const uint8_t start_stream = 1;
		save(dir, "video", "idr", &buf, &start_stream, 1);
		buffer_consume(&buf, buffer_size(&buf));
		video_encoder_encode(enc, prev, 64, 1000000, &buf, &produced);
		const uint8_t same_stream = 0;
		save(dir, "video", "p-frame", &buf, &same_stream, 1);
		video_encoder_destroy(enc);
	}
	buffer_finish(&buf);
	upgrade_seeds(dir);
#ifdef RCOMP_HAVE_UDP
	lanes_seeds(dir);
	door_seeds(dir);
#endif
	return 0;
}
