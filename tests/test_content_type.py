"""What an app says its surface shows (wp_content_type_v1) is a hint to
the window's encoder: a game's motion goes to video sooner."""
import re

from rig import ANIM_CLIENT, log, wait_for


def frames_before_video(desktop, content_type, name):
    """The frames rcomp-run sent of anim-client's window, over 20 ms and
    50 Mbit/s, before its motion went to video."""
    env = {"ANIM_CONTENT_TYPE": content_type} if content_type else None
    server = desktop.start_server([ANIM_CLIENT, "3"], ["-v", "--codec", "auto"], env=env,
                                  name=name)
    relay = desktop.start_relay(server.socket, delay_ms=10, rate_mbit=50, name=name + "-relay")
    desktop.start_viewer(relay, name=name + "-view")
    wait_for("the switch to video", lambda: "video with" in desktop.read_log(name), timeout=30)
    log = desktop.read_log(name).split("video with")[0]
    server.terminate()
    server.wait(timeout=10)
    return len(re.findall(r"window 1: frame \d+ sent", log)), log


def test_a_game_goes_to_video_sooner_than_an_app_that_says_nothing(desktop):
    game, game_log = frames_before_video(desktop, "game", "game-run")
    assert "a surface shows a game now" in game_log
    plain, _ = frames_before_video(desktop, None, "plain-run")
    log("frames before video: %d for a game, %d for an app that says nothing" % (game, plain))
    assert game < plain, (game, plain)
