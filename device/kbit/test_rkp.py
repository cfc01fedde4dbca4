"""Tests of kbit, micropython-lib style: pytest runs them under CPython, and the same file runs
as a script on a board or the WebAssembly build (`node tools/mpwasm/run.mjs
device/kbit/test_rkp.py`). Plain asserts, no pytest import, values pinned by hand or by the
host reference (kilobit.models.rkp.RKPInt).
"""
import io

from kbit import kbfile
from kbit.rkp import RKP
from kbit.rng import Rng, scale, seed_state, step

P4 = (200, 150, 100, 50)  # a made-up table for hand-checked weights (C = 255)


def pair_model(table, C, k):
    """+1 at code 0 and -1 at code k (M=1, B=8): score(code 0) = C - w(k)."""
    m = RKP("laplace", 8, 1, 2, 0, C, table, any_table=True)
    m.store(0, bytearray((0,)), True)
    m.store(1, bytearray((k,)), False)
    m.count = 2
    return m


def test_rng_first_outputs():
    r = Rng(seed_state(0))
    assert r.state == 1
    out = [r.next() for _ in range(5)]
    assert out == [0x8181, 0x6021, 0xE999, 0x2E0B, 0xB59E]
    assert seed_state(65534) == 65535 and seed_state(65535) == 1
    x = 1
    for _ in range(5):
        x = step(x)
    assert x == 0xB59E


def test_rng_below_is_high_half_of_product():
    for x in (1, 255, 256, 0x8181, 0xFFFF):
        for n in (0, 1, 2, 62, 200, 255, 256, 65535):
            assert scale(x, n) == (x * n) >> 16
    r = Rng(1)
    assert [r.below(62) for _ in range(3)] == [(0x8181 * 62) >> 16, (0x6021 * 62) >> 16,
                                                 (0xE999 * 62) >> 16]


def test_rng_period():
    x, n = 1, 0
    while True:
        x = step(x)
        n += 1
        if x == 1:
            break
    assert n == 65535


def test_crc32():
    assert kbfile.crc32(b"123456789") == 0xCBF43926
    assert kbfile.crc32(b"") == 0
    assert kbfile.crc32(b"KBIT\x01") == 0x0E87107A


def test_weights_by_hand():
    # w(k): P[top bit], then (w * P[b] + C//2) // C for each lower set bit b
    want = {0: 255, 1: 200, 2: 150, 3: 118, 5: 78, 7: 46, 8: 50, 15: 9, 16: 0, 100: 0}
    for k in want:
        assert pair_model(P4, 255, k).score(bytearray(1)) == 255 - want[k], k


def test_weight_function():
    from kbit.rkp import weight
    assert [weight(k, P4, 255) for k in (0, 1, 3, 7, 15, 16)] == [255, 200, 118, 46, 9, 0]
    assert weight(1, (), 255) == 0 and weight(0, (), 99) == 99


def test_weight_stops_at_zero():
    # w(3) with P = [3, 1]: 1, then (1*3 + 127) // 255 = 0
    assert pair_model((3, 1), 255, 3).score(bytearray(1)) == 255
    assert pair_model((3, 1), 255, 2).score(bytearray(1)) == 254
    # no table: every offset > 0 weighs 0
    assert pair_model((), 255, 1).score(bytearray(1)) == 255


def test_score_is_relative_to_nearest():
    m = pair_model(P4, 255, 5)
    u = bytearray((3,))  # d = 3 and 2: d_nn = 2, so w(1) for +1 and w(0) for -1
    assert m.score(u) == 200 - 255
    assert m.predict(u) == 0
    assert m.predict(bytearray((1,))) == 1  # d = 1 and 4: 255 - w(3) > 0


def test_tie_predicts_negative():
    m = pair_model(P4, 255, 2)
    assert m.score(bytearray((1,))) == 0
    assert m.predict(bytearray((1,))) == 0


def test_bit_packing():
    # M=3, B=3: label then codes LSB first, vector i at bit i*10
    m = RKP("rbf", 3, 3, 2, 0, 255, (250,), any_table=True)
    m.store(0, bytearray((5, 0, 7)), True)
    # bits 0..9: label 1, 5 -> 101, 0 -> 000, 7 -> 111
    assert bytes(m.memory) == bytes((0b10001011, 0b00000011, 0))
    m.store(1, bytearray((1, 2, 3)), False)
    # bits 10..19: label 0, 1 -> 100, 2 -> 010, 3 -> 110
    assert bytes(m.memory) == bytes((0b10001011, 0b10001011, 0b00000110))
    m.store(0, bytearray((0, 0, 0)), False)
    assert bytes(m.memory) == bytes((0, 0b10001000, 0b00000110))
    assert len(RKP("laplace", 4, 2, 62, 0, 255).memory) == 70  # Banana: 62 x 9 bits


# laplace, B=2, M=2, T=3, A=0, C=255, seed 0: table and sequence from kilobit.models.rkp.RKPInt
SEQ_TABLE = (199, 155, 94, 35, 5)
SEQ = (  # u0 u1 y score mistake count
    (2, 1, 1, 0, 1, 1), (0, 0, 0, 255, 1, 2), (2, 0, 0, 56, 1, 3), (0, 0, 1, -289, 1, 3),
    (3, 0, 0, 99, 1, 3), (0, 3, 0, -99, 0, 3), (0, 1, 0, -99, 0, 3), (3, 0, 0, -299, 0, 3),
    (0, 1, 1, -99, 1, 3), (3, 1, 0, 155, 1, 3), (2, 1, 0, -255, 0, 3), (1, 2, 0, -99, 0, 3),
    (0, 0, 0, -21, 0, 3), (3, 3, 1, -333, 1, 3), (3, 3, 1, -21, 1, 3), (2, 1, 0, -299, 0, 3),
)
SEQ_MEMORY = b"\xce\x7c"
SEQ_STATE = 55715


