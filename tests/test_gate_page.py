"""The gate and the browser viewer as a person uses them, in Debian's
chromium: every end state of a viewer covered with its reason and its way
on (another user's session, an ended one, a restart of the gate), the
menu, and the gate's own page."""
import json
import os
import shutil
import subprocess

import pytest

import rig
from rig import ALICE, BOB, wait_for
from webpage import audit

pytestmark = [pytest.mark.skipif(rig.gate_possible() is not None,
                                 reason=str(rig.gate_possible())),
              pytest.mark.usefixtures("sessions_end")]

VEIL = "document.getElementById('rcomp-veil')"


@pytest.fixture
def page(gate):
    b = rig.Browser(gate.rig)
    yield b
    b.close()


def start_in_page(page, gate, app="foot", user=ALICE):
    """Logs user in and starts app from the menu: the session's name, once
    its window shows."""
    page.open(gate.url)
    rig.log_in_page(page, user)
    button = "document.querySelector('li[data-app=\"%s\"] button')" % app
    page.wait(button)
    page.eval(button + ".click()")
    page.wait("window.rcomp && window.rcomp.stats().find((w) => w.presented > 0)")
    return page.wait("new URLSearchParams(location.hash.slice(1)).get('gate')")


def veiled(page):
    """The veil's words, once it covers the window's canvas (what is at the
    canvas's centre is the veil's)."""
    page.wait(VEIL, timeout=10)
    covered = page.eval(
        "(() => { const c = document.querySelector('.rcomp-window canvas'); if (!c) return true;"
        " const r = c.getBoundingClientRect(); const top = document.elementFromPoint("
        "r.left + r.width / 2, r.top + r.height / 2); return Boolean(top && "
        "top.closest('#rcomp-veil')); })()")
    assert covered, "the window shows through the veil"
    return page.eval(VEIL + ".textContent")


def ways(page):
    return page.eval("[...document.querySelectorAll('#rcomp-veil [data-way]')]"
                     ".map((e) => e.dataset.way)")


def test_a_session_of_another_user_is_no_session_of_yours_with_the_way_back_to_your_list(gate,
                                                                                         page):
    """Bob's session's name in alice's page: the same answer as a name
    nobody has (which names exist is nobody else's business), and the way
    back to her own sessions."""
    theirs = gate.client()
    assert theirs.login(BOB)[0] == 200
    status, started, _ = theirs.post("start", {"app": "foot"})
    assert status == 200, started
    page.open(gate.url)
    rig.log_in_page(page, ALICE)
    page.wait("!document.getElementById('home').hidden")
    for name in (started["name"], "no-such-session"):
        page.open(gate.url + "index.html#gate=" + name)
        said = veiled(page)
        assert "no session of yours" in said, said
        assert "sessions" in ways(page)
    page.eval("document.querySelector('#rcomp-veil [data-way=\"sessions\"]').click()")
    page.wait("!document.getElementById('home').hidden")


def test_an_ended_session_covers_its_windows_and_starts_its_app_again_from_the_veil(gate, page):
    """foot exits: the window is covered with why (its status only when it
    failed) and "start foot again", which opens a new session of it; a
    bookmark of the ended one later says it has ended and offers the same."""
    name = start_in_page(page, gate)
    page.wait("window.rcomp.session().welcomed")
    page.command("keyboard_type", text="exit")
    page.key("Enter")
    said = veiled(page)
    assert "ended" in said and "status" not in said, said
    assert ways(page) == ["again", "sessions"], ways(page)
    page.eval("document.querySelector('#rcomp-veil [data-way=\"again\"]').click()")
    page.wait("new URLSearchParams(location.hash.slice(1)).get('gate') !== %s" % json.dumps(name))
    page.wait("window.rcomp.stats().find((w) => w.presented > 0) && !" + VEIL, timeout=20)
    again = page.eval("new URLSearchParams(location.hash.slice(1)).get('gate')")
    assert again != name
    page.open(gate.url + "index.html#gate=%s&app=foot" % name)
    said = veiled(page)
    assert "no session of yours" in said, said
    assert ways(page) == ["again", "sessions"], ways(page)


