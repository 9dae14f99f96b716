"""What an app says its surface shows (wp_content_type_v1) is a hint to
the window's encoder: a game's motion goes to video sooner."""
import re

from rig import ANIM_CLIENT, log, wait_for


def switch_to_video(desktop, content_type, name):
    """How anim-client's motion went to video, over 20 ms and 50 Mbit/s:
    (the frames of motion the encoder counted, those it needed, the
    frames sent before, the log); None where it went at once, as a
    lossless picture would have taken too long (a loaded machine's relay
    measured the link slow: then the link chose, not the app's words)."""
    env = {"ANIM_CONTENT_TYPE": content_type} if content_type else None
    server = desktop.start_server([ANIM_CLIENT, "3"], ["-v", "--codec", "auto"], env=env,
                                  name=name)
    relay = desktop.start_relay(server.socket, delay_ms=10, rate_mbit=50, name=name + "-relay")
    desktop.start_viewer(relay, name=name + "-view")
    wait_for("the switch to video", lambda: "video with" in desktop.read_log(name), timeout=30)
    server.terminate()
    server.wait(timeout=10)
    text = desktop.read_log(name)
    if "window 1: video at once" in text:
        return None
    switch = re.search(r"window 1: motion: to video after (\d+) frames' worth \((\d+) needed", text)
    assert switch, "the motion that went to video is not logged:\n" + text[-3000:]
    sent = len(re.findall(r"window 1: frame \d+ sent", text.split("video with")[0]))
    return int(switch.group(1)), int(switch.group(2)), sent, text


def switch_by_motion(desktop, content_type, name):
    for i in range(4):
        switch = switch_to_video(desktop, content_type, "%s-%d" % (name, i))
        if switch:
            return switch
    raise AssertionError("each of 4 runs went to video at once: the link was too slow to tell")


def test_a_game_goes_to_video_at_its_second_frame_of_motion_and_an_app_that_says_nothing_at_its_fifth(
        desktop):
    # The count of frames sent depends on a loaded machine's timing (a
    # slow app's frames are not frame after frame; a slow relay measures
    # the link slow, and its frames count for more): what the encoder
    # needed is the app's word alone.
    game, game_needed, game_sent, game_log = switch_by_motion(desktop, "game", "game")
    assert "a surface shows a game now" in game_log
    plain, plain_needed, plain_sent, _ = switch_by_motion(desktop, None, "plain")
    log("to video: a game after %d frames' worth of motion (%d needed), %d sent; an app that "
        "says nothing after %d (%d needed), %d sent" %
        (game, game_needed, game_sent, plain, plain_needed, plain_sent))
    assert (game_needed, plain_needed) == (1, 4)
    assert game >= 1 and plain >= 4, (game, plain)
