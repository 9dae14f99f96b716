"""Files between the person and the session: uploaded from the page, dropped
on a window (in the page, and from the local desktop through rcomp-view)
and given to the app as a drop of the copies, sent with rcomp-run --send
to rcomp-view's download folder and as the page's download; whole through
a broken link; hostile names and sizes refused."""
import hashlib
import os
import socket
import struct
import subprocess
import time

import pytest

from rig import (BTN_LEFT, DND_CLIENT, INPUT_CLIENT, RCOMP_RUN, RCOMP_VIEW, LocalNotifications,
                 VirtualPointer, free_port, hello, read_messages, records, wait_for)
from webpage import TOKEN, remote_log, web_session


def sha(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def make_file(path, size, seed=1):
    with open(path, "wb") as f:
        f.write(bytes((i * 31 + seed) & 0xff for i in range(min(size, 1 << 16))) *
                (size >> 16) + bytes((i * 31 + seed) & 0xff for i in range(size & 0xffff)))
    return path


def remote_downloads(desktop):
    return os.path.join(desktop.tmp, "Downloads")  # the session's HOME is the rig's tmp


def minimal_pdf(path, title):
    """A one-page PDF (its xref offsets computed), which zathura opens."""
    objs = ["<< /Type /Catalog /Pages 2 0 R >>",
            "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] /Contents 4 0 R >>",
            None]
    stream = b"BT /F1 12 Tf 20 100 Td (%s) Tj ET" % title.encode()
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for i, o in enumerate(objs):
        offsets.append(len(out))
        if o is None:
            out += b"%d 0 obj\n<< /Length %d >>\nstream\n" % (i + 1, len(stream)) + stream + \
                b"\nendstream\nendobj\n"
        else:
            out += b"%d 0 obj\n%s\nendobj\n" % (i + 1, o.encode())
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objs) + 1)
    for off in offsets:
        out += b"%010d 00000 n \n" % off
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objs) + 1, xref)
    with open(path, "wb") as f:
        f.write(out)
    return path


# The page.


def test_files_uploaded_from_the_pages_menu_land_whole_in_the_sessions_download_folder(desktop,
                                                                                      page):
    _, url = web_session(desktop, (INPUT_CLIENT,))
    page.open(url + "#token=" + TOKEN)
    page.window("rcomp input test")
    local = os.path.join(desktop.tmp, "local")
    os.makedirs(local)
    one = make_file(os.path.join(local, "report.bin"), 3 * 1024 * 1024 + 5)
    two = make_file(os.path.join(local, "notes.txt"), 1234, seed=2)
    page.eval("document.getElementById('rcomp-menu-toggle').click()")
    page.wait("document.querySelector('#rcomp-menu [data-menu=\"upload\"]')")
    page.command("choose_files", click="#rcomp-menu [data-menu=\"upload\"]", paths=[one, two])
    page.wait("window.rcomp.files().some((f) => f.ended === 0)", timeout=30)
    down = remote_downloads(desktop)
    assert sha(os.path.join(down, "report.bin")) == sha(one)
    assert sha(os.path.join(down, "notes.txt")) == sha(two)
    assert not [n for n in os.listdir(down) if n.startswith(".")], os.listdir(down)


def test_files_dropped_on_a_window_in_the_page_reach_its_app_as_a_drop_of_the_copies(desktop,
                                                                                    page):
    _, url = web_session(desktop, (DND_CLIENT, "files", "drop-target"))
    page.open(url + "#token=" + TOKEN)
    page.window("drop-target")
    x, y, w, h = page.canvas_box("drop-target")
    local = make_file(os.path.join(desktop.tmp, "dropped file.bin"), 200000, seed=3)
    page.command("drop_files", x=x + w / 2, y=y + h / 2, paths=[local])
    copy = os.path.join(remote_downloads(desktop), "dropped file.bin")
    wait_for("the app's drop of the copy", lambda: "target-file " + copy in remote_log(desktop))
    assert "target-files 1" in remote_log(desktop)
    assert sha(copy) == sha(local)


