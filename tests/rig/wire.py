"""The wire as a peer speaks it by hand: messages, records and their
classes, a stream that reads them back, and a fake server."""
import os
import socket
import struct
import time
import weakref

def message(msg_type, body=b""):
    """One wire message, as bytes."""
    return struct.pack("<HHI", msg_type, 0, len(body)) + body


RECORD_MAX = 16384


FRAME_TYPES = (0x0207, 0x0210)  # frame, copy_rect: the frames class


BULK_TYPES = (0x0303, 0x0307)  # transfer_data, file_data: the bulk class


def records(data, cls=None):
    """Messages (as bytes, after each side's first message) in records of
    their class, or all of cls when given."""
    out = b""
    pos = 0
    while pos < len(data):
        if cls is None:
            msg_type, _, length = struct.unpack_from("<HHI", data, pos)
            c = 3 if msg_type in FRAME_TYPES else 4 if msg_type in BULK_TYPES else 0
            end = pos + 8 + length
        else:
            c, end = cls, len(data)
        while pos < end:
            n = min(RECORD_MAX, end - pos)
            out += struct.pack("<BBH", c, 0, n) + data[pos:pos + n]
            pos += n
    return out


_streams = weakref.WeakKeyDictionary()  # each socket's Stream, for read_messages


class Stream:
    """One side's bytes as the other reads them: the first message as it
    is, then records of each class, each class a stream of messages."""

    def __init__(self):
        self.raw = b""
        self.first = True
        self.classes = {}
        self.received = self.acked = 0  # record bytes, as link_ack counts them

    def feed(self, data):
        """(type, body) of the messages data completes."""
        self.raw += data
        found = []
        if self.first:
            if len(self.raw) < 8:
                return found
            msg_type, _, length = struct.unpack_from("<HHI", self.raw)
            if len(self.raw) < 8 + length:
                return found
            found.append((msg_type, self.raw[8:8 + length]))
            self.raw = self.raw[8 + length:]
            self.first = False
        while len(self.raw) >= 4:
            cls, _, n = struct.unpack_from("<BBH", self.raw)
            if len(self.raw) < 4 + n:
                break
            buf = self.classes.get(cls, b"") + self.raw[4:4 + n]
            self.raw = self.raw[4 + n:]
            self.received += 4 + n
            while len(buf) >= 8:
                msg_type, _, length = struct.unpack_from("<HHI", buf)
                if len(buf) < 8 + length:
                    break
                found.append((msg_type, buf[8:8 + length]))
                buf = buf[8 + length:]
            self.classes[cls] = buf
        return found


WIRE_MAJOR = 3


HELLO_SHARE, HELLO_VIEW_ONLY = 1 << 1, 1 << 2


def hello(token=b"", major=WIRE_MAJOR, minor=0, flags=0, caps=7):
    """A viewer's hello message, as bytes (caps 7: lz4, zstd and H.264)."""
    return message(0x0101, struct.pack("<IHHIII", 0x504D4352, major, minor, caps, flags,
                                       len(token)) + token)


def welcome(name=b"0", session_id=1, major=WIRE_MAJOR):
    """A server's welcome, as bytes."""
    return message(0x0201, struct.pack("<IHHIIQI", 0x504D4352, major, 0, 7, 1, session_id,
                                       len(name)) + name)


def goodbye(reason, text, status=0):
    return message(0x0202, struct.pack("<iI", status, reason) + text)


def fake_server(desktop, name="fake"):
    """A unix socket that plays rcomp-run by hand: (listener, path)."""
    path = os.path.join(desktop.tmp, name + ".sock")
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(path)
    listener.listen(1)
    return listener, path


def window_new(window, width, height, app_id=b"fake"):
    return message(0x0203, struct.pack("<IIiiHH", window, 0, width, height, 0, len(app_id)) +
                   app_id)


def frame(window, seq, width, height, rects, payload, raw_size, compression=0, flags=1,
          time_us=0):
    """A lossless frame; rects are (x, y, width, height); flags 1 is reset."""
    body = struct.pack("<IIiiBBHQII", window, seq, width, height, 0, compression, flags,
                       time_us, len(rects), raw_size)
    body += b"".join(struct.pack("<iiii", *r) for r in rects)
    return message(0x0207, body + payload)


def read_messages(sock, seconds, until=None, stream=None):
    """(type, body) of the messages sock receives within seconds, or until
    one of type until arrives, or until sock closes. Give the same stream to
    calls that read on from where the last stopped; link acks are left out."""
    stream = stream or _streams.setdefault(sock, Stream())
    found = []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        sock.settimeout(max(0.01, end - time.monotonic()))
        try:
            chunk = sock.recv(1 << 20)
        except socket.timeout:
            break
        except OSError:
            break
        if not chunk:
            break
        found_now = stream.feed(chunk)
        if stream.received - stream.acked >= 1024:
            # Acknowledge, as a real peer does, or the other side's pacing
            # holds back all but its first few kilobytes.
            stream.acked = stream.received
            try:
                sock.sendall(records(message(0x0401, struct.pack("<Q", stream.received)), 5))
            except OSError:
                pass
        for msg_type, body in found_now:
            if msg_type == 0x0401:
                continue
            found.append((msg_type, body))
            if until is not None and msg_type == until:
                return found
    return found
