/* A client of a PulseAudio server, for both programs (see pulse.h). */
#include "pulse.h"
#include "monotonic.h"
#include "wire.h"

const pa_sample_spec pulse_wire_spec = {
	.format = PA_SAMPLE_S16LE,
	.rate = WIRE_AUDIO_RATE,
	.channels = WIRE_AUDIO_CHANNELS,
};

bool pulse_open(struct pulse *p, const char *name, const char *address,
	pa_context_notify_cb_t on_state, void *data, const char **error)
{
	*p = (struct pulse){0};
	*error = "out of memory";
	p->loop = pa_threaded_mainloop_new();
	if (!p->loop) {
		return false;
	}
	p->context = pa_context_new(pa_threaded_mainloop_get_api(p->loop), name);
	if (!p->context) {
		pulse_close(p, NULL, 0);
		return false;
	}
	pa_context_set_state_callback(p->context, on_state, data);
	if (pa_context_connect(p->context, address, PA_CONTEXT_NOAUTOSPAWN, NULL) < 0 ||
		pa_threaded_mainloop_start(p->loop) < 0) {
		*error = pa_strerror(pa_context_errno(p->context));
		pulse_close(p, NULL, 0);
		return false;
	}
	return true;
}

void pulse_close(struct pulse *p, pa_stream **streams, size_t count)
{
	if (p->loop) {
		pa_threaded_mainloop_stop(p->loop);
	}
	for (size_t i = 0; i < count; i++) {
		if (streams[i]) {
			pa_stream_disconnect(streams[i]);
			pa_stream_unref(streams[i]);
			streams[i] = NULL;
		}
	}
	if (p->context) {
		pa_context_set_state_callback(p->context, NULL, NULL);
		pa_context_disconnect(p->context);
		pa_context_unref(p->context);
	}
	if (p->loop) {
		pa_threaded_mainloop_free(p->loop);
	}
	*p = (struct pulse){0};
}

pa_stream *pulse_record(struct pulse *p, const char *name, const char *device,
	pa_stream_flags_t flags, pa_stream_request_cb_t on_read, void *data)
{
	pa_stream *stream = pa_stream_new(p->context, name, &pulse_wire_spec, NULL);
	if (!stream) {
		return NULL;
	}
	pa_stream_set_read_callback(stream, on_read, data);
	pa_buffer_attr attr = {
		.maxlength = (uint32_t)-1,
		.fragsize = AUDIO_FRAME_BYTES, /* 10 ms a read */
	};
	if (pa_stream_connect_record(stream, device, &attr, flags) < 0) {
		pa_stream_unref(stream);
		return NULL;
	}
	return stream;
}

void pulse_read(pa_stream *stream, bool keep, struct audio_framer *framer,
	struct audio_queue *queue)
{
	const void *pcm;
	size_t n;
	while (pa_stream_readable_size(stream) > 0) {
		if (pa_stream_peek(stream, &pcm, &n) < 0 || n == 0) {
			break;
		}
		if (keep) {
			if (!framer->running) {
				/* Its last sample was heard just now. */
				audio_framer_start(framer,
					monotonic_usec() -
						audio_samples_us(n / AUDIO_SAMPLE_BYTES));
			}
			audio_framer_push(framer, pcm, n, queue);
		}
		pa_stream_drop(stream);
	}
}

void pulse_forget(pa_operation *op)
{
	if (op) {
		pa_operation_unref(op);
	}
}