def test_a_pdf_dropped_on_evince_in_the_page_opens_in_it(desktop, page):
    """A document viewer that opens what is dropped on it (evince; zathura
    takes no drops) gets the PDF's copy, and its title names it."""
    _, url = web_session(desktop, ("evince",))
    page.open(url + "#token=" + TOKEN)
    page.wait("window.rcomp.stats().find((w) => w.presented > 0 && !w.popup)", timeout=60)
    box = page.eval("(() => { const r = document.querySelector('.rcomp-window canvas')"
                    ".getBoundingClientRect(); return [r.left, r.top, r.width, r.height]; })()")
    pdf = minimal_pdf(os.path.join(desktop.tmp, "quarterly.pdf"), "hello from rcomp")
    page.command("drop_files", x=box[0] + box[2] / 2, y=box[1] + box[3] / 2, paths=[pdf])
    page.wait("window.rcomp.stats().find((w) => (w.title || '').includes('quarterly'))",
              timeout=30)
    assert sha(os.path.join(remote_downloads(desktop), "quarterly.pdf")) == sha(pdf)


def test_rcomp_run_send_gives_the_page_a_download_of_the_file(desktop, page):
    server, url = web_session(desktop, (INPUT_CLIENT,))
    page.open(url + "#token=" + TOKEN)
    page.window("rcomp input test")
    saved = os.path.join(desktop.tmp, "browser-downloads")
    os.makedirs(saved)
    page.command("downloads", path=saved)
    sent = make_file(os.path.join(desktop.tmp, "for-you.bin"), 700000, seed=4)
    out = subprocess.run([RCOMP_RUN, "--send", sent], env=dict(desktop.remote_env,
                         RCOMP_SESSION=session_name(desktop)), capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("sent: saved as the browser's download"), out.stdout
    got = os.path.join(saved, "for-you.bin")
    wait_for("the browser's download", lambda: os.path.exists(got) and
             os.path.getsize(got) == 700000)
    assert sha(got) == sha(sent)


def session_name(desktop):
    out = subprocess.run([RCOMP_RUN, "--list"], env=desktop.remote_env, capture_output=True,
                         text=True, timeout=10).stdout
    return out.splitlines()[1].split()[0]


# rcomp-view.


def local_downloads(desktop):
    return desktop.local_env["XDG_DOWNLOAD_DIR"]


def test_rcomp_run_send_inside_a_session_saves_the_file_in_the_viewers_download_folder(desktop):
    sent_dir = os.path.join(desktop.tmp, "to-send")
    os.makedirs(os.path.join(sent_dir, "inner"))
    a = make_file(os.path.join(sent_dir, "a.bin"), 2 * 1024 * 1024 + 3)
    b = make_file(os.path.join(sent_dir, "inner", "b.txt"), 99, seed=5)
    server = desktop.start_server(["sh", "-c", "%s --send %s %s > %s/send.out 2>&1; "
                                   "exec %s" % (RCOMP_RUN, a, os.path.join(sent_dir, "inner"),
                                                desktop.tmp, INPUT_CLIENT)])
    desktop.start_viewer(server)
    out = os.path.join(desktop.tmp, "send.out")
    said = wait_for("rcomp-run --send to end", lambda: os.path.exists(out) and
                    "sent" in open(out).read() and open(out).read(), timeout=60)
    down = local_downloads(desktop)
    assert sha(os.path.join(down, "a.bin")) == sha(a)
    assert sha(os.path.join(down, "inner", "b.txt")) == sha(b)
    assert down in said, said
    assert "the session sent %s" % os.path.join(down, "a.bin") in desktop.read_log("rcomp-view")


def test_a_file_coming_is_told_of_on_the_local_desktop_and_its_cancel_there_ends_it_at_both_ends(
        desktop):
    """rcomp-run --send of 24 MB through a 20 Mbit/s link: once it has gone a
    second, the local desktop's notification says what comes, how much of
    it and how fast, with a Cancel; Cancel there ends it at both ends:
    rcomp-run --send says so and fails, nothing of it is left in the
    download folder, and the notification goes."""
    notes = LocalNotifications(desktop)
    big = make_file(os.path.join(desktop.tmp, "big.bin"), 24 << 20, seed=9)
    server = desktop.start_server([INPUT_CLIENT])
    port = free_port()
    desktop.start_relay(server.socket, rate_mbit=20, listen="tcp:127.0.0.1:%d" % port)
    desktop.start("rcomp-view", [RCOMP_VIEW, "--tcp", "127.0.0.1:%d" % port],
                  dict(desktop.local_env, RCOMP_TOKEN="not-asked-on-the-session-socket"))
    wait_for("the window", lambda: desktop.window(app_id="rcomp-input-test"), timeout=30)
    name = subprocess.run([RCOMP_RUN, "--list"], env=desktop.remote_env, capture_output=True,
                          text=True, timeout=10).stdout.splitlines()[1].split()[0]
    sender = subprocess.Popen([RCOMP_RUN, "--send", big],
                              env=dict(desktop.remote_env, RCOMP_SESSION=name),
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)

    def told():
        return [n for n in notes.listed() or []
                if n["summary"].startswith("Receiving big.bin from")]
    shown = wait_for("the transfer's notification", told, timeout=20)[0]
    assert " of 25.2 MB" in shown["body"], shown
    assert shown["actions"].get("cancel") == "Cancel", shown
    # Renewed in place, with the rate and the time left once it is known.
    shown = wait_for("its rate", lambda: [n for n in told() if "Mbit/s" in n["body"]],
                     timeout=20)[0]
    assert len(told()) == 1 and " s left" in shown["body"], told()
    assert sender.poll() is None, "it was whole before it was told of"
    notes.invoke(shown["id"], "cancel")
    out, _ = sender.communicate(timeout=30)
    assert sender.returncode != 0 and "the person at the viewer cancelled it" in out, out
    down = local_downloads(desktop)
    assert not os.path.exists(down) or os.listdir(down) == [], os.listdir(down)
    wait_for("the notification gone", lambda: not told(), timeout=10)
    assert "files from the session: cancelled, as the person said" in \
        desktop.read_log("rcomp-view")


@pytest.mark.desktop(extra='for_window [app_id="dnd-local"] move position 0 0\n'
                     'for_window [app_id="dnd-remote"] move position 600 0\n')
def test_a_local_file_dragged_onto_a_remote_window_reaches_its_app_as_its_copy(desktop):
    """The local desktop's drag offers text/uri-list of file:// URIs (as a
    file manager's does): rcomp-view sends the files, and the app gets a
    drop of their copies once they are whole."""
    local = make_file(os.path.join(desktop.tmp, "photo.jpg"), 500000, seed=6)
    env = dict(desktop.local_env, DND_URIS="file://%s\r\n" % local)
    desktop.start("dnd-local", [DND_CLIENT, "source", "dnd-local"], env)
    desktop.start_viewer(desktop.start_server([DND_CLIENT, "files", "dnd-remote"]))
    pointer = VirtualPointer(desktop)
    src = wait_for("the source window", lambda: desktop.window(app_id="dnd-local"), timeout=30)
    dst = wait_for("the target window", lambda: desktop.window(app_id="dnd-remote"), timeout=30)
    sx, sy = src["rect"]["x"] + 150, src["rect"]["y"] + 100
    tx, ty = dst["rect"]["x"] + 150, dst["rect"]["y"] + 100
    pointer.send("move %d %d" % (sx - 5, sy))
    time.sleep(0.3)
    pointer.send("move %d %d" % (sx, sy))
    wait_for("the pointer over the source", lambda: "pointer-enter" in desktop.read_log("dnd-local"))
    pointer.send("press %d" % BTN_LEFT)
    wait_for("the drag to start", lambda: "source-drag-started" in desktop.read_log("dnd-local"))
    for i in range(1, 21):
        pointer.send("move %d %d" % (sx + (tx - sx) * i // 20, sy + (ty - sy) * i // 20))
        time.sleep(0.02)
    wait_for("the drag over the remote app", lambda: "target-enter" in remote_log(desktop))
    pointer.send("release %d" % BTN_LEFT)
    copy = os.path.join(remote_downloads(desktop), "photo.jpg")
    wait_for("the app's drop of the copy", lambda: "target-file " + copy in remote_log(desktop))
    assert sha(copy) == sha(local)
    assert "file://" + local not in remote_log(desktop), "the app got the local path"


@pytest.mark.desktop(extra='for_window [app_id="dnd-local"] move position 0 0\n'
                           'for_window [app_id="dnd-remote"] move position 600 0\n')
def test_a_file_an_app_drags_onto_a_local_window_reaches_it_as_a_local_copy(desktop):
    """A remote app's drag offers text/uri-list of its file:// URIs (as a
    file manager's does), dropped on a local app that takes files: the
    files come into the local download folder, and the local app gets the
    URIs of those copies, not the remote paths."""
    remote = make_file(os.path.join(desktop.tmp, "remote-report.pdf"), 400000, seed=8)
    server = desktop.start_server(["env", "DND_URIS=file://%s\r\n" % remote, DND_CLIENT,
                                   "source", "dnd-remote"])
    desktop.start("dnd-local", [DND_CLIENT, "files", "dnd-local"], desktop.local_env)
    desktop.start_viewer(server)
    pointer = VirtualPointer(desktop)
    src = wait_for("the source window", lambda: desktop.window(app_id="dnd-remote"), timeout=30)
    dst = wait_for("the target window", lambda: desktop.window(app_id="dnd-local"), timeout=30)
    sx, sy = src["rect"]["x"] + 150, src["rect"]["y"] + 100
    tx, ty = dst["rect"]["x"] + 150, dst["rect"]["y"] + 100
    pointer.send("move %d %d" % (sx - 5, sy))
    time.sleep(0.3)
    pointer.send("move %d %d" % (sx, sy))
    wait_for("the pointer over the source", lambda: "pointer-enter" in remote_log(desktop))
    pointer.send("press %d" % BTN_LEFT)
    wait_for("the drag to start", lambda: "source-drag-started" in remote_log(desktop))
    for i in range(1, 21):
        pointer.send("move %d %d" % (sx + (tx - sx) * i // 20, sy + (ty - sy) * i // 20))
        time.sleep(0.02)
    wait_for("the drag over the local app", lambda: "target-enter" in desktop.read_log(
        "dnd-local"))
    pointer.send("release %d" % BTN_LEFT)
    copy = os.path.join(local_downloads(desktop), "remote-report.pdf")
    wait_for("the local app's drop of the copy",
             lambda: "target-file " + copy in desktop.read_log("dnd-local"))
    assert sha(copy) == sha(remote)
    assert "target-file " + remote not in desktop.read_log("dnd-local")
    wait_for("the source to hear it finished", lambda: "source-finished" in remote_log(desktop))


def test_a_file_sent_through_a_link_cut_for_3_s_arrives_whole(desktop):
    """20 MB through a relay at 20 Mbit/s (TCP, which the viewer tries
    again), cut in the middle for 3 s: the viewer reconnects and the file
    goes on from the byte written."""
    import re
    from rig import free_port
    big = make_file(os.path.join(desktop.tmp, "big.bin"), 20 * 1024 * 1024, seed=7)
    server = desktop.start_server([INPUT_CLIENT])
    port = free_port()
    relay = desktop.start_relay(server.socket, rate_mbit=20, listen="tcp:127.0.0.1:%d" % port)
    env_token = dict(desktop.local_env, RCOMP_TOKEN="not-asked-on-the-session-socket")
    desktop.start("rcomp-view", [RCOMP_VIEW, "--tcp", "127.0.0.1:%d" % port, "--stats"],
                  env_token)
    wait_for("the viewer's window", lambda: desktop.window(title="rcomp input test"))
    sender = subprocess.Popen([RCOMP_RUN, "--send", big], env=dict(desktop.remote_env,
                              RCOMP_SESSION=session_name(desktop)), stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)
    wait_for("half of it across", lambda: any(float(m) > 8 for m in re.findall(
        r"files from the session: big\.bin, ([\d.]+) of", desktop.read_log("rcomp-view"))),
        timeout=60)
    relay.kill()
    relay.wait()
    time.sleep(3)
    desktop.start_relay(server.socket, rate_mbit=20, name="relay-again",
                        listen="tcp:127.0.0.1:%d" % port)
    out, _ = sender.communicate(timeout=90)
    assert sender.returncode == 0, out
    assert sha(os.path.join(local_downloads(desktop), "big.bin")) == sha(big)
    # It went on from where it stood, not from the start.
    sent = [float(m) for m in re.findall(r"files from the session: big\.bin, ([\d.]+) of",
                                         desktop.read_log("rcomp-view"))]
    after = sent[[i for i, v in enumerate(sent) if v > 8][0]:]
    assert min(after) > 7, "it began again: %s" % sent


def test_a_file_sent_to_a_viewer_taken_over_mid_way_arrives_whole_at_the_one_that_took_it(
        desktop):
    """12 MB through a 20 Mbit/s relay to the first viewer; the person
    attaches a second one, which takes the session over: the file arrives
    whole at the second, once, and the first leaves no part of it."""
    import re
    from rig import free_port
    big = make_file(os.path.join(desktop.tmp, "big.bin"), 12 * 1024 * 1024, seed=5)
    server = desktop.start_server([INPUT_CLIENT])
    port = free_port()
    desktop.start_relay(server.socket, rate_mbit=20, listen="tcp:127.0.0.1:%d" % port)
    first = desktop.start("rcomp-view", [RCOMP_VIEW, "--tcp", "127.0.0.1:%d" % port,
                                         "--stats"],
                          dict(desktop.local_env, RCOMP_TOKEN="not-asked-on-the-session-socket"))
    wait_for("the viewer's window", lambda: desktop.window(title="rcomp input test"))
    sender = subprocess.Popen([RCOMP_RUN, "--send", big], env=dict(desktop.remote_env,
                              RCOMP_SESSION=session_name(desktop)), stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)
    wait_for("a part of it across", lambda: any(float(m) > 2 for m in re.findall(
        r"files from the session: big\.bin, ([\d.]+) of", desktop.read_log("rcomp-view"))),
        timeout=60)
    desktop.start_viewer(server, name="second-viewer")
    assert first.wait(timeout=20) == 0
    out, _ = sender.communicate(timeout=90)
    assert sender.returncode == 0, out
    got = os.path.join(local_downloads(desktop), "big.bin")
    assert sha(got) == sha(big)
    assert sorted(os.listdir(local_downloads(desktop))) == ["big.bin"], os.listdir(
        local_downloads(desktop))


# A hostile viewer.


def raw_viewer(desktop):
    """A viewer on the session's socket that speaks the wire by hand."""
    server = desktop.start_server([INPUT_CLIENT])
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(server.socket)
    s.sendall(hello(minor=8))
    read_messages(s, 1.0)
    return s


def msg(code, body):
    return struct.pack("<HHI", code, 0, len(body)) + body


def group(gid, files, nbytes):
    return msg(0x0305, struct.pack("<IIIiiIQI", gid, 2, 0, 0, 0, files, nbytes, 0))


def offer(gid, index, size, name):
    name = name.encode() if isinstance(name, str) else name
    return msg(0x0306, struct.pack("<IIQII", gid, index, size, 0o644, 32) + bytes(32) + name)


def data(gid, index, offset, payload):
    return msg(0x0307, struct.pack("<IIQ", gid, index, offset) + payload)


def dones(s, seconds=2.0):
    got = []
    for t, body in read_messages(s, seconds):
        if t == 0x0309:
            gid, status, index = struct.unpack_from("<III", body)
            got.append((gid, status, body[12:].decode(errors="replace")))
    return got


def test_hostile_names_and_sizes_from_a_viewer_are_refused_with_nothing_made(desktop):
    s = raw_viewer(desktop)
    bad = {1: "../x", 2: ".bashrc", 3: "a\x01b", 4: "x" * 300}
    for gid, name in bad.items():
        s.sendall(records(group(gid, 1, 10) + offer(gid, 0, 10, name)))
    # A terabyte announced, and more bytes than offered.
    s.sendall(records(group(5, 1, 1 << 40) + group(6, 1, 100) + offer(6, 0, 100, "six.txt")))
    s.sendall(records(data(6, 0, 0, bytes(200))))
    got = {gid: (status, text) for gid, status, text in dones(s, 3.0)}
    for gid in (1, 2, 3, 4, 5):
        assert got.get(gid, (None,))[0] == 2, (gid, got)  # refused
    assert got[6][0] == 3 and "more bytes" in got[6][1], got  # failed
    assert "begins with a dot" in got[2][1] and "file-size-limit" in got[5][1], got
    assert "a part of 300 bytes" in got[4][1], got
    down = remote_downloads(desktop)
    assert not os.path.exists(down) or os.listdir(down) == [], os.listdir(down)
    # The viewer is still attached: the session refused the files, not it.
    s.sendall(records(msg(0x0123, struct.pack("<I", 1))))
    assert any(t == 0x021c for t, _ in read_messages(s, 2.5)), "the connection ended"
    # A 4 KB name is past what the wire carries: that viewer ends, with why.
    s.sendall(records(group(7, 1, 10) + offer(7, 0, 10, "y" * 4096)))
    bye = [body for t, body in read_messages(s, 3.0) if t == 0x0202]
    assert bye and b"file_offer" in bye[0], bye
    s.close()
    assert not os.path.exists(down) or os.listdir(down) == [], os.listdir(down)


# files = ask.


def test_files_ask_in_the_pages_menu_takes_only_what_the_person_says_yes_to(desktop, page):
    server, url = web_session(desktop, (INPUT_CLIENT,))
    page.open(url + "#token=" + TOKEN)
    page.window("rcomp input test")
    saved = os.path.join(desktop.tmp, "browser-downloads")
    os.makedirs(saved)
    page.command("downloads", path=saved)
    page.eval("document.getElementById('rcomp-menu-toggle').click()")
    page.wait("document.querySelector('#rcomp-menu [data-menu=\"files-ask\"]') !== null")
    page.eval("document.querySelector('#rcomp-menu [data-menu=\"files-ask\"]').click()")
    page.eval("document.getElementById('rcomp-menu-toggle').click()")
    env = dict(desktop.remote_env, RCOMP_SESSION=session_name(desktop))
    results = {}
    for name, answer in (("yes.bin", "yes"), ("no.bin", "no")):
        sent = make_file(os.path.join(desktop.tmp, name), 300000, seed=8)
        sender = subprocess.Popen([RCOMP_RUN, "--send", sent], env=env, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True)
        button = "document.querySelector('#rcomp-files [data-answer=\"%s\"]')" % answer
        page.wait(button + " !== null")
        assert page.eval("window.rcomp.files().some((f) => f.asking)")
        time.sleep(0.5)
        assert not os.path.exists(os.path.join(saved, name))
        page.eval(button + ".click()")
        out, _ = sender.communicate(timeout=30)
        results[name] = (sender.returncode, out)
    assert results["yes.bin"][0] == 0, results
    wait_for("the download", lambda: os.path.exists(os.path.join(saved, "yes.bin")) and
             os.path.getsize(os.path.join(saved, "yes.bin")) == 300000)
    assert results["no.bin"][0] != 0 and "said no" in results["no.bin"][1], results
    time.sleep(0.5)
    assert not os.path.exists(os.path.join(saved, "no.bin"))


def test_files_ask_on_rcomp_run_asks_the_viewer_with_input_before_taking_an_upload(desktop,
                                                                                  page):
    server, url = web_session(desktop, (INPUT_CLIENT,), options=("--files", "ask"))
    page.open(url + "#token=" + TOKEN)
    page.window("rcomp input test")
    local = os.path.join(desktop.tmp, "local")
    os.makedirs(local)
    one = make_file(os.path.join(local, "asked.bin"), 200000, seed=9)
    page.eval("document.getElementById('rcomp-menu-toggle').click()")
    page.wait("document.querySelector('#rcomp-menu [data-menu=\"upload\"]')")
    page.command("choose_files", click="#rcomp-menu [data-menu=\"upload\"]", paths=[one])
    question = page.wait("window.rcomp.notes().open.find((n) => n.summary.startsWith("
                         "'Viewer 1 gives the session 1 file'))")
    assert question["actions"] == [["yes", "Take"], ["no", "Refuse"]], question
    down = remote_downloads(desktop)
    time.sleep(0.5)
    assert not os.path.exists(os.path.join(down, "asked.bin"))
    page.eval("document.querySelector('#rcomp-notes [data-action=\"yes\"]').click()")
    wait_for("the upload", lambda: os.path.exists(os.path.join(down, "asked.bin")))
    assert sha(os.path.join(down, "asked.bin")) == sha(one)
    # Refused: nothing is made, and the page says why.
    two = make_file(os.path.join(local, "refused.bin"), 1000, seed=10)
    page.command("choose_files", click="#rcomp-menu [data-menu=\"upload\"]", paths=[two])
    page.wait("document.querySelector('#rcomp-notes [data-action=\"no\"]') !== null")
    page.eval("document.querySelector('#rcomp-notes [data-action=\"no\"]').click()")
    page.wait("window.rcomp.files().some((f) => f.ended === %d && f.text.includes('said no'))"
              % 2)
    assert not os.path.exists(os.path.join(down, "refused.bin"))
