"""A hostile peer at the browsers' door, and the owner's own WebSocket:
what tests/test_web_door.py and tools/bench_door.py send to --listen-web.

- upgrade(): one WebSocket upgrade by hand, with any Host, Origin and
  subprotocol list; its status line and the socket.
- WebSocket: the owner's WebSocket as the page opens it (the token's
  proof in the subprotocol list), its hello, and the server's first
  message (welcome or goodbye).
- Flood: one source's connections of one kind, opened at a rate and held
  up to a number, each for a time, on a thread of its own, until stop().
"""
import base64
import hashlib
import hmac
import os
import resource
import selectors
import socket
import struct
import threading
import time

import rig

PROOF_TEXT = b"rcomp browser upgrade"


def proof(token):
    """The token's proof, as the page computes it (web/connection.js)."""
    if isinstance(token, str):
        token = token.encode()
    return hmac.new(token, PROOF_TEXT, hashlib.sha256).hexdigest()


def offer(token):
    """The page's subprotocol list for token."""
    return "rcomp, rcomp-key." + proof(token)


def upgrade_request(port, host=None, origin=None, protocols=None, path="/", cookie=None):
    host = host or "127.0.0.1:%d" % port
    lines = ["GET %s HTTP/1.1" % path, "Host: " + host, "Upgrade: websocket",
             "Connection: Upgrade", "Sec-WebSocket-Key: " +
             base64.b64encode(os.urandom(16)).decode(), "Sec-WebSocket-Version: 13"]
    if protocols is not None:
        lines.append("Sec-WebSocket-Protocol: " + protocols)
    if origin is not False:
        lines.append("Origin: " + (origin or "http://" + host))
    if cookie:
        lines.append("Cookie: " + cookie)
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def read_head(sock, timeout=10):
    """The reply's status line and headers, and the bytes after them; the
    status line is "" if the server closed first."""
    sock.settimeout(timeout)
    reply = b""
    while b"\r\n\r\n" not in reply:
        try:
            chunk = sock.recv(4096)
        except (ConnectionResetError, socket.timeout):
            break
        if not chunk:
            break
        reply += chunk
    head, _, rest = reply.partition(b"\r\n\r\n")
    return head.decode(errors="replace"), rest


def upgrade(port, host=None, origin=None, protocols=None, request=None, timeout=10):
    """Sends one upgrade (or request, raw bytes); returns (status line,
    socket, bytes after the head). The caller closes the socket."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    sock.sendall(request or upgrade_request(port, host, origin, protocols))
    head, rest = read_head(sock, timeout)
    return head.split("\r\n")[0], sock, rest


def closed_within(sock, seconds):
    """Whether the server closes sock within seconds (what it sends first is
    read and dropped)."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        sock.settimeout(max(0.01, end - time.monotonic()))
        try:
            if not sock.recv(65536):
                return True
        except socket.timeout:
            return False
        except (ConnectionResetError, BrokenPipeError):
            return True
    return False


def frame(payload, opcode=2, masked=True):
    """One WebSocket frame from a client."""
    head = bytes([0x80 | opcode])
    n = len(payload)
    bit = 0x80 if masked else 0
    if n < 126:
        head += bytes([bit | n])
    elif n < 65536:
        head += bytes([bit | 126]) + struct.pack(">H", n)
    else:
        head += bytes([bit | 127]) + struct.pack(">Q", n)
    if not masked:
        return head + payload
    key = os.urandom(4)
    return head + key + bytes(b ^ key[i % 4] for i, b in enumerate(payload))


def read_frame(sock, buf=b""):
    """One frame from the server: (opcode, payload, bytes left over), or
    (None, b"", b"") at the end of the stream."""
    while True:
        if len(buf) >= 2:
            n = buf[1] & 0x7F
            at = 2
            if n == 126 and len(buf) >= 4:
                n, at = struct.unpack(">H", buf[2:4])[0], 4
            elif n == 127 and len(buf) >= 10:
                n, at = struct.unpack(">Q", buf[2:10])[0], 10
            if n < 126 or at > 2:
                if len(buf) >= at + n:
                    return buf[0] & 0x0F, buf[at:at + n], buf[at + n:]
        try:
            chunk = sock.recv(65536)
        except (ConnectionResetError, socket.timeout):
            chunk = b""
        if not chunk:
            return None, b"", b""
        buf += chunk


GOODBYE, WELCOME = 0x0202, 0x0201