def test_a_restart_of_the_gate_covers_the_window_and_the_page_comes_back_by_itself(gate, page):
    """While the gate restarts the window is covered (the link is down) and
    the page tries again by itself; once the gate serves again, within the
    same login, the window is live again with no login and no click."""
    start_in_page(page, gate)
    page.wait("window.rcomp.session().welcomed")
    gate.stop()
    said = veiled(page)
    assert "connecting again" in said, said
    rig.Gate(gate.rig, name=gate.name, port=gate.port)
    page.wait("window.rcomp.session().welcomed && !" + VEIL, timeout=10)
    assert page.eval("document.getElementById('door')") is None  # still the viewer


def test_the_menu_leads_back_to_the_list_and_logs_out_leaving_the_session_running(gate, page):
    name = start_in_page(page, gate)
    page.eval("document.getElementById('rcomp-menu-toggle').click()")
    href = page.wait("document.querySelector('#rcomp-menu [data-menu=\"sessions\"]')"
                     "?.getAttribute('href')")
    assert href == "/"
    page.eval("document.querySelector('#rcomp-menu [data-menu=\"sessions\"]').click()")
    page.wait("document.querySelector('li[data-session=\"%s\"]')" % name)
    page.open(gate.url + "index.html#gate=%s&app=foot" % name)
    page.window("foot")
    page.eval("document.getElementById('rcomp-menu-toggle').click()")
    page.wait("document.querySelector('#rcomp-menu [data-menu=\"logout\"]')")
    page.eval("document.querySelector('#rcomp-menu [data-menu=\"logout\"]').click()")
    page.wait("!document.getElementById('door')?.hidden && document.getElementById("
              "'door-notice').textContent.includes('keep running')")
    rig.log_in_page(page, ALICE)
    page.wait("document.querySelector('li[data-session=\"%s\"]')" % name)


# The gate's own page.


def test_the_login_page_names_the_host_and_a_keyboard_alone_logs_in(desktop, accounts):
    gate = rig.Gate(desktop, title="Build farm 7")
    page = rig.Browser(desktop)
    try:
        page.open(gate.url)
        page.wait("document.getElementById('door-title').textContent === "
                  "'Log in to Build farm 7'")
        assert page.eval("document.title") == "rcomp: Build farm 7"
        page.wait("document.activeElement.id === 'user'")
        page.type(ALICE)
        page.key("Tab")
        page.type("not-the-password")
        page.key("Enter")
        # The error beside the form, and the password field to try again.
        page.wait("document.getElementById('login-error').textContent.includes('Wrong')")
        assert page.eval("document.getElementById('login-error').closest('form') !== null")
        page.wait("document.activeElement.id === 'password'")
        page.eval("document.getElementById('password').value = ''")
        page.type(rig.USERS[ALICE])
        page.key("Enter")
        page.wait("!document.getElementById('home').hidden")
        assert page.eval("document.getElementById('home-title').textContent") == \
            "rcomp on Build farm 7"
    finally:
        page.close()


def test_the_login_page_and_the_list_pass_an_accessibility_audit(gate, page):
    page.open(gate.url)
    page.wait("!document.getElementById('door').hidden && document.title !== 'rcomp'")
    assert audit(page, "the login page") == []
    c = gate.client()
    assert c.login(ALICE)[0] == 200
    c.start("foot")
    rig.log_in_page(page, ALICE)
    page.wait("document.querySelector('li[data-session]') && "
              "document.querySelector('li[data-app]')")
    assert audit(page, "the sessions and apps") == []


