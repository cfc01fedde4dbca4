"""Power cuts during the AVR learners' EEPROM checkpoints, in simulation (issue 15 item 3).

    from kilobit.runtimes.avr import powercut
    r = powercut.run("tests/golden/rkp-laplace-b4-t62-m2-a-6-s1.json", "attiny2313", steps=40)
    r["tried"], r["recovered"], r["failures"]

The firmware is built with checkpoints (firmware_c/avr/kb_persist.h; a checkpoint after every
`every` learning steps that changed the state, or with every=0 a checkpoint frame after each
`frame_every` steps). A reference run from a blank EEPROM sends the golden file's first `steps`
steps, each followed by a full dump, and counts the EEPROM byte writes: W. Then, for each cut
point c in 1..W and each cut value (None: the byte keeps its old value; a number: the byte is
left torn, holding it), the same input runs again and the power is cut as the c-th write starts
(kb_sim --cut-eeprom-write). The chip is restarted from that EEPROM and must hold, by its first
dump, the state of the last complete checkpoint or of the one the cut interrupted (which one
was under way follows from the replies that came out before the cut); it then replays the
golden file's remaining steps (of the first `steps`) and must answer each exactly as the host
reference (the golden file's rows) and end in the reference run's state.

The reference run itself must be the golden file's, row for row: the checkpoints change nothing
the host sees but the flag bit 2.
"""
import os
import shutil
import tempfile
import zlib

from kilobit.core import goldenfile
from kilobit.core.errors import KilobitError
from kilobit.models import registry
from kilobit.runtimes.avr import firmware, kb_sim, protocol
from kilobit.runtimes.avr.sim_runtimes import dialog


class PowerCutError(KilobitError):
    """The reference run itself differs from the golden file (nothing to cut against)."""


def _sim(elf, b, frames, eeprom, cut=None, value=None):
    res = kb_sim.run(elf, b["mcu"], b["clock_hz"], b"".join(frames), eeprom=eeprom,
                     cut_write=cut, cut_value=value, check=False, max_cycles=4 * 10 ** 9)
    if not res.ok:
        raise PowerCutError("%s: %s (%s)" % (b["name"], res.stop, res.message))
    reader = protocol.ReplyReader()
    try:
        reader.feed(res.output)  # a cut may end the stream inside a reply: that one is dropped
    except protocol.ProtocolError as e:
        raise PowerCutError("%s: %s" % (b["name"], e)) from None
    return reader.replies, res


def plan(doc, steps=None, every=1, frame_every=4):
    """The golden case's model, its first `steps` steps and the reference input: a full dump,
    then per step its frame and a full dump (and with every=0 a checkpoint frame after each
    `frame_every` steps and at the end), then stop. Returns (spec, m, steps, frames, kinds) with
    kinds[i] "D" / "step" / "C" per frame."""
    spec = registry.get(doc.get("model", "rkp"))
    if spec.kind not in ("learner", "classes"):
        raise KilobitError("%s models do not learn on the chip: no checkpoints" % spec.name)
    m, _ = spec.load(bytes.fromhex(doc["model_file"]))
    all_steps = spec.golden.doc_steps(doc)
    st = all_steps[:steps] if steps else all_steps
    fw = dialog(spec.kind)
    frames, kinds = [protocol.dump_frame()], ["D"]
    for i, s in enumerate(st):
        frames += [fw.step_frame(*s), protocol.dump_frame()]
        kinds += ["step", "D"]
        if every == 0 and ((i + 1) % frame_every == 0 or i == len(st) - 1):
            frames.append(protocol.checkpoint_frame())
            kinds.append("C")
    frames.append(protocol.stop_frame())
    kinds.append("S")
    return spec, m, st, frames, kinds


def _rows_ok(doc, fw, replies, start, who):
    """The step replies (L/Q) of `replies` must be the golden file's rows start, start+1, ..."""
    nf = len(doc.get("fields", goldenfile.FIELDS))
    i = start
    for r in replies:
        if r.code == "E":
            return "%s: the chip refused a frame: %s" % (who, r.error_text)
        if r.code in "LQ":
            got, exp = tuple(fw.row(r)), tuple(doc["expect"][i][:nf])
            if got != exp:
                return "%s: step %d: %r, the host reference %r" % (who, i, got, exp)
            i += 1
    return None


class _Reference:
    """The uncut run of a golden case on the checkpointing firmware, from a blank EEPROM (in
    directory tmp), checked row for row and memory for memory against the golden file. Holds
    what the cuts are judged by: states[k] the full dump after k steps; allowed[f] the
    (checkpoint in force before frame f, state after it) step indices; the replies; the run."""

    def __init__(self, golden_path, board_name, steps, every, frame_every, tmp):
        self.doc = doc = goldenfile.load(golden_path)
        spec, m, self.steps, self.frames, self.kinds = plan(doc, steps, every, frame_every)
        self.fw = fw = dialog(spec.kind)
        self.elf, self.sizes = firmware.build(bytes.fromhex(doc["model_file"]), board_name,
                                              checkpoint_every=every)
        self.board = firmware.board(board_name)
        self.name = name = os.path.basename(golden_path)
        who = "%s on %s" % (name, board_name)
        self.replies, self.result = _sim(self.elf, self.board, self.frames,
                                         os.path.join(tmp, "ref.eep"))
        if len(self.replies) != len(self.frames):
            raise PowerCutError("%s: %d replies to %d frames" % (who, len(self.replies),
                                                                 len(self.frames)))
        bad = _rows_ok(doc, fw, self.replies, 0, who + " (no cut)")
        if bad:
            raise PowerCutError(bad)
        pairs = list(zip(self.replies, self.kinds))
        self.states = [bytes(r.payload) for r, k in pairs if k == "D"]
        saved, cur, self.allowed, self.checkpoints = 0, 0, [], 0
        for r, k in pairs:
            before = saved
            if k == "step":
                cur += 1
                if r.flags & protocol.FLAG_CHECKPOINT:
                    saved, self.checkpoints = cur, self.checkpoints + 1
            elif k == "C":
                if r.payload[0] == 0:
                    self.checkpoints += 1
                saved = cur
            self.allowed.append((before, cur))
        nf = len(doc.get("fields", goldenfile.FIELDS))
        for i, s in enumerate(self.states[1:], 1):  # the memories the host reference has
            mem = fw.dump_memory(protocol.Reply(ord("D"), s))
            exp = doc["expect"][i - 1]
            if len(exp) > nf and mem is not None and zlib.crc32(mem) != exp[nf]:
                raise PowerCutError("%s: memory after step %d is not the host's" % (who, i))


