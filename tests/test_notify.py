"""Notifications: an app's notify-send in a session is shown by the local
desktop's own daemon (mako, through rcomp-view) and by the page (the
browser's Notification API, or its own list), and an action or a close
there reaches the app."""
import os
import subprocess
import time

from rig import INPUT_CLIENT, RCOMP_RUN, LocalNotifications, wait_for
from webpage import TOKEN, audit, web_session


def in_session(desktop, script):
    """The session's app: script (sh), then the input test client, so the
    session has a window to show."""
    return ["sh", "-c", script + "; exec " + INPUT_CLIENT]


def mako_has(notes, summary):
    found = [n for n in (notes.listed() or []) if n["summary"] == summary]
    return found[0] if found else None


def test_notify_send_in_a_session_is_listed_by_the_local_notification_daemon(desktop):
    notes = LocalNotifications(desktop)
    server = desktop.start_server(in_session(
        desktop, "sleep 1; notify-send -a mailer -u critical 'New mail' 'From: Ada'"))
    desktop.start_viewer(server)
    shown = wait_for("mako to list it", lambda: mako_has(notes, "New mail"), timeout=20)
    assert shown["body"] == "From: Ada"
    assert shown["app"].startswith("mailer"), shown
    assert shown["critical"]


def session_env(desktop):
    """The environment of a program run inside the (one) session: its bus."""
    buses = wait_for("the session's bus", lambda: [
        f for f in os.listdir(desktop.session_dir) if f.endswith(".bus")])
    return dict(desktop.remote_env, DBUS_SESSION_BUS_ADDRESS="unix:path=" + os.path.join(
        desktop.session_dir, buses[0]))


def notify_send(desktop, *args, wait=False):
    """notify-send in the session; with wait, running until it is answered
    (its stdout: the action invoked)."""
    argv = ["notify-send", *args]
    if wait:
        return subprocess.Popen(argv, env=session_env(desktop), stdout=subprocess.PIPE,
                                text=True)
    out = subprocess.run(argv, env=session_env(desktop), capture_output=True, text=True,
                         timeout=20)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_an_action_clicked_on_the_local_desktop_reaches_the_app(desktop):
    notes = LocalNotifications(desktop)
    server = desktop.start_server([INPUT_CLIENT])
    desktop.start_viewer(server)
    desktop.window("rcomp input test")
    app = notify_send(desktop, "-A", "open=Open the build", "-A", "later=Later", "Build done",
                      wait=True)
    shown = wait_for("mako to list it", lambda: mako_has(notes, "Build done"))
    assert shown["actions"] == {"open": "Open the build", "later": "Later"}
    notes.invoke(shown["id"], "open")
    out, _ = app.communicate(timeout=10)
    assert out.strip() == "open"


def test_a_notification_dismissed_locally_is_closed_for_the_app(desktop):
    notes = LocalNotifications(desktop)
    server = desktop.start_server([INPUT_CLIENT])
    desktop.start_viewer(server)
    desktop.window("rcomp input test")
    app = notify_send(desktop, "--wait", "Dismiss me", wait=True)
    shown = wait_for("mako to list it", lambda: mako_has(notes, "Dismiss me"))
    assert app.poll() is None  # it waits for its close
    notes.dismiss(shown["id"])
    assert app.wait(timeout=10) == 0


def test_a_notification_the_app_replaces_or_closes_changes_on_the_local_desktop(desktop):
    notes = LocalNotifications(desktop)
    server = desktop.start_server([INPUT_CLIENT])
    desktop.start_viewer(server)
    desktop.window("rcomp input test")
    note_id = notify_send(desktop, "-p", "Copying: 10%")
    first = wait_for("mako to list it", lambda: mako_has(notes, "Copying: 10%"))
    assert notify_send(desktop, "-p", "-r", note_id, "Copying: 90%") == note_id
    wait_for("the replacement", lambda: mako_has(notes, "Copying: 90%"))
    assert [n["id"] for n in notes.listed() if n["summary"].startswith("Copying")] == \
        [first["id"]]
    subprocess.run(["dbus-send", "--session", "--type=method_call",
                    "--dest=org.freedesktop.Notifications", "/org/freedesktop/Notifications",
                    "org.freedesktop.Notifications.CloseNotification", "uint32:" + note_id],
                   env=session_env(desktop), check=True, timeout=10)
    wait_for("it to go", lambda: not mako_has(notes, "Copying: 90%"))


def test_a_viewer_that_attaches_later_is_shown_the_notifications_still_open(desktop):
    server = desktop.start_server([INPUT_CLIENT])
    notify_send(desktop, "-a", "chat", "Missed call", "from Grace")
    notify_send(desktop, "-t", "300", "Gone soon")  # expired before anyone saw it
    time.sleep(0.5)
    notes = LocalNotifications(desktop)
    desktop.start_viewer(server)
    # (The viewer's start, in the sanitizers' build beside other tests, can
    # take most of the rig's usual 15 s.)
    shown = wait_for("mako to list it", lambda: mako_has(notes, "Missed call"), timeout=30)
    assert shown["body"] == "from Grace"
    assert not mako_has(notes, "Gone soon")


