"""`kilobit demo`: the main job end to end on Banana.

Train the Random Kernel Perceptron on the host (integer rules, 4 bits, 62 support vectors in a
70-byte memory, A = -6), write the model file, then hand it to every device runtime and let each
keep learning online on the 500 test examples (predict, then learn: the prequential protocol of
an on-device learner). Every runtime must make the host's predictions exactly.
"""
import os
import time

from kilobit import data
from kilobit.core import kbfile
from kilobit.core.quant import quantize
from kilobit.models.rkp.model import RandomKernelPerceptron, mem_bytes
from kilobit.runtimes import catalog as rt

PARAMS = dict(kernel="laplace", bits=4, budget=62, width=-6, C=255, seed=0)


def run(runtime_names, output):
    runtimes = [(name, rt.get(name)) for name in runtime_names]  # refused before any work
    split = data.load("banana", seed=0)
    scaler, Xtr, Xte = data.scale(split)
    fixed = RandomKernelPerceptron(fixed=True, **PARAMS).fit(Xtr, split.y_train)
    flt = RandomKernelPerceptron(fixed=False, **PARAMS).fit(Xtr, split.y_train)
    m = fixed.model_
    print("1. trained on the host: Banana, %d examples, one online pass" % len(Xtr))
    print("   integer model: %d/%d support vectors in %d bytes; test accuracy %.2f%% "
          "(float reference %.2f%%)" % (m.count, m.budget, mem_bytes(m.budget, m.dims, m.bits),
                                        100 * fixed.score(Xte, split.y_test),
                                        100 * flt.score(Xte, split.y_test)))
    blob = m.to_bytes(scaler=(scaler.lo_, scaler.hi_))
    os.makedirs(os.path.dirname(output) or ".", exist_ok=True)
    kbfile.write(output, blob)
    print("2. quantized model file: %s (%d bytes)" % (output, len(blob)))

    codes = quantize(Xte, m.bits)
    steps = [("L", int(y), [int(c) for c in u]) for u, y in zip(codes, split.y_test)]
    print("3. on-device online learning over the %d test examples (predict, then learn):"
          % len(steps))
    reference = None
    ok = True
    for name, runtime in runtimes:
        missing = runtime.missing()
        if missing:
            print("   %-18s not available here: %s" % (name, missing))
            ok = False
            continue
        t0 = time.time()
        out = runtime.replay(blob, steps)
        dt = time.time() - t0
        preds = [r[1] for r in out]
        acc = sum(int(p == s[1]) for p, s in zip(preds, steps)) / len(steps)
        if reference is None:
            reference = (name, [r[:4] for r in out])
            same = "reference"
        else:
            same = "bit-exact with %s" % reference[0] if [r[:4] for r in out] == reference[1] \
                else "DIFFERS from %s" % reference[0]
            ok &= same.startswith("bit")
        print("   %-18s prequential accuracy %.2f%%, %d mistakes learnt, %.2fs  %s"
              % (name, 100 * acc, sum(r[2] for r in out), dt, same))
    print("demo %s" % ("passed: every runtime agrees with the host" if ok else "FAILED"))
    return 0 if ok else 1
