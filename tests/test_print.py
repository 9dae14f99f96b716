"""Prints: each session has a printer (a CUPS scheduler of its own, with
Debian's cups-filters); an app's print becomes a PDF at the person's
viewer: rcomp-view prints it on the local default printer (or saves or
opens it, as set), the page opens it in the browser ready to print."""
import os
import re
import shutil
import subprocess
import tempfile
import time

from rig import INPUT_CLIENT, RCOMP_RUN, LocalNotifications, LocalPrinter, wait_for


def start_session(desktop, args=()):
    """rcomp-run with the input test client, which first writes down its
    CUPS_SERVER: what programs run inside the session print to."""
    said = os.path.join(desktop.tmp, "cups-server")
    server = desktop.start_server(["sh", "-c", 'echo "$CUPS_SERVER" > %s; exec %s'
                                   % (said, INPUT_CLIENT)], list(args))
    wait_for("the app's CUPS_SERVER", lambda: os.path.exists(said) and
             open(said).read().endswith("\n"))
    with open(said) as f:
        server.cups = f.read().strip()
    return server


def lp(desktop, server, *args):
    out = subprocess.run(["lp", *args], env=dict(desktop.remote_env, CUPS_SERVER=server.cups),
                         capture_output=True, text=True, timeout=20)
    assert out.returncode == 0, out.stderr
    return out.stdout


def pages(path):
    info = subprocess.run(["pdfinfo", path], capture_output=True, text=True).stdout
    return int(re.search(r"^Pages:\s+(\d+)", info, re.M).group(1))


def write_letter(desktop):
    text = os.path.join(desktop.tmp, "letter.txt")
    with open(text, "w") as f:
        f.write("Dear reader,\nthis page was printed in a session.\n")
    return text


def mako_has(notes, summary):
    return next((n for n in notes.listed() or [] if n["summary"] == summary), None)


def test_lp_in_a_session_is_printed_on_the_local_default_printer(desktop):
    printer = LocalPrinter(desktop)
    notes = LocalNotifications(desktop)
    server = start_session(desktop)
    desktop.start_viewer(server)
    desktop.window("rcomp input test")
    lp(desktop, server, write_letter(desktop))
    pdf = wait_for("the local printer to print it", printer.printed, timeout=30)
    assert pdf.startswith(b"%PDF-")
    shown = wait_for("the notification", lambda: mako_has(notes, "Printed letter.txt.pdf"))
    saved = os.path.join(desktop.local_env["XDG_DOWNLOAD_DIR"], "letter.txt.pdf")
    assert shown["body"].endswith("the PDF is in " + os.path.dirname(saved)), shown
    with open(saved, "rb") as f:
        assert f.read() == pdf
    assert pages(saved) == 1


def test_lp_in_a_session_arrives_as_a_pdf_at_the_viewer(desktop):
    desktop.settings_file("local", "[view]\nprint = save\n")
    server = start_session(desktop)
    desktop.start_viewer(server)
    desktop.window("rcomp input test")
    lp(desktop, server, write_letter(desktop))
    got = os.path.join(desktop.local_env["XDG_DOWNLOAD_DIR"], "letter.txt.pdf")
    wait_for("the print at the viewer", lambda: os.path.exists(got), timeout=30)
    with open(got, "rb") as f:
        assert f.read(5) == b"%PDF-"
    assert pages(got) == 1


def test_a_print_made_while_no_viewer_is_attached_waits_for_one(desktop):
    desktop.settings_file("local", "[view]\nprint = save\n")
    server = start_session(desktop)
    lp(desktop, server, write_letter(desktop))
    time.sleep(2)
    desktop.start_viewer(server)
    got = os.path.join(desktop.local_env["XDG_DOWNLOAD_DIR"], "letter.txt.pdf")
    wait_for("the print at the viewer that came", lambda: os.path.exists(got), timeout=30)
    assert pages(got) == 1


def test_a_print_goes_to_the_viewer_with_input_alone(desktop):
    desktop.settings_file("local", "[view]\nprint = save\n")
    server = start_session(desktop)
    desktop.start_viewer(server)
    desktop.window("rcomp input test")
    desktop.start_viewer(server, ["--share", "--view-only"], name="watcher")
    wait_for("the watcher", lambda: "attached" in desktop.read_log("watcher"))
    lp(desktop, server, write_letter(desktop))
    down = desktop.local_env["XDG_DOWNLOAD_DIR"]
    wait_for("the print", lambda: os.path.exists(os.path.join(down, "letter.txt.pdf")),
             timeout=30)
    time.sleep(1)
    assert os.listdir(down) == ["letter.txt.pdf"]
    assert "printed" not in desktop.read_log("watcher")


