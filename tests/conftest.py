"""Fixtures of the integration suite: a fresh headless sway for each test
(the desktop the viewer shows its windows on), and rcomp-run and rcomp-view
started on it. When a test fails, the tail of every component's log (sway,
rcomp-run, rcomp-view, apps) is shown with it; a sanitizer report in any of
them fails the test."""
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rig  # noqa: E402


@pytest.fixture
def desktop(request):
    """The local desktop: headless sway, options from @pytest.mark.desktop."""
    marker = request.node.get_closest_marker("desktop")
    d = rig.Rig(**(marker.kwargs if marker else {}))
    request.node.desktop = d
    yield d
    d.close()
    if d.sanitizer_reports:
        pytest.fail("sanitizer reports:\n" + "\n".join(d.sanitizer_reports), pytrace=False)


@pytest.fixture
def page(desktop):
    """A headless chromium with one page, which the test drives; a build
    without libwebsockets serves no page, and the test is skipped."""
    if not rig.WEB:
        pytest.skip("built without libwebsockets")
    b = rig.Browser(desktop)
    yield b
    b.close()


@pytest.fixture
def rcomp_run(desktop):
    """Starts rcomp-run with an app: rcomp_run([app, args], [options])."""
    return desktop.start_server


@pytest.fixture
def rcomp_view(desktop):
    """Starts rcomp-view on the desktop, attached to an rcomp-run."""
    return desktop.start_viewer


@pytest.fixture(scope="module")
def accounts():
    """The gate's test users (rig.USERS), real accounts."""
    rig.make_accounts()
    yield
    for user in rig.USERS:
        rig.end_sessions(user)


@pytest.fixture
def sessions_end(accounts):
    """What a test started as the test users ends with it (the gate's
    modules use it for every test)."""
    yield
    for user in rig.USERS:
        rig.end_sessions(user)


@pytest.fixture
def gate(desktop, accounts):
    """rcomp-gate on a port of its own, as rig.Gate starts it."""
    return rig.Gate(desktop)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    d = getattr(item, "desktop", None)
    if d is None or not report.failed or report.when != "call":
        return
    report.sections.append(("log of sway", d.read_log("sway.log", 4000)))
    for p in d.procs:
        state = "running" if p.poll() is None else "exit status %s" % p.returncode
        report.sections.append(("log of %s (%s)" % (p.rcomp_name, state),
                                d.read_log(p.rcomp_name, 6000)))
