"""The host integer reference as a runtime: what every other runtime is compared with."""
from ..errors import ModelFileError
from ..rkp import RKPInt
from . import Runtime, RuntimeFailure


class HostRuntime(Runtime):
    name = "host"

    def replay(self, model, steps):
        try:
            m, _ = RKPInt.from_bytes(model)
        except ModelFileError as e:
            raise RuntimeFailure(str(e)) from None
        out = []
        for op, y, codes in steps:
            if op == "L":
                s, mistake = m.learn(codes, y)
            else:
                s, mistake = m.score(codes), False
            out.append((s, int(s > 0), int(mistake), m.count, m.memory() if mistake else None))
        if out:
            out[-1] = out[-1][:4] + (m.memory(),)
        return out
