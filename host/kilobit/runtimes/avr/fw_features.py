"""Window features on a simulated AVR (firmware_c/avr/features_stream.c): a features golden
file's windows streamed a frame each to the chip, its features read back.

    rows, result, sizes = fw_features.replay("uno", windows, axes, n, mask, p, bands)

The firmware is built for the file's sizes (its window, FFT points and feature count are
compile-time buffer sizes: kilobit.runtimes.avr.firmware.build_source caches one image per
size), so it fits the Uno whenever the window does; otherwise FitError ("does not fit uno:
static RAM ..."). result is the kb_sim.SimResult: result.between(1, 2) are the cycles of each
window's kb_features_extract.
"""
import glob
import os
import struct

from kilobit.runtimes.avr import firmware, kb_sim, protocol

SOURCE = os.path.join(firmware.FIRMWARE_C, "avr", "features_stream.c")
OP_EXTRACT = ord("X")
#: the stack this firmware may use, bytes: kb_features_extract and the FFT inline into main,
#: whose frame then holds their locals; 144 B measured in simulation on every file of the set
#: (tests/test_golden_features.py holds each run to this reserve)
STACK_RESERVE = {"attiny2313": 160, "attiny4313": 160, "atmega328p": 160}


def depends():
    """The files whose change rebuilds the firmware: its source, the UART framing, and every
    runtime header (kb_features.h's includes among them)."""
    return [SOURCE, os.path.join(firmware.FIRMWARE_C, "avr", "kb_uart.h")] + sorted(
        glob.glob(os.path.join(firmware.FIRMWARE_C, "kb_*.h")))


def per_axis(mask, bands):
    return bin(mask).count("1") + bands


def header(axes, n, p, width):
    return ("#define KB_FW_WINDOW %d\n#define KB_FW_P %d\n#define KB_FW_OUT %d\n"
            % (axes * n, (1 << p) if p else 0, width))


def build(board, axes, n, mask, p, bands):
    """(elf, sizes) of the firmware sized for this selection on `board`; FitError when not."""
    try:
        return firmware.build_source(header(axes, n, p, axes * per_axis(mask, bands)), board,
                                     SOURCE, depends(), os.path.join(firmware.BUILD,
                                                                     "avr-features"),
                                     stack_reserve=STACK_RESERVE)
    except kb_sim.SimError as e:
        # the linker words a program far beyond the flash this way, not as "overflowed by"
        if "will not fit in region `text'" not in str(e):
            raise
        raise firmware.FitError("does not fit %s: the features firmware (kb_features_extract, "
                                "its FFT included) is larger than its %d B of flash"
                                % (board, firmware.board(board)["flash_bytes"])) from None


def extract_frame(window, axes, n, mask, p, bands):
    return protocol.frame(OP_EXTRACT, struct.pack("<BHBBB%dh" % len(window), axes, n, mask, p,
                                                  bands, *window))


def replay(board, windows, axes, n, mask, p, bands, error):
    """(rows, SimResult, sizes): every window's features from the chip; `error` is the
    exception class raised when the chip refuses a frame, crashes or answers out of step."""
    elf, sizes = build(board, axes, n, mask, p, bands)
    b = firmware.board(board)
    frames = b"".join(extract_frame(w, axes, n, mask, p, bands) for w in windows)
    try:
        result = kb_sim.run(elf, b["mcu"], b["clock_hz"], frames + protocol.stop_frame())
        replies = protocol.parse_replies(result.output)
    except (kb_sim.SimError, protocol.ProtocolError) as e:
        raise error("%s: %s" % (board, e)) from None
    take = protocol.taker(replies, board, error)
    width = axes * per_axis(mask, bands)
    rows = []
    for i in range(len(windows)):
        r = take("X")
        if r.payload[0] != 0:
            raise error("%s: kb_features_extract refused window %d: error %d"
                        % (board, i, r.payload[0]))
        if len(r.payload) != 1 + 4 * width:
            raise error("%s: window %d: %d bytes of features for %d"
                        % (board, i, len(r.payload) - 1, width))
        rows.append(list(struct.unpack_from("<%di" % width, r.payload, 1)))
    take("S")
    return rows, result, sizes