def test_a_watcher_sees_notifications_and_cannot_act_on_them(desktop):
    server = desktop.start_server([INPUT_CLIENT])
    desktop.start_viewer(server)
    desktop.window("rcomp input test")
    notes = LocalNotifications(desktop)
    desktop.start_viewer(server, ["--view-only"], name="watcher")
    wait_for("the watcher", lambda: "watching" in desktop.read_log("watcher") or
             "view" in desktop.read_log("watcher"))
    app = notify_send(desktop, "-A", "open=Open", "Watched", wait=True)
    # Only the watcher has a bus here: the person's viewer shows nothing.
    shown = wait_for("the watcher's mako to list it", lambda: mako_has(notes, "Watched"))
    notes.invoke(shown["id"], "open")
    time.sleep(1)
    assert app.poll() is None  # neither the action nor the watcher's close reached it
    app.kill()


def test_a_viewer_with_notifications_off_shows_none(desktop):
    notes = LocalNotifications(desktop)
    desktop.settings_file("local", "[view]\nnotifications = off\n")
    server = desktop.start_server([INPUT_CLIENT])
    desktop.start_viewer(server)
    desktop.window("rcomp input test")
    notify_send(desktop, "Not for you")
    time.sleep(1)
    assert notes.listed() == []


def test_a_session_with_notifications_off_sends_none(desktop):
    notes = LocalNotifications(desktop)
    server = desktop.start_server([INPUT_CLIENT], ["--notifications", "off"])
    desktop.start_viewer(server)
    desktop.window("rcomp input test")
    notify_send(desktop, "Nor this")  # the app is answered all the same
    time.sleep(1)
    assert notes.listed() == []


def test_a_file_the_session_sends_is_announced_on_the_local_desktop(desktop):
    notes = LocalNotifications(desktop)
    server = desktop.start_server([INPUT_CLIENT])
    desktop.start_viewer(server)
    desktop.window("rcomp input test")
    sent = os.path.join(desktop.tmp, "invoice.pdf")
    with open(sent, "wb") as f:
        f.write(b"%PDF-1.4\n" + bytes(5000))
    env = session_env(desktop)
    env["RCOMP_SESSION"] = [f for f in os.listdir(desktop.session_dir)
                            if f.endswith(".bus")][0][:-4]
    out = subprocess.run([RCOMP_RUN, "--send", sent], env=env, capture_output=True, text=True,
                         timeout=30)
    assert out.returncode == 0, out.stderr
    shown = wait_for("mako to list it", lambda: mako_has(notes, "Saved invoice.pdf"))
    assert shown["body"] == "in " + desktop.local_env["XDG_DOWNLOAD_DIR"]
    assert shown["app"] == "rcomp"


def test_a_desktop_without_a_session_bus_is_told_once_and_the_session_goes_on(desktop):
    server = desktop.start_server([INPUT_CLIENT])
    viewer = desktop.start_viewer(server)
    desktop.window("rcomp input test")
    for i in range(3):
        notify_send(desktop, "Note %d" % i)
    wait_for("the viewer to say so", lambda: "notifications are not shown" in
             desktop.read_log("rcomp-view"))
    assert desktop.read_log("rcomp-view").count("notifications are not shown") == 1
    desktop.check_alive(viewer)


# The page.


def page_note(page, summary):
    return page.eval("(window.rcomp.notes().open.find((n) => n.summary === %r) || null)"
                     % summary)


def open_page(desktop, page):
    """The page of a session of the input test client, the browser's
    notifications refused it (no CDP grant reaches Notification.permission
    in headless chromium)."""
    _, url = web_session(desktop, (INPUT_CLIENT,))
    page.open(url + "#token=" + TOKEN)
    page.window("rcomp input test")


def test_the_page_lists_a_notification_and_its_action_reaches_the_app(desktop, page):
    open_page(desktop, page)
    app = notify_send(desktop, "-a", "builder", "-A", "logs=Show the logs", "Build failed",
                      "3 errors", wait=True)
    note = page.wait("window.rcomp.notes().open.find((n) => n.summary === 'Build failed')")
    assert note["app"] == "builder" and note["body"] == "3 errors" and not note["native"]
    assert page.eval("document.querySelector('#rcomp-notes [data-action=\"logs\"]')"
                     ".textContent") == "Show the logs"
    page.eval("document.querySelector('#rcomp-notes [data-action=\"logs\"]').click()")
    out, _ = app.communicate(timeout=10)
    assert out.strip() == "logs"
    page.wait("window.rcomp.notes().open.length === 0")
    # The browser refused the page its notifications: it offers nothing.
    assert not page.eval("Boolean(document.querySelector('[data-notes=\"ask\"]'))")


