"""The ckp model's commands (kilobit.models.commands):

    kilobit train ckp --data banana --L 560 --A 0.1 --bits 6 -o m.kb
    kilobit eval m.kb --data banana
"""
from kilobit.core.options import integer, real


def add_train_args(t):
    from kilobit.models.ckp.model import L_MAX
    from kilobit.models.commands import add_data_args, add_run_args
    add_data_args(t, "binary")
    t.add_argument("--L", type=integer(2, L_MAX), default=560,
                   help="budget in bits, labels included (default 560: 70 bytes)")
    t.add_argument("--A", type=real(0.001, 65.535), default=0.1,
                   help="RBF kernel width on [0,1]-scaled data (0.001 .. 65.535)")
    t.add_argument("--bits", type=integer(1, 8), default=6, help="input precision P (1-8)")
    t.add_argument("--C", type=integer(1, 255), default=255, help="weight scale C (1-255)")
    add_run_args(t, "the train/test split's shuffle and the model's generator")


def train(a):
    from kilobit import data
    from kilobit.core import kbfile
    from kilobit.models.ckp.model import CompressedKernelPerceptron, mem_bytes
    from kilobit.models.commands import fit_online

    split = data.load(a.data, seed=a.seed, test=a.test)
    scaler, Xtr, Xte = data.scale(split, a.bits, floor=True)
    est = CompressedKernelPerceptron(L=a.L, A=a.A, bits=a.bits, C=a.C, seed=a.seed)
    fit_online(est, Xtr, split.y_train, a.quiet, "train ckp")
    m = est.model_
    blob = m.to_bytes(scaler=kbfile.Extras.of(scaler, split.labels))
    kbfile.write(a.output, blob)
    acc = est.score(Xte, split.y_test)
    print("ckp L=%d A=%g P=%d C=%d on %s: %d train / %d test rows, M=%d"
          % (a.L, a.A, a.bits, a.C, split.name, len(Xtr), len(Xte), Xtr.shape[1]))
    print("support vectors %d (B_max %d), mean precision %.2f bits, memory %d B, model file "
          "%d B -> %s" % (m.count, m.max_svs, m.slot_bits().mean() if m.count else 0,
                          mem_bytes(m.L), len(blob), a.output))
    print("test accuracy (integer model) %.4f" % acc)
    return 0


def evaluate(a, blob):
    from kilobit.models.ckp.model import CKPInt, quantize
    from kilobit.models.commands import eval_perceptron

    m, scaler = CKPInt.from_bytes(blob)
    return eval_perceptron(a, m, scaler, quantize)