def run(golden_path, board_name, steps=None, every=1, frame_every=4, cuts=None,
        values=(None, 0xFF), log=None):
    """Cut the power at each EEPROM byte write of a checkpointing learner firmware; returns
    {"tried", "recovered", "failures": [...], "writes": W, "checkpoints", "scheme", "layout",
    "cell_max", "steps"}. `cuts` limits the cut points (an iterable of write numbers; default
    all 1..W)."""
    tmp = tempfile.mkdtemp(prefix="kb_powercut_")
    try:
        ref = _Reference(golden_path, board_name, steps, every, frame_every, tmp)
        res, sizes, name = ref.result, ref.sizes, ref.name
        writes = res.report["eeprom_writes"]
        out = {"model": name, "board": board_name, "steps": len(ref.steps), "writes": writes,
               "checkpoints": ref.checkpoints, "cell_max": res.report["eeprom_cell_max"],
               "layout": sizes["checkpoint"], "scheme": sizes["checkpoint"]["scheme"],
               "flash": sizes["flash"], "ram": sizes["ram"], "tried": 0, "recovered": 0,
               "failures": []}
        points = range(1, writes + 1) if cuts is None else [c for c in cuts if 1 <= c <= writes]
        for c in points:
            for v in values:
                out["tried"] += 1
                bad = _cut_once(ref, tmp, c, v)
                if bad:
                    out["failures"].append("cut at write %d (%s): %s" % (
                        c, "old value kept" if v is None else "torn to 0x%02x" % v, bad))
                else:
                    out["recovered"] += 1
            if log and c % 100 == 0:
                log("  %s on %s: %d of %d cut points" % (name, board_name, c, writes))
        return out
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _cut_once(ref, tmp, cut, value):
    elf, b, states, doc, fw = ref.elf, ref.board, ref.states, ref.doc, ref.fw
    ee = os.path.join(tmp, "cut.eep")
    if os.path.exists(ee):
        os.unlink(ee)
    got, res = _sim(elf, b, ref.frames, ee, cut, value)
    if res.stop != "power-cut":
        return "the run ended (%s) before write %d" % (res.stop, cut)
    n = len(got)  # frames answered before the cut: the cut came in frame n
    if [r.payload for r in got] != [r.payload for r in ref.replies[:n]]:
        return "the replies before the cut differ from the reference run's"
    lo, hi = ref.allowed[n]
    # restart from the EEPROM: the restored state, then the rest of the steps from there
    first = [protocol.dump_frame()]
    r0, _ = _sim(elf, b, first + [protocol.stop_frame()], ee)
    restored = bytes(r0[0].payload)
    if restored == states[hi]:
        k = hi
    elif restored == states[lo]:
        k = lo
    else:
        which = [i for i, s in enumerate(states) if s == restored]
        return ("restored a state that is neither the last complete checkpoint (after step %d) "
                "nor the one being written (after step %d)%s" % (
                    lo, hi, ": it is the state after step %d" % which[0] if which else ""))
    rest = []
    for s in ref.steps[k:]:
        rest += [fw.step_frame(*s), protocol.dump_frame(if_changed=True)]
    rest += [protocol.dump_frame(), protocol.stop_frame()]
    r1, _ = _sim(elf, b, first + rest, ee)
    bad = _rows_ok(doc, fw, r1, k, "after the restart")
    if bad:
        return bad
    if bytes(r1[-2].payload) != states[-1]:
        return "after the restart and steps %d..%d the state is not the reference's" % (
            k + 1, len(ref.steps))
    return None


def wear(golden_path, board_name, every=1, steps=None):
    """EEPROM wear of a checkpointing learner over the golden file's steps (no cut): writes per
    learnt example, the most-written cell, and the examples until that cell reaches 100,000
    writes (the datasheet endurance of AVR EEPROM)."""
    tmp = tempfile.mkdtemp(prefix="kb_wear_")
    try:
        ref = _Reference(golden_path, board_name, steps, every, 4, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    learn = sum(1 for op, _, _ in ref.steps if op == "L")
    res = ref.result
    w, cell = res.report["eeprom_writes"], res.report["eeprom_cell_max"]
    return {"model": os.path.basename(golden_path), "board": board_name, "learnt": learn,
            "checkpoints": ref.checkpoints, "writes": w, "writes_per_example": w / max(learn, 1),
            "cell_max": cell, "cell_max_addr": res.report["eeprom_cell_max_addr"],
            "lifetime_examples": int(100000 * learn / cell) if cell else None,
            "scheme": ref.sizes["checkpoint"]["scheme"]}