def test_a_notification_dismissed_in_the_page_is_closed_for_the_app(desktop, page):
    open_page(desktop, page)
    app = notify_send(desktop, "--wait", "-u", "critical", "Disk full", wait=True)
    page.wait("document.querySelector('#rcomp-notes .rcomp-note[data-urgency=\"critical\"]')"
              " !== null")
    time.sleep(0.5)
    assert app.poll() is None
    page.eval("document.querySelector('#rcomp-notes .rcomp-note-close').click()")
    assert app.wait(timeout=10) == 0


def test_the_page_asks_the_browser_once_from_a_click_and_keeps_its_list_when_refused(
        desktop, page):
    open_page(desktop, page)
    page.command("permission", name="notifications", setting="prompt")
    notify_send(desktop, "First")
    page.wait("document.querySelector('#rcomp-notes [data-notes=\"ask\"]') !== null")
    assert page.eval("window.rcomp.notes().permission") == "default"
    assert audit(page, "the page's notifications") == []
    page.eval("document.querySelector('[data-notes=\"ask\"]').click()")
    page.wait("window.rcomp.notes().permission === 'denied'")
    assert not page.eval("Boolean(document.querySelector('[data-notes=\"ask\"]'))")
    notify_send(desktop, "Second", "still here")
    note = page.wait("window.rcomp.notes().open.find((n) => n.summary === 'Second')")
    assert not note["native"] and note["body"] == "still here"
    assert page.eval("document.querySelector('#rcomp-notes').textContent").count("Second") == 1
    # Asked once: a reload offers nothing again, and the menu says why.
    page.eval("location.reload()")
    page.window("rcomp input test")
    page.wait("window.rcomp.notes().open.length === 2")
    assert not page.eval("Boolean(document.querySelector('[data-notes=\"ask\"]'))")
    page.eval("document.getElementById('rcomp-menu-toggle').click()")
    said = page.wait("document.querySelector('#rcomp-menu [data-menu=\"notes-state\"]')"
                     "?.textContent")
    assert "refused" in said, said


def test_a_page_that_watches_sees_notifications_without_actions(desktop, page):
    _, url = web_session(desktop, (INPUT_CLIENT,))
    page.open(url + "#token=" + TOKEN + "&view-only=1")
    page.window("rcomp input test")
    app = notify_send(desktop, "-A", "open=Open", "Seen by all", wait=True)
    page.wait("window.rcomp.notes().open.find((n) => n.summary === 'Seen by all')")
    assert not page.eval("Boolean(document.querySelector('#rcomp-notes [data-action]'))")
    page.eval("document.querySelector('#rcomp-notes .rcomp-note-close').click()")
    time.sleep(1)
    assert app.poll() is None  # the watcher's close is its own
    app.kill()


def test_the_pages_menu_turns_notifications_off(desktop, page):
    open_page(desktop, page)
    page.eval("document.getElementById('rcomp-menu-toggle').click()")
    page.wait("document.querySelector('#rcomp-menu [data-menu=\"notes-off\"]') !== null")
    page.eval("document.querySelector('#rcomp-menu [data-menu=\"notes-off\"]').click()")
    notify_send(desktop, "Quiet")
    time.sleep(1)
    assert page.eval("window.rcomp.notes().history.length") == 0
    assert not page.eval("Boolean(document.getElementById('rcomp-notes'))")


# files = ask: the question is a notification.


def test_files_ask_on_rcomp_view_saves_what_the_person_says_yes_to(desktop):
    notes = LocalNotifications(desktop)
    desktop.settings_file("local", "[view]\nfiles = ask\n")
    server = desktop.start_server([INPUT_CLIENT])
    desktop.start_viewer(server)
    desktop.window("rcomp input test")
    env = dict(session_env(desktop), RCOMP_SESSION=[
        f for f in os.listdir(desktop.session_dir) if f.endswith(".bus")][0][:-4])
    down = desktop.local_env["XDG_DOWNLOAD_DIR"]
    results = []
    for name, answer in (("wanted.txt", "yes"), ("unwanted.txt", "no")):
        path = os.path.join(desktop.tmp, name)
        with open(path, "w") as f:
            f.write("some text\n" * 100)
        sender = subprocess.Popen([RCOMP_RUN, "--send", path], env=env, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True)
        asked = wait_for("the question", lambda: mako_has(notes, "The session sends a file "
                                                          "(0.0 MB)"))
        assert asked["actions"] == {"yes": "Save", "no": "Refuse"}, asked
        time.sleep(0.5)
        assert not os.path.exists(os.path.join(down, name))  # nothing before the answer
        notes.invoke(asked["id"], answer)
        out, _ = sender.communicate(timeout=30)
        results.append((sender.returncode, out))
        wait_for("the question to go", lambda: not mako_has(notes, "The session sends a file "
                                                            "(0.0 MB)"))
    assert results[0][0] == 0 and os.path.exists(os.path.join(down, "wanted.txt")), results
    assert results[1][0] != 0 and "said no" in results[1][1], results
    assert not os.path.exists(os.path.join(down, "unwanted.txt"))