def first_message(sock, rest=b"", timeout=10):
    """The server's first wire message on the WebSocket: (type, body), or
    (None, b"") if it closed first."""
    sock.settimeout(timeout)
    data = b""
    while True:
        opcode, payload, rest = read_frame(sock, rest)
        if opcode is None:
            return None, b""
        if opcode == 2:
            data += payload
        if len(data) >= 8:
            msg_type, _, length = struct.unpack("<HHI", data[:8])
            if len(data) >= 8 + length:
                return msg_type, data[8:8 + length]


def goodbye_of(body):
    """A goodbye's reason and text."""
    _, reason, = struct.unpack("<iI", body[:8])
    return reason, body[8:].split(b"\0")[0].decode(errors="replace")


def attach(port, token, hello_delay=0.0, timeout=10):
    """The owner's WebSocket as the page opens it: upgrade with the proof,
    its hello hello_delay s later; the server's first message (type,
    body) and the socket, or (None, b"", None) if the upgrade was refused."""
    status, sock, rest = upgrade(port, protocols=offer(token), timeout=timeout)
    if " 101 " not in status + " ":
        sock.close()
        return None, b"", None
    if hello_delay:
        time.sleep(hello_delay)
    try:
        sock.sendall(frame(rig.hello(token.encode() if isinstance(token, str) else token,
                                     caps=1)))
    except (BrokenPipeError, ConnectionResetError):
        pass
    msg_type, body = first_message(sock, rest, timeout)
    return msg_type, body, sock


KINDS = {
    # What new WebSocket(url) sends from any page: no subprotocol.
    "upgrades": lambda port: upgrade_request(port, protocols=None),
    # The page's subprotocol without the token's proof, never a hello.
    "prehello": lambda port: upgrade_request(port, protocols="rcomp"),
    "connect": lambda port: ("CONNECT 127.0.0.1:22 HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n"
                             % port).encode(),
    "idle": lambda port: b"",
    "half": lambda port: ("GET / HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nUser-Agent: x" %
                          port).encode(),
}


class Flood:
    """Connections of one kind (KINDS) from one source address, opened at
    rate a second while fewer than held are open, each kept hold seconds
    (a half-sent one gets a byte of its header each second). Counts what
    the server did with them."""

    def __init__(self, port, kind, held=300, rate=25.0, hold=35.0, source="127.0.0.1"):
        self.port, self.kind, self.held, self.rate, self.hold = port, kind, held, rate, hold
        self.source = source
        self.request = KINDS[kind](port)
        self.opened = self.closed_by_server = self.failed = self.upgraded = 0
        self.most_open = 0
        self._stop = threading.Event()
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        if soft < hard:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _open(self, sel):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setblocking(False)
        try:
            s.bind((self.source, 0))
            s.connect_ex(("127.0.0.1", self.port))
        except OSError:
            s.close()
            self.failed += 1
            return
        sel.register(s, selectors.EVENT_READ | selectors.EVENT_WRITE,
                     {"born": time.monotonic(), "sent": False, "drip": 0.0})
        self.opened += 1

    def _run(self):
        sel = selectors.DefaultSelector()
        owed = 0.0
        last = time.monotonic()
        while not self._stop.is_set():
            now = time.monotonic()
            owed = min(owed + (now - last) * self.rate, self.held)
            last = now
            while owed >= 1 and len(sel.get_map()) < self.held:
                self._open(sel)
                owed -= 1
            self.most_open = max(self.most_open, len(sel.get_map()))
            for key, events in sel.select(timeout=0.01):
                s, state = key.fileobj, key.data
                if events & selectors.EVENT_WRITE and not state["sent"]:
                    state["sent"] = True
                    try:
                        if self.request:
                            s.send(self.request)
                    except OSError:
                        pass
                    sel.modify(s, selectors.EVENT_READ, state)
                    continue
                if events & selectors.EVENT_READ:
                    try:
                        data = s.recv(65536)
                    except OSError:
                        data = b""
                    if not data:
                        self.closed_by_server += 1
                        sel.unregister(s)
                        s.close()
                    elif b" 101 " in data[:32]:
                        self.upgraded += 1
            now = time.monotonic()
            for key in list(sel.get_map().values()):
                s, state = key.fileobj, key.data
                if now - state["born"] > self.hold:
                    sel.unregister(s)
                    s.close()
                elif self.kind == "half" and state["sent"] and now - state["drip"] >= 1:
                    state["drip"] = now
                    try:
                        s.send(b"x")
                    except OSError:
                        pass
        for key in list(sel.get_map().values()):
            key.fileobj.close()
        sel.close()

    def stop(self):
        self._stop.set()
        self._thread.join(timeout=10)

    def summary(self):
        return ("%s: %d opened, %d closed by the server, %d upgraded, at most %d open at once" %
                (self.kind, self.opened, self.closed_by_server, self.upgraded, self.most_open))
