# Class-incremental learning on the board: a binary associative memory that starts empty,
# learns the pen digits 0, 1 and 2 from four examples each, then meets a digit it has never
# seen, 3, and learns it as a new class from four examples more. Nothing is trained on the host:
# the memory learns on the board (predict, then learn), and saves itself as a model file that
# `kilobit inspect` reads.
#
#   mpremote connect PORT run examples/assoc_new_class.py + cp :assoc-learnt.kb build/
#   (kbit on the board first: kilobit deploy MODEL.kb --board rp2040 --port PORT)
#
# STREAM holds 30 records of pendigits-10's test split: learn (1) or query (0), the digit, then
# its 16 values as 4-bit int8 (-8 .. 7: the features min-max scaled on the training split,
# quantized, minus 8; tests/test_examples.py makes them with kilobit.models.assoc.to_int8 and
# checks that the board prints what the host's integer reference computes).
from array import array

from kbit.assoc import Assoc

STREAM = bytes.fromhex(
    "0100fd06f800f8fa01f807fc07030207fb040101f800fc03020607070504020000fc01f80102f802fc0702070102"
    "fcfdfbf801f807f9010007030307fc06f8fff9f801f807fd07040101f8ffff03040707070704070007fc04f80102"
    "f804fc070207ff01fafdfaf801f807f80100fb03f8fcfff807fa07010207fa07f8020101f8030006070707050402"
    "02fefffbfef80102f803fc0702070001fbfcf9f800f907f90100fc06f800fbf804fa07010407fb05f8fd0101f8fc"
    "fb00000405070707040301fefff80102f906ff07040402fffdfbf8f800f807f800000007fa04f8fdfcf803f907fe"
    "070500060001f80100040707070403ff00fbfcf807f90002f905ff070103fefef8faf8f900f907f800000506fe07"
    "f803f8fcfff807fa070105070001fb030005070705050102fffefbfbf8f80002fc0600070202fefdf8fbfffb06f8"
    "07fd0103fd05fc0705070504050007fd03f9f8f80103f90601070706030306fe07f900f8f8f90103fc0700070305"
    "000104fe07fa01f8f8f80103fb04fe0706070203040007fc02f9f8f800000007fb05f8fffbf903f807fd0603ff07"
    "0001fc02ff07ff06ffff00f8f8f800f807f90002f804fa070007ff03fdfefdf902f807f80003fa05fc070506ff02"
    "fc0007fe03faf8f80000ff07fb03f8fdf8f803f907fe0704ff060001fc07f800fe07ff0600fdfcf8fdf807f80002"
    "fd03000705050400fffbf8f800fa07fa0003f807ff0707050001020107fc01f8f8f8")

m = Assoc(0, 4, 4, 4, 4, 4)  # I-I, 4 bits, P = 4 subspaces of d = 4 values, 4 class slots, k~ = 4
u = array("b", bytes(m.T))
step = 2 + m.T
for i in range(len(STREAM) // step):
    learn, digit = STREAM[i * step], STREAM[i * step + 1]
    for j in range(m.T):
        v = STREAM[i * step + 2 + j]
        u[j] = v - 256 if v > 127 else v
    if learn:
        pred = m.learn(u, digit)
        print("%2d learn %d: predicted %s, %d classes" % (i, digit, pred, m.nc))
    else:
        pred = m.predict(u)
        print("%2d query %d: %s" % (i, digit, "right" if pred == digit else "predicted %d" % pred))
with open("assoc-learnt.kb", "wb") as f:
    m.save(f)
print("saved assoc-learnt.kb: %d classes, labels %s" % (m.nc, " ".join(str(m.labels[k]) for k in
                                                                      range(m.nc))))
