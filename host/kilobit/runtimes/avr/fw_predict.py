"""The predictor firmware (firmware_c/avr/predict_stream.c) of the host-trained models (bonsai,
protonn) on a simulated board: update frames, a replay and its cycles (the header is
kilobit.models.predictor's, the build kilobit.runtimes.avr.firmware's).

    rows, result, sizes = fw_predict.replay(model_bytes, [codes, ...], "uno")

An input is streamed as update frames of at most CHUNK consecutive codes, then a predict frame
(docs/uart-protocol.md, "Predictor firmware"); each model's firmware module reads its predict
reply (reply_row). A ProtoNN build keeps no D or k (RAM), so its replay reports those fields as
None (kilobit.core.goldenfile.compare checks the others).
"""
import struct
import zlib

from kilobit.core.errors import KilobitError
from kilobit.models import predictor, registry
from kilobit.runtimes.avr import firmware, kb_sim, protocol

CHUNK = predictor.CHUNK
MARK_PREDICT = (3, 4)
MARK_UPDATE = (5, 6)


def load(model_bytes):
    """(spec, integer reference, device payload) of a predictor model file."""
    spec = registry.of_file(model_bytes)
    if spec.kind != predictor.KIND:
        raise KilobitError("the predictor firmware does not run %s models" % spec.name)
    m, _ = spec.load(model_bytes)
    return spec, m, m.payload()[:-1]


def build(model_bytes, board_name, baud=firmware.BAUD):
    load(model_bytes)
    return firmware.build(model_bytes, board_name, baud)


def update_frames(codes, chunk=CHUNK, skip_zeros=False):
    """Update frames streaming every code of one input in index order (zeros included), or with
    skip_zeros only the runs of non-zero codes (a feature never sent counts as 0)."""
    codes = [int(c) for c in codes]
    if not skip_zeros:
        runs = [(s, codes[s:s + chunk]) for s in range(0, len(codes), chunk)]
    else:
        runs, s = [], 0
        while s < len(codes):
            if codes[s] == 0:
                s += 1
                continue
            e = s
            while e < len(codes) and codes[e] != 0 and e - s < chunk:
                e += 1
            runs.append((s, codes[s:e]))
            s = e
    return [protocol.frame("U", struct.pack("<H", s) + bytes(part)) for s, part in runs]


def frames(m, steps, skip_zeros=False):
    """Every frame of a replay of predictor steps ("P", None, codes) on the firmware of model m
    (no stop frame): info, then per input its update frames and a predict frame."""
    out = [protocol.frame("I")]
    for _, _, u in steps:
        out += update_frames(u, skip_zeros=skip_zeros) + [protocol.frame("P")]
    return out


def read(take, m, steps, who, on_row=None, skip_zeros=False):
    """The golden field rows of a replay's replies (kilobit.runtimes.avr.fw_learner.read's
    contract); the info reply must match the model file (type, sizes, CRC of the payload)."""
    spec = registry.of_class(type(m))
    pl = m.payload()[:-1]
    info = take("I").payload
    version, mtype, dims, top, chunk, _, crc = struct.unpack("<BBHBBBI", bytes(info))
    want = (protocol.VERSION, spec.type_id, m.dims, (1 << m.in_bits) - 1, CHUNK,
            zlib.crc32(pl) & 0xFFFFFFFF)
    if (version, mtype, dims, top, chunk, crc) != want:
        raise KilobitError("%s: the chip's info %s differs from the model file's %s"
                           % (who, (version, mtype, dims, top, chunk, crc), want))
    rows = []
    for i, (_, _, u) in enumerate(steps):
        for _ in range(len(update_frames(u, skip_zeros=skip_zeros))):
            take("U")
        rows.append(spec.firmware.reply_row(m, bytes(take("P").payload)))
        if on_row:
            on_row(i, rows[-1])
    return rows


def replay(model_bytes, inputs, board_name="uno", max_cycles=4 * 10 ** 9, skip_zeros=False,
           profile=None):
    """Stream each input (a list of codes) and predict, on the simulated board. Returns (rows,
    SimResult, sizes): rows are the golden fields per input (Bonsai: P, leaf, scores,
    prediction; ProtoNN: P, None for each D and k, scores, prediction); result.markers give
    the cycles (cycles(result)). `profile`: a path for the cycles spent at each flash address
    inside the update and predict handlers (kilobit.runtimes.avr.profile)."""
    spec, m, pl = load(model_bytes)
    elf, sizes = build(model_bytes, board_name)
    steps = [("P", None, u) for u in inputs]
    fr = frames(m, steps, skip_zeros) + [protocol.stop_frame()]
    b = firmware.board(board_name)
    result = kb_sim.run(elf, b["mcu"], b["clock_hz"], b"".join(fr), max_cycles=max_cycles,
                        profile=None if profile is None
                        else (profile, (MARK_UPDATE[0], MARK_PREDICT[0])))
    take = protocol.taker(protocol.parse_replies(result.output), board_name)
    rows = read(take, m, steps, board_name, skip_zeros=skip_zeros)
    take("S")
    return rows, result, sizes


def cycles(result):
    """Cycles of each prediction: the update frames since the previous prediction plus the
    prediction itself (markers 5-6 and 3-4), UART excluded."""
    out, acc, t0 = [], 0, None
    for value, cycle in result.markers:
        if value in (MARK_UPDATE[0], MARK_PREDICT[0]):
            t0 = cycle
        elif value == MARK_UPDATE[1] and t0 is not None:
            acc += cycle - t0
            t0 = None
        elif value == MARK_PREDICT[1] and t0 is not None:
            out.append(acc + cycle - t0)
            acc, t0 = 0, None
    return out
