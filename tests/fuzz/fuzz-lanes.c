/* libFuzzer harness: bytes as datagrams from a peer, through the lanes'
 * receiver (net/lanes.c). The input is a run of datagrams, each after
 * its length (u16, little-endian). The receiver lives on across inputs, as
 * a connection does, until one breaks the format (the connection's end);
 * what it hands over is drained as a program would read it. */
#include <stdint.h>
#include <stdlib.h>

#include "lanes.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct lanes *l;
	static struct buffer out;
	char err[256];
	if (!l) {
		l = lanes_new();
		buffer_init(&out, 64u << 20);
		if (!l || !lanes_open(l, &out, err, sizeof(err))) {
			abort();
		}
	}
	while (size >= 2) {
		size_t len = (size_t)(data[0] | data[1] << 8);
		data += 2;
		size -= 2;
		if (len > size) {
			len = size;
		}
		bool ok = lanes_receive(l, data, len, &out, err, sizeof(err));
		data += len;
		size -= len;
		/* What came out is whole records of the lanes' classes. */
		const uint8_t *p = buffer_head(&out);
		size_t left = buffer_size(&out);
		while (left > 0) {
			enum channel_class cls;
			size_t n = channel_record_size(p, left, &cls);
			if (n == 0 || n == SIZE_MAX || n > left || !lanes_carry(cls)) {
				abort();
			}
			p += n;
			left -= n;
		}
		buffer_consume(&out, buffer_size(&out));
		if (!ok) {
			lanes_free(l);
			l = NULL;
			buffer_finish(&out);
			return 0;
		}
	}
	return 0;
}
