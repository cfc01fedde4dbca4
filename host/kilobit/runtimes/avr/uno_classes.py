"""Which K-class learners fit the Uno (firmware_c/avr/kb_ovr_fw.h): the largest budget a class
for K classes of M codes, found by building the firmware (kilobit.runtimes.avr.firmware.fits:
static RAM from the linker plus the measured stack reserve within 2 KB, and with checkpoints
two EEPROM slots within 1 KB).

    from kilobit.runtimes.avr import uno_classes
    uno_classes.largest("rkp", 10, 16, 4)   # {"budget": T, "ram": ..., "checkpoint_budget": ...}
"""
from kilobit.runtimes.avr import firmware


def _model(kind, K, dims, bits, budget):
    if kind == "rkp":
        from kilobit.models.rkp.model import new_model
        return new_model("laplace", bits, dims, budget, -1, classes=K).to_bytes()
    from kilobit.models.ckp.model import new_model
    return new_model(bits, dims, budget, 600, classes=K).to_bytes()


def _largest(fit, lo, hi):
    """The largest budget in lo..hi for which fit(budget) holds, fit being monotone; lo - 1 if
    none does."""
    if not fit(lo):
        return lo - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if fit(mid):
            lo = mid
        else:
            hi = mid - 1
    return lo


def largest(kind, K, dims, bits, board="uno"):
    """{"budget", "ram", "stack_reserve", "checkpoint_budget"} of `kind` (rkp: T support vectors
    a class; ckp: L bits a class) with K classes of `dims` codes of `bits` bits on `board`: the
    largest budget whose firmware fits (0 if none), its static RAM and stack reserve, and the
    largest that also checkpoints to EEPROM."""
    hi = 255 if kind == "rkp" else 16383

    def fits(budget, every=None):
        return firmware.fits(_model(kind, K, dims, bits, budget), board,
                             checkpoint_every=every)[0]

    low = 1 if kind == "rkp" else dims + 1  # ckp: room for one 1-bit support vector
    top = _largest(fits, low, hi)
    out = {"budget": top if top >= low else 0, "ram": None, "stack_reserve": None}
    if top >= low:
        _, sizes = firmware.build(_model(kind, K, dims, bits, top), board)
        out.update(ram=sizes["ram"], stack_reserve=sizes["stack_reserve"])
    ckpt = _largest(lambda b: fits(b, 1), low, max(top, low))
    out["checkpoint_budget"] = ckpt if ckpt >= low else 0
    return out
