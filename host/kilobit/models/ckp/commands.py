"""The ckp model's commands (kilobit.models.commands):

    kilobit train ckp --data banana --L 560 --A 0.1 --bits 6 -o m.kb
    kilobit train ckp --data letter-26 --L 400 -o m.kb     (26 classes: one-vs-rest)
    kilobit eval m.kb --data banana
"""
from kilobit.core.options import integer, real


def add_train_args(t):
    from kilobit.models.ckp.model import L_MAX
    from kilobit.models.commands import add_data_args, add_run_args
    add_data_args(t)
    t.add_argument("--L", type=integer(2, L_MAX), default=560,
                   help="budget in bits, labels included (default 560: 70 bytes); with K > 2 "
                        "classes, each class's learner has L bits")
    t.add_argument("--A", type=real(0.001, 65.535), default=0.1,
                   help="RBF kernel width on [0,1]-scaled data (0.001 .. 65.535)")
    t.add_argument("--bits", type=integer(1, 8), default=6, help="input precision P (1-8)")
    t.add_argument("--C", type=integer(1, 255), default=255, help="weight scale C (1-255)")
    add_run_args(t, "the train/test split's shuffle and the model's generator")


def train(a):
    from kilobit import data
    from kilobit.core import kbfile
    from kilobit.models import ovr
    from kilobit.models.ckp.model import CompressedKernelPerceptron, mem_bytes
    from kilobit.models.commands import fit_online
    from kilobit.models.learner import classes_text, train_split

    split, K = train_split(a)
    scaler, Xtr, Xte = data.scale(split, a.bits, floor=True)
    est = CompressedKernelPerceptron(L=a.L, A=a.A, bits=a.bits, C=a.C, seed=a.seed, classes=K)
    fit_online(est, Xtr, split.y_train, a.quiet, "train ckp")
    m = est.model_
    blob = m.to_bytes(scaler=kbfile.Extras.of_split(scaler, split))
    kbfile.write(a.output, blob)
    acc = est.score(Xte, split.y_test)
    n = 1 if K == 2 else K
    bits = [b for k in ovr.learners_of(m) for b in k.slot_bits()]
    print("ckp L=%d A=%g P=%d C=%d on %s (%s): %d train / %d test rows, M=%d"
          % (a.L, a.A, a.bits, a.C, split.name, classes_text(m), len(Xtr), len(Xte),
             Xtr.shape[1]))
    print("support vectors %d (B_max %d), mean precision %.2f bits, memory %d B, model file "
          "%d B -> %s" % (m.count, n * m.max_svs, sum(bits) / len(bits) if bits else 0,
                          n * mem_bytes(m.L), len(blob), a.output))
    print("test accuracy (integer model) %.4f" % acc)
    return 0


def evaluate(a, blob):
    from kilobit.models.ckp.model import CKPInt, quantize
    from kilobit.models.commands import eval_perceptron

    m, scaler = CKPInt.from_bytes(blob)
    return eval_perceptron(a, m, scaler, quantize)
