"""Writes a sine tone to stdout as 48 kHz stereo s16le, forever or for
--seconds: the app a sound test plays (through pacat) in a session."""
import argparse
import math
import struct
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("frequency", type=float)
    ap.add_argument("--seconds", type=float, default=0, help="0: forever")
    ap.add_argument("--amplitude", type=float, default=0.5)
    ap.add_argument("--burst-ms", type=int, default=0,
                    help="only the first N ms of each second sound (onsets to time)")
    args = ap.parse_args()
    rate = 48000
    # One second of whole periods loops without a click when the frequency
    # is a whole number.
    amp = int(32767 * args.amplitude)
    on = rate * args.burst_ms // 1000 if args.burst_ms else rate
    second = b"".join(struct.pack("<hh", v, v) for v in (
        int(amp * math.sin(2 * math.pi * args.frequency * i / rate)) if i < on else 0
        for i in range(rate)))
    out = sys.stdout.buffer
    left = args.seconds
    try:
        while args.seconds == 0 or left > 0:
            chunk = second if args.seconds == 0 or left >= 1 else \
                second[:int(left * rate) * 4]
            out.write(chunk)
            out.flush()
            left -= 1
    except BrokenPipeError:
        pass


if __name__ == "__main__":
    main()
