import time, rig, pytest
from rig import ALICE
pytestmark = [pytest.mark.usefixtures("sessions_end")]
def test_dbg(gate):
    c = gate.client()
    t=time.time(); print("login", c.login(ALICE)[0], time.time()-t)
    for i in range(5):
        st, body, took = c.get("sessions")
        print("sessions", st, round(took,3))
    w = gate.client()
    for i in range(3):
        t=time.time(); r = w.login("nobody-x", "wrong"); print("bad login", r[0], round(r[2],3))
