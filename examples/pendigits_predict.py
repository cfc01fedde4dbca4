# Two host-trained predictors on the board, Bonsai (one shallow tree in a sparse projection)
# and ProtoNN (prototypes in a sparse projection), read handwritten digits from a pen's 16
# coordinates. Each model takes the features one at a time, as a sensor delivers them (a zero
# code need not be sent), then predicts.
#
#   kilobit train bonsai --data pendigits-10 --depth 1 --proj 6 --epochs 3,6,3 --seed 0 \
#       --quiet -o build/bonsai.kb
#   kilobit train protonn --data pendigits-10 --proj 8 --prototypes 20 --epochs 10,3 --seed 0 \
#       --quiet -o build/protonn.kb
#   kilobit deploy build/bonsai.kb --board rp2040 --port PORT     (kbit and bonsai.kb)
#   kilobit deploy build/protonn.kb --board rp2040 --port PORT    (protonn.kb)
#   mpremote connect PORT run examples/pendigits_predict.py
#
# (deploy verifies on the board every file it copies.)
#
# STREAM holds the first 20 inputs of pendigits-10's test split: the digit, then the 16 codes
# (8 bits: scaled with the model files' scaler, the same for both, and quantized;
# tests/test_examples.py checks that they are, and that the board prints what the host's integer
# references compute).
from kbit.bonsai import Bonsai
from kbit.protonn import ProtoNN

STREAM = bytes.fromhex(
    "06ffff92d73d94004a1f00b10da4520a5a01007b43b1a4e4ffffcdc39c837b408f00053de100768a7333003d8d61"
    "f383f1ffff06fff1c3ff5cac084d4f00e626977600570838c09469610000148d64ffbd9aff12c30700e66effffe6"
    "e992b84080002443bd61004de60088031c8d00fd48ffb3a1ff2ec00976e6699afddf8affe4fbff94ac3300000878"
    "ff45cf925f4300003b8f88ffe666fb00ffacb3ff3de1007617009205ec57e9c009ffcd8ac540f6c8fffdbdc3736c"
    "3300000200a63dfba1ff8d9c434a31009703ff0f0476ff03b10054a44aff6cc0d7a6769f000526bb3b71690f0300"
    "00712ee697ffffe601007376aec5eeffffecbdec7bf33bbd000200c048ffa6ee6e971f4a1f088f00ff0808bbe936"
    "da805f7600003d8aa1ffff4dc808d7e600e9838ffb315c006e66ffc09fff072edf00ec80f6ffffb6c8788a54455a"
    "000521fb14a6695f4a00084a00b373eeffff")

models = []
for cls, path in ((Bonsai, "bonsai.kb"), (ProtoNN, "protonn.kb")):
    with open(path, "rb") as f:
        models.append(cls.load(f))
dims = models[0].dims
step = 1 + dims
n = len(STREAM) // step
right = [0] * len(models)
for i in range(n):
    digit = STREAM[i * step]
    preds = []
    for k, m in enumerate(models):
        for j in range(dims):
            c = STREAM[i * step + 1 + j]
            if c:
                m.update(j, c)
        p = m.predict()
        preds.append(p)
        right[k] += p == digit
    print("%2d digit %d: bonsai %d, protonn %d" % (i, digit, preds[0], preds[1]))
print("right: bonsai %d/%d, protonn %d/%d" % (right[0], n, right[1], n))
