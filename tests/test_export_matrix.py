"""Every valid model exports for every target (issue 30): each model type x each --target
(avr, arm, host) x binary and multi-class where the type has both x its smallest and a large
budget, and the shapes the issue found refused (ProtoNN int8 and int16, 1 feature, 784
features, --proj 1; CKP with 2 features and --L 3 .. 16). Export compiles the header for the
target with -Werror and the firmware's warnings (kilobit.runtimes.export.CFLAGS): each either
exports, or is refused in `kilobit fit`'s words because it does not fit the target's board,
never with a compiler's log.

The models are trained once per module with fixed seeds (small epochs: the export is under
test, not the accuracy); exports run one at a time.
"""
import contextlib
import io

import pytest

from conftest import need
from kilobit.cli import main
from kilobit.runtimes import export

#: id -> the `kilobit train` arguments of a model (before -o)
MODELS = {
    "rkp-binary-smallest": "rkp --data banana --bits 1 --budget 1",
    "rkp-binary-large": "rkp --data banana --bits 8 --budget 65535",
    "ckp-binary-L3": "ckp --data banana --L 3 --bits 1",
    "ckp-binary-L16": "ckp --data banana --L 16 --bits 2",
    "ckp-binary-large": "ckp --data banana --L 65535 --bits 8",
    "bonsai-binary-smallest": "bonsai --data banana --depth 0 --proj 1 --epochs 1,1,1",
    "bonsai-binary-large": "bonsai --data banana --depth 6 --proj 16 --bits 16 --epochs 1,1,1",
    "bonsai-multi-smallest": "bonsai --data digits-10 --depth 0 --proj 1 --epochs 1,1,1",
    "bonsai-multi-large": "bonsai --data digits-10 --depth 4 --proj 32 --bits 16 "
                          "--epochs 1,1,1",
    "protonn-binary-smallest": "protonn --data banana --proj 1 --prototypes 2 --epochs 1,1",
    "protonn-binary-int16": "protonn --data banana --proj 10 --prototypes 20 --bits 16 "
                            "--epochs 1,1",
    "protonn-binary-1-feature": "protonn --data {one} --proj 1 --prototypes 2 --epochs 1,1",
    "protonn-binary-784-features": "protonn --data mnist-2 --proj 1 --prototypes 2 "
                                   "--epochs 1,1",
    "protonn-binary-readme": "protonn --data digits --proj 10 --prototypes 20 --budget-bytes "
                             "2048 --bits 8",  # the README's `export digits.kb ... --target arm`
    "protonn-multi-smallest": "protonn --data digits-10 --proj 1 --prototypes 10 --epochs 1,1",
    "protonn-multi-large": "protonn --data digits-10 --proj 64 --prototypes 255 --bits 16 "
                           "--epochs 1,1",
    "assoc-binary-smallest": "assoc --data banana --P 1 --kt 1 --bits 1",
    "assoc-multi-smallest": "assoc --data digits-10 --P 1 --kt 1 --bits 1",
    "assoc-multi-large": "assoc --data digits-10 --P 8 --kt 30 --bits 8 --cap 32",
}
TARGETS = sorted(export.TARGETS)


def _cli(argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """id -> model file, each trained on first use."""
    folder = tmp_path_factory.mktemp("matrix")
    one = folder / "one.csv"  # one feature: a threshold on it is the label
    one.write_text("".join("%d,%d\n" % (i % 17, (i % 17) > 8) for i in range(200)))
    got = {}

    def get(key):
        if key not in got:
            path = folder / (key + ".kb")
            argv = ["train"] + MODELS[key].format(one=one).split() + ["--seed", "1",
                                                                      "--quiet", "-o", str(path)]
            code, _, err = _cli(argv)
            assert code == 0, err
            got[key] = path
        return got[key]
    return get


def _missing(target):
    try:
        export.compiler(target)
    except Exception as e:
        return str(e)
    return None


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("key", sorted(MODELS))
def test_every_model_exports_for_every_target(trained, tmp_path, key, target):
    need(_missing(target))
    model = trained(key)
    out = tmp_path / "m.h"
    code, stdout, err = _cli(["export", str(model), "-o", str(out), "--target", target,
                              "--name", "m"])
    if code == 0:
        text = out.read_text()
        assert "#ifndef KB_EXPORT_M_H" in text and "B flash" in stdout, stdout
        return
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1, err  # one sentence, never a compiler's log
    where = (target, export.TARGETS[target]["board"])  # avr, or its board: uno's EEPROM
    assert any("%s does not fit %s" % (model, w) in lines[0] for w in where), lines[0]
    assert target != "host", lines[0]  # this computer holds every model here
    assert not out.exists()