def test_learning_sequence_full_budget():
    m = RKP("laplace", 2, 2, 3, 0, 255, SEQ_TABLE, seed_state(0))
    u = bytearray(2)
    for u0, u1, y, s, mistake, count in SEQ:
        u[0] = u0
        u[1] = u1
        assert m.learn(u, y) == s
        assert m.mistake == bool(mistake)
        assert m.count == count
    assert bytes(m.memory) == SEQ_MEMORY
    assert m.state == SEQ_STATE


def seq_model_file():
    m = RKP("laplace", 2, 2, 3, 0, 255, SEQ_TABLE, seed_state(0))
    f = io.BytesIO()
    m.save(f)
    return f.getvalue()


def test_save_load_roundtrip():
    data = seq_model_file()
    assert len(data) == 12 + 13 + 5 + 2 + 1 + 4
    m = RKP.load(data)
    assert (m.kernel, m.bits, m.dims, m.budget, m.width, m.C) == (0, 2, 2, 3, 0, 255)
    assert m.table == bytes(SEQ_TABLE) and m.state == 1 and m.count == 0
    m2 = RKP.load(io.BytesIO(data))  # a stream
    u = bytearray(2)
    for u0, u1, y, s, _, _ in SEQ:
        u[0] = u0
        u[1] = u1
        assert m.learn(u, y) == s == m2.learn(u, y)
    f = io.BytesIO()
    m.save(f)
    m3 = RKP.load(f.getvalue())
    assert m3.memory == m.memory and m3.count == 3 and m3.state == SEQ_STATE


class Trickle:
    """A stream handing out at most 3 bytes per readinto (a socket, a slow UART)."""

    def __init__(self, data):
        self.data = data
        self.pos = 0

    def readinto(self, buf):
        n = min(3, len(buf), len(self.data) - self.pos)
        for i in range(n):
            buf[i] = self.data[self.pos + i]
        self.pos += n
        return n


def test_load_from_short_reads():
    data = seq_model_file()
    m = RKP.load(Trickle(data))
    assert m.table == bytes(SEQ_TABLE) and len(m.memory) == 2
    assert "corrupt" in refusal(Trickle(data[:-1] + bytes((data[-1] ^ 1,))))


def test_codes_as_array_and_wrong_length():
    from array import array
    m = RKP("laplace", 2, 2, 3, 0, 255, SEQ_TABLE)
    m.learn(bytearray((1, 2)), 1)
    assert m.score(array("H", (1, 2))) == m.score(bytearray((1, 2))) == 255
    try:
        m.score(bytearray(3))
    except ValueError:
        pass
    else:
        raise AssertionError("3 codes for M=2 accepted")


def refusal(data):
    try:
        RKP.load(data)
    except kbfile.ModelFileError as e:
        return str(e)
    raise AssertionError("accepted a bad file")


def with_crc(body):
    c = kbfile.crc32(body)
    return bytes(body) + bytes((c & 0xFF, (c >> 8) & 0xFF, (c >> 16) & 0xFF, c >> 24))


def test_refusals():
    good = seq_model_file()
    body = bytearray(good[:-4])
    assert "not a kilobit model file" in refusal(b"PK\x03\x04" + good[4:])
    assert "not a kilobit model file" in refusal(b"KB")
    bad = bytearray(body)
    bad[4] = 2
    assert "unsupported" in refusal(with_crc(bad))
    bad = bytearray(body)
    bad[5] = 9
    assert "unknown model type" in refusal(with_crc(bad))
    assert "truncated" in refusal(good[:-1])
    assert "truncated" in refusal(good[:10])
    assert "truncated" in refusal(good + b"\x00")
    bad = bytearray(good)
    bad[30] ^= 1
    assert "corrupt" in refusal(bad)
    bad = bytearray(body)
    bad[12 + 1] = 9  # bits
    assert "bad parameters" in refusal(with_crc(bad))
    bad = bytearray(body)
    bad[12 + 13 + 1] = 250  # P[1] > P[0]
    assert "bad parameters" in refusal(with_crc(bad))
    bad = bytearray(body)
    bad[12 + 10] = 4  # count > budget
    assert "bad parameters" in refusal(with_crc(bad))


def test_load_clears_unused_bits():
    data = bytearray(seq_model_file()[:-4])
    data[12 + 13 + 5] = 0xFF  # memory of an empty model: only unused slots and padding
    data[12 + 13 + 6] = 0xFF
    m = RKP.load(with_crc(data))
    assert m.memory == bytearray(2)


def test_rejects_bad_constructor_parameters():
    for args in (("laplace", 0, 2, 3, 0, 255, ()), ("laplace", 8, 258, 3, 0, 255, ()),
                 ("rbf", 8, 16513, 3, 0, 255, ()), ("laplace", 4, 2, 0, 0, 255, ()),
                 ("laplace", 4, 2, 3, 17, 255, ()), ("laplace", 4, 2, 3, 0, 0, ()),
                 ("laplace", 4, 2, 3, 0, 100, (101,))):
        try:
            RKP(*args)
        except ValueError as e:
            assert "bad parameters" in str(e)
        else:
            raise AssertionError(args)


if __name__ == "__main__":
    n = 0
    for name, f in sorted(globals().items()):
        if name.startswith("test_"):
            f()
            n += 1
    print("kbit: %d tests passed" % n)