def test_a_print_the_local_desktop_cannot_print_is_kept_and_said_so(desktop):
    notes = LocalNotifications(desktop)
    desktop.local_env["CUPS_SERVER"] = os.path.join(desktop.tmp, "no-cups.sock")
    server = start_session(desktop)
    desktop.start_viewer(server)
    desktop.window("rcomp input test")
    lp(desktop, server, write_letter(desktop))
    shown = wait_for("the notification", lambda: mako_has(notes,
                                                          "letter.txt.pdf was not printed"),
                     timeout=30)
    assert "lp said:" in shown["body"], shown
    assert os.path.exists(os.path.join(desktop.local_env["XDG_DOWNLOAD_DIR"], "letter.txt.pdf"))
    assert "was not printed: lp said" in desktop.read_log("rcomp-view")


def test_a_session_with_printing_off_has_no_printer(desktop):
    server = start_session(desktop, ["--printing", "off"])
    assert server.cups == ""
    assert not [f for f in os.listdir(desktop.session_dir) if f.endswith(".cups")]


def test_a_print_opens_in_the_pages_browser_ready_to_print(desktop, page):
    from webpage import TOKEN, web_session
    said = os.path.join(desktop.tmp, "cups-server")
    server, url = web_session(desktop, ("sh", "-c", 'echo "$CUPS_SERVER" > %s; exec %s'
                                         % (said, INPUT_CLIENT)))
    page.open(url + "#token=" + TOKEN)
    page.window("rcomp input test")
    with open(said) as f:
        server.cups = f.read().strip()
    lp(desktop, server, write_letter(desktop))
    row = "document.querySelector('#rcomp-files [data-print-open=\"letter.txt.pdf\"]')"
    page.wait(row + " !== null", timeout=30)
    printed = page.wait("window.rcomp.prints().find((p) => p.head)")
    assert printed["type"] == "application/pdf" and printed["head"].startswith("%PDF-")
    def opened():
        return sum(t["url"] == printed["url"] for t in page.command("tabs")["tabs"])
    # Opened at once where the browser lets it; the row's button opens it
    # again (a click, which no browser refuses).
    before = opened()
    assert before == (1 if printed["opened"] else 0)
    page.eval(row + ".click()")
    wait_for("a tab of the print", lambda: opened() == before + 1)


def test_a_session_of_an_ordinary_user_prints_through_its_own_scheduler(desktop):
    """As a user's session runs (the gate's): cupsd as that user, its
    folder in the session directory, and its filters as that user too."""
    desktop.settings_file("local", "[view]\nprint = save\n")
    # A short path, as /run/user/ID is: the rig's is too long for a socket.
    home = tempfile.mkdtemp(prefix="rcp-")
    desktop.cleanups.append(lambda: shutil.rmtree(home, ignore_errors=True))
    os.makedirs(os.path.join(home, "rt"), mode=0o700)
    for d in (home, os.path.join(home, "rt")):
        os.chown(d, 65534, 65534)
    said = os.path.join(home, "cups-server")
    sock = os.path.join(home, "rt", "rcomp-run.sock")
    server = desktop.start("rcomp-run", [
        "setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", RCOMP_RUN,
        "--socket", sock, "--", "sh", "-c", 'echo "$CUPS_SERVER" > %s; exec %s'
        % (said, INPUT_CLIENT)], dict(desktop.remote_env, HOME=home,
                                      XDG_RUNTIME_DIR=os.path.join(home, "rt"),
                                      RCOMP_DIR=os.path.join(home, "rt", "sessions")))
    wait_for("the app's CUPS_SERVER", lambda: os.path.exists(said) and
             open(said).read().endswith("\n"))
    server.socket = sock
    server.cups = open(said).read().strip()
    assert server.cups.startswith(os.path.join(home, "rt", "sessions")), server.cups
    desktop.start_viewer(server)
    desktop.window("rcomp input test")
    letter = write_letter(desktop)
    os.chmod(letter, 0o644)
    out = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "lp",
                          letter], env=dict(desktop.remote_env, CUPS_SERVER=server.cups,
                                            HOME=home), capture_output=True, text=True,
                         timeout=20)
    assert out.returncode == 0, out.stderr
    got = os.path.join(desktop.local_env["XDG_DOWNLOAD_DIR"], "letter.txt.pdf")
    wait_for("the print at the viewer", lambda: os.path.exists(got), timeout=30)
    assert pages(got) == 1