def test_a_session_is_named_by_its_windows_renamed_said_when_last_used_with_its_picture(gate,
                                                                                       page):
    name = start_in_page(page, gate)
    # The picture is written a few seconds after the window last changed.
    wait_for("the session's picture", lambda: any(
        s["name"] == name and s["thumb"] for s in client_of(gate).sessions()), timeout=20)
    page.open(gate.url)
    row = "document.querySelector('li[data-session=\"%s\"]')" % name
    page.wait(row)
    assert page.eval(row + ".querySelector('.name').textContent") == "foot"
    page.wait(row + ".querySelector('.quiet').textContent.startsWith('last used just now')")
    page.wait(row + ".querySelector('img.thumb')?.naturalWidth > 0")
    size = page.eval("[%s.querySelector('img.thumb').naturalWidth, "
                     "%s.querySelector('img.thumb').naturalHeight]" % (row, row))
    assert 0 < size[0] <= 160 and 0 < size[1] <= 100, size
    page.eval(row + ".querySelector('button[aria-label^=\"rename\"]').click()")
    page.wait(row + ".querySelector('form.rename input') === document.activeElement")
    page.eval(row + ".querySelector('form.rename input').value = 'my shell'")
    page.key("Enter")
    page.wait("document.querySelector('li[data-session=\"%s\"] .name')?.textContent === "
              "'my shell'" % name)
    assert [s["label"] for s in client_of(gate).sessions()] == ["my shell"]


def client_of(gate, user=ALICE):
    c = gate.client()
    assert c.login(user)[0] == 200
    return c


def test_an_empty_menu_says_why_naming_what_the_allow_list_allows(desktop, accounts):
    gate = rig.Gate(desktop, apps={"allow": "rcomp-no-such-app, another-missing"})
    page = rig.Browser(desktop)
    try:
        page.open(gate.url)
        rig.log_in_page(page, ALICE)
        page.wait("!document.getElementById('apps-empty').hidden")
        said = page.eval("document.getElementById('apps-empty').textContent")
        assert "rcomp-no-such-app, another-missing" in said and "none of them is installed" \
            in said, said
    finally:
        page.close()


def test_an_app_that_opens_no_window_says_so_and_its_entry_is_flagged(gate, page):
    _, entry = rig.user_app(ALICE, "rcomp-test-server", "#!/bin/sh\nexec sleep 600\n")
    start = "document.querySelector('li[data-app=\"rcomp-test-server\"] button')"
    try:
        page.open(gate.url)
        rig.log_in_page(page, ALICE)
        page.wait(start)
        page.eval(start + ".click()")
        page.wait("document.getElementById('rcomp-empty')?.textContent.includes('no window')",
                  timeout=15)
        page.open(gate.url)
        page.wait("document.querySelector('li[data-session] .flag')?.textContent.includes("
                  "'no window')")
        page.wait("document.querySelector('li[data-app=\"rcomp-test-server\"] .flag')"
                  "?.textContent.includes('no window')")
    finally:
        os.remove(entry)


def test_an_error_of_a_start_is_said_beside_the_app(desktop, accounts):
    gate = rig.Gate(desktop, sessions_per_user=1)
    page = rig.Browser(desktop)
    try:
        client_of(gate).start("foot")
        page.open(gate.url)
        rig.log_in_page(page, ALICE)
        button = "document.querySelector('li[data-app=\"foot\"] button')"
        page.wait(button)
        page.eval(button + ".click()")
        page.wait("document.querySelector('li[data-app=\"foot\"] .error')?.textContent"
                  ".includes('as many as one may have')")
        assert page.eval("document.getElementById('error').textContent") == ""
    finally:
        page.close()


def test_a_page_folder_without_the_builds_files_answers_with_a_page_that_says_so(desktop,
                                                                                 accounts):
    """The page's folder holds the hand-written files but not messages.js,
    which the build makes: the gate says so at its start, in
    --check-config, and to every browser, instead of a blank page."""
    folder = os.path.join(desktop.tmp, "half-page")
    os.makedirs(folder)
    for name in os.listdir(rig.WEB_DIR):
        if name != "messages.js" and os.path.isfile(os.path.join(rig.WEB_DIR, name)):
            shutil.copy(os.path.join(rig.WEB_DIR, name), folder)
    os.chmod(desktop.tmp, 0o755)
    gate = rig.Gate(desktop, page=folder)
    assert "has no messages.js" in desktop.read_log(gate.name)
    for path in ("/", "/index.html", "/gate.html"):
        status, body, _ = gate.client().request("GET", path)
        assert status == 500 and b"has no <code>messages.js</code>" in body, (path, status, body)
    checked = subprocess.run([rig.RCOMP_GATE, "--check-config", "--config", gate.config],
                             capture_output=True, text=True)
    assert "messages.js" in checked.stdout, checked.stdout
