"""`kilobit inspect MODEL.kb`: what a model file holds and where it fits (issue 24).

    kilobit inspect build/banana.kb                  # every board of boards/
    kilobit inspect build/banana.kb --board uno      # one (repeatable)

The report: the file (type, size, the container's CRC-32 checked), the model's parameters and
learnt state (its spec's describe()), the scaler stored for the host, then for each board the
flash and RAM it takes there as `kilobit fit` measures them (kilobit.runtimes.boards.fit: an AVR
firmware built for the model, or kbit as .mpy on a MicroPython board), the EEPROM of crash-safe
checkpoints for a learner on an AVR (its firmware built with a checkpoint after every learning
step that changed the state), and the verdict. A board whose firmware or tools cannot be built
here is reported as not measured, with the reason; the rest goes on.
"""
from kilobit.core.errors import KilobitError
from kilobit.models import registry

#: the features of a scaler the report lists one by one; the rest are summed up
SCALER_SHOWN = 6


def report(path, board_names=None, progress=None):
    """(lines of the report, names of the boards it fits). KilobitError for a missing or bad
    file or an unknown board; `progress(board name)` is called as each board is measured."""
    from kilobit.runtimes import boards

    spec, blob = registry.read(path)
    all_boards = boards.load_all()
    names = list(all_boards) if not board_names else list(dict.fromkeys(board_names))
    for n in names:
        if n not in all_boards:
            raise KilobitError("unknown board %r (known: %s)" % (n, ", ".join(all_boards)))
    m, scaler = spec.load(blob)
    lines = ["%s: %s model (%s, %s), model file %d B, CRC-32 ok"
             % (path, spec.name, spec.title, spec.paper, len(blob)),
             "%s; %s" % ("learns online on the device" if spec.learns_online
                         else "trained on the host, predicts on the device",
                         "AVR firmware for %s" % ", ".join(spec.boards) if spec.boards
                         else "no AVR firmware")]
    pairs = spec.describe(m)
    width = max(len(k) for k, _ in pairs)
    lines += ["  %-*s  %s" % (width, k, v) for k, v in pairs]
    lines += scaler_lines(scaler)
    lines.append("boards, as `kilobit fit` measures them%s:"
                 % (" (EEPROM: crash-safe checkpoints, fit --checkpoint-every 1)"
                    if spec.learns_online and spec.boards else ""))
    fits = []
    for n in names:
        row, ok = board_line(spec, blob, all_boards[n])
        if progress:
            progress(n)
        lines.append(row)
        if ok:
            fits.append(n)
    lines.append("fits %s" % (", ".join(fits) if fits else "none of %s" % ", ".join(names)))
    return lines, fits


def scaler_lines(extras):
    """The lines of a model file's trailer (kilobit.core.kbfile.Extras, or None)."""
    out = []
    if extras is not None and extras.labels is not None:
        shown = ", ".join(extras.labels[:SCALER_SHOWN])
        out.append("labels: %d (%s%s)" % (len(extras.labels), shown,
                                          ", ..." if len(extras.labels) > SCALER_SHOWN else ""))
    if extras is not None and extras.pipeline is not None:
        out.append("pipeline: %s; on the board: kbit.pipeline.Window(m).predict(window)"
                   % extras.pipeline)
    if extras is not None and extras.quant is not None:
        q = extras.quant
        lo, hi = q.lo_, q.hi_
        out.append("quantizer: integer, %d features of raw readings -> %d-bit codes (%s), the "
                   "same on every runtime (m.quantize on the board):"
                   % (len(lo), q.bits, "floor" if q.floor else "round half up"))
        for j in range(min(len(lo), SCALER_SHOWN)):
            out.append("  feature %d: %d .. %d" % (j + 1, lo[j], hi[j]))
        if len(lo) > SCALER_SHOWN:
            out.append("  ... %d more features (%d .. %d overall)"
                       % (len(lo) - SCALER_SHOWN, int(min(lo)), int(max(hi))))
        return out
    if extras is None or extras.scaler is None:
        return out + ["scaler: none stored (inputs are the device's codes; eval and predict "
                      "fit one on the training split)"]
    lo, hi = extras.scaler
    out.append("scaler: min-max of %d features, stored for the host (the device gets codes):"
               % len(lo))
    for j in range(min(len(lo), SCALER_SHOWN)):
        out.append("  feature %d: %.6g .. %.6g" % (j + 1, lo[j], hi[j]))
    if len(lo) > SCALER_SHOWN:
        out.append("  ... %d more features (%.6g .. %.6g overall)"
                   % (len(lo) - SCALER_SHOWN, float(min(lo)), float(max(hi))))
    return out


def _use(what, used, budget):
    """One cell of a board's line, padded so that the cells of the boards line up."""
    return ("%s %d/%d B (%d%%)" % (what, used, budget, 100 * used // max(budget, 1))).ljust(
        CELL.get(what, 0))


#: the widths of the cells (an ESP32's flash is the widest)
CELL = {"flash": 27, "RAM": 24}


def board_line(spec, blob, b):
    """(one line of the report for board dict b, whether the model fits it)."""
    from kilobit.runtimes import boards

    head = "  %-11s" % b["name"]
    if b["runtime"] == "c" and b["name"] not in spec.boards:
        return head + "no    no firmware for %s models (they run on %s)" % (
            spec.name, ", ".join(spec.boards) or "MicroPython boards"), False
    try:
        f = boards.fit(blob, b)
    except KilobitError as e:
        return head + "?     not measured: %s" % str(e).splitlines()[0], False
    cells = [_use(what, used, budget) for what, used, budget, _ in f.rows]
    if f.ok and b["runtime"] == "c" and spec.learns_online:
        cells.append(_checkpoints(blob, b, f))
    if not f.ok:
        cells.append("does not fit: %s" % f.reason)
    return head + ("fits  " if f.ok else "no    ") + " ".join(cells), f.ok


def _checkpoints(blob, b, plain):
    """The EEPROM cell of a learner on an AVR: its checkpointing firmware's layout."""
    from kilobit.runtimes import boards
    try:
        f = boards.fit(blob, b, checkpoint_every=1)
    except KilobitError as e:
        return "EEPROM not measured (%s)" % str(e).splitlines()[0]
    if not f.ok:
        return "EEPROM: checkpoints do not fit (%s)" % f.reason
    flash = [r for r in f.rows if r[0] == "flash"][0][1] - \
        [r for r in plain.rows if r[0] == "flash"][0][1]
    used, budget = [(r[1], r[2]) for r in f.rows if r[0] == "EEPROM"][0]
    return "EEPROM %d/%d B (+%d B flash)" % (used, budget, flash)
