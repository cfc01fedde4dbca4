"""`kilobit record` and kbit.sensor (issue 29 item 4).

What is proven here:
- against the emulated Pico served as a board (`kilobit board virtual --board rp2040`): the
  windows the host feeds the stream sensor come back as CSV rows, reading for reading, label
  last, one header; --append adds another label's windows; `kilobit train rkp` takes the file;
- each accelerometer (mpu6050, adxl345, lis3dh) through machine.I2C, and an ADC pin, on that
  board with a stand-in `machine` module (FAKE below: the chips' register maps as the test reads
  the datasheets, a chip giving zeros until it is set up as its datasheet says, the LIS3DH
  without auto-increment unless asked): the host gets each sample's x, y, z exactly;
- every bad case ends `kilobit: error: ...`, exit 2, the output file untouched: a missing port, a
  port where no board answers, a sensor absent (nothing at the address, another chip there, no
  machine module), a window that does not arrive (the feed ran out, the board's window timeout,
  a sensor that hangs: the host's timeout interrupts the board, which records again after),
  a bad label, window, rate, axes, feed, output or --append target;
- kbit.sensor under CPython: the stream's text, int16 limits, the end marker, pacing, the
  window timeout; and on the emulated Pico, Sampler.fill() of a stream, an ADC and an
  accelerometer runs under micropython.heap_lock (allocation-free).
"""
import csv
import os

import numpy as np
import pytest

from conftest import need
from kilobit import record as rec
from kilobit.cli import main
from kilobit.runtimes.micropython import rp2040_sim
from test_boards import kilobit, mpremote, need_virtual

#: machine, faked for these tests, for the emulated Pico (no float) and CPython alike. Its
#: register facts are typed here from the datasheets, apart from kbit.sensor's own table.
FAKE = r'''
CHIPS = {  # kind: address, ID register, ID, first data register, big-endian, left shift
    "mpu6050": (0x68, 0x75, 0x68, 0x3B, True, 0),
    "adxl345": (0x53, 0x00, 0xE5, 0x32, False, 0),
    "lis3dh": (0x18, 0x0F, 0x33, 0x28, False, 4),
}
RESET = {"mpu6050": {0x6B: 0x40}, "adxl345": {0x2D: 0x00}, "lis3dh": {0x20: 0x07}}


def sample(n):
    return 7 * n - 300, -5 * n - 1, 1000 + 3 * n


def awake(kind, regs):
    if kind == "mpu6050":  # PWR_MGMT_1's SLEEP bit clear
        return not regs[0x6B] & 0x40
    if kind == "adxl345":  # POWER_CTL's Measure bit
        return regs[0x2D] & 0x08
    return regs[0x20] >> 4 and regs[0x20] & 7 == 7  # CTRL_REG1: a data rate, x y z on


class Pin:
    def __init__(self, p):
        self.p = p


class I2C:
    """mode: "KIND", "KIND wrong" (another chip at KIND's address), "KIND hang" (data reads
    never return), "KIND slow" (each data read takes 300 ms; MicroPython only), "KIND unplug"
    (the 5th data read fails) or "none";
    read from fake_i2c.txt when not given."""

    def __init__(self, bus, sda=None, scl=None, freq=400000, mode=None):
        if mode is None:
            with open("fake_i2c.txt") as f:
                mode = f.read()
        words = mode.split()
        self.kind = words[0]
        self.how = words[1] if len(words) > 1 else ""
        self.n = 0
        if self.kind in CHIPS:
            self.chip = CHIPS[self.kind]
            self.regs = dict(RESET[self.kind])

    def scan(self):
        return [self.chip[0]] if self.kind in CHIPS else []

    def writeto_mem(self, addr, reg, buf):
        if self.kind not in CHIPS or addr != self.chip[0]:
            raise OSError(5)
        self.regs[reg] = buf[0]

    def readfrom_mem_into(self, addr, reg, buf):
        a, id_reg, id_val, data, big, shift = self.chip
        if addr != a:
            raise OSError(5)
        if reg == id_reg and len(buf) == 1:
            buf[0] = 0x00 if self.how == "wrong" else id_val
            return
        if self.kind == "lis3dh":  # auto-increment only when bit 7 of the address asks
            step = reg >> 7
            reg &= 0x7F
        else:
            step = 1
        if reg != data or len(buf) != 6:
            raise OSError(5)
        while self.how == "hang":
            pass
        if self.how == "unplug" and self.n == 4:
            raise OSError(5)
        if self.how == "slow":
            import time
            time.sleep_ms(300)
        xyz = sample(self.n) if awake(self.kind, self.regs) else (0, 0, 0)
        self.n += 1
        raw = bytearray(6)
        for k in range(3):
            v = (xyz[k] << shift) & 0xFFFF
            raw[2 * k], raw[2 * k + 1] = (v >> 8, v & 0xFF) if big else (v & 0xFF, v >> 8)
        for i in range(6):
            buf[i] = raw[i * step]


class ADC:
    def __init__(self, pin):
        self.k = 0

    def read_u16(self):
        self.k += 1
        return (self.k * 4099 + 17) & 0xFFFF
'''


def fake():
    ns = {}
    exec(FAKE, ns)
    return ns


def expected_xyz(count, n):
    s = fake()["sample"]
    return [[v for i in range(n) for v in s(k * n + i)] for k in range(count)]


def rows(path):
    with open(path) as f:
        r = list(csv.reader(f))
    return r[0], [[int(v) for v in x[:-1]] for x in r[1:]], [x[-1] for x in r[1:]]


def feed_file(path, samples, axes=3, seed=0):
    x = np.random.default_rng(seed).integers(-32768, 32768, size=(samples, axes))
    x[0] = -32768
    x[1] = 32767
    with open(path, "w") as f:
        f.write(",".join("x%d" % a for a in range(axes)) + "\n")
        f.writelines(",".join(str(int(v)) for v in r) + "\n" for r in x)
    return x


@pytest.fixture(scope="module")
def pico():
    need_virtual()
    need(rp2040_sim.missing())
    from kilobit.runtimes.boards.virtual import VirtualBoard
    vb = VirtualBoard(board="rp2040").start()
    try:
        yield vb
    finally:
        vb.close()


@pytest.fixture
def machine(pico, tmp_path):
    """The stand-in machine module on the board; set(mode) says what its I2C bus holds."""
    path = tmp_path / "machine.py"
    path.write_text(FAKE)
    assert mpremote(pico.port, "cp", str(path), ":machine.py")[0] == 0

    def set_mode(mode):
        m = tmp_path / "fake_i2c.txt"
        m.write_text(mode)
        assert mpremote(pico.port, "cp", str(m), ":fake_i2c.txt")[0] == 0
    try:
        yield set_mode
    finally:
        mpremote(pico.port, "rm", ":machine.py", "+", "rm", ":fake_i2c.txt")


def run(capsys, *args):
    code = main(["record"] + [str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def failed(capsys, *args, match):
    code, out, err = run(capsys, *args)
    assert code == 2, (out, err)
    assert err.startswith("kilobit: error: ") and "Traceback" not in err, err
    assert match in err, err
    return err


# --- the virtual Pico, good paths -------------------------------------------------------------

def test_streamed_windows_come_back_as_rows_and_train(pico, tmp_path, capsys):
    out = tmp_path / "w.csv"
    n = 16
    walk = feed_file(tmp_path / "walk.csv", 10 * n + 5, seed=1)  # 5 samples short of 11
    idle = feed_file(tmp_path / "idle.csv", 10 * n, seed=2) // 64
    code, said, err = run(capsys, "--port", pico.port, "--sensor", "stream", "--feed",
                          tmp_path / "walk.csv", "--window", n, "--rate", 200, "--label",
                          "walk", "-o", out)
    assert code == 0, err
    assert "10 windows of 3 x 16 readings labelled walk" in said
    header, got, labels = rows(out)
    assert header == ["a%d_%d" % (a, i) for i in range(n) for a in range(3)] + ["label"]
    assert got == walk[:10 * n].reshape(10, 3 * n).tolist() and labels == ["walk"] * 10
    with open(tmp_path / "idle.csv", "w") as f:  # no header this time, tabs
        f.writelines("\t".join(str(int(v)) for v in r) + "\n" for r in idle)
    code, said, err = run(capsys, "--port", pico.port, "--sensor", "stream", "--feed",
                          tmp_path / "idle.csv", "--window", n, "--rate", 200, "--label",
                          "idle", "--windows", 6, "--append", "-o", out)
    assert code == 0 and "(appended)" in said, err
    header2, got, labels = rows(out)
    assert header2 == header and labels == ["walk"] * 10 + ["idle"] * 6
    assert got[10:] == idle[:6 * n].reshape(6, 3 * n).tolist()
    with open(out) as f:
        assert f.read().count("a0_0") == 1
    p = kilobit("train", "rkp", "--data", str(out), "--quiet", "-o", str(tmp_path / "m.kb"))
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "m.kb").stat().st_size > 0


@pytest.mark.parametrize("kind", ["mpu6050", "adxl345", "lis3dh"])
def test_each_accelerometer_through_machine_i2c(pico, machine, tmp_path, capsys, kind):
    machine(kind)
    out = tmp_path / "a.csv"
    code, said, err = run(capsys, "--port", pico.port, "--sensor", kind, "--window", 8,
                          "--rate", 400, "--label", "shake", "--windows", 3, "-o", out)
    assert code == 0, err
    _, got, labels = rows(out)
    assert got == expected_xyz(3, 8) and labels == ["shake"] * 3


def test_an_adc_pin(pico, machine, tmp_path, capsys):
    out = tmp_path / "adc.csv"
    code, _, err = run(capsys, "--port", pico.port, "--sensor", "adc:26", "--window", 5,
                       "--rate", 1000, "--label", "7", "--windows", 2, "-o", out)
    assert code == 0, err
    header, got, labels = rows(out)
    want = [((k * 4099 + 17) & 0xFFFF) >> 1 for k in range(1, 11)]
    assert header[:2] == ["a0_0", "a0_1"] and got == [want[:5], want[5:]]
    assert labels == ["7", "7"]


# --- the virtual Pico, bad cases ----------------------------------------------------------------

def test_an_absent_sensor(pico, machine, tmp_path, capsys):
    out = tmp_path / "x.csv"
    args = ("--port", pico.port, "--window", 4, "--rate", 100, "--label", "a", "--windows", 1,
            "-o", out)
    machine("none")
    failed(capsys, "--sensor", "lis3dh", *args,
           match="--sensor lis3dh on %s: no lis3dh at I2C address 0x18 (devices found: none)"
                 % pico.port)
    machine("adxl345")  # a chip, at another address than --addr's
    failed(capsys, "--sensor", "adxl345", "--addr", "0x1d", *args,
           match="no adxl345 at I2C address 0x1d (devices found: 0x53)")
    machine("mpu6050 wrong")
    failed(capsys, "--sensor", "mpu6050", *args,
           match="the device at I2C address 0x68 is not a mpu6050 (ID register 0x75 reads 0x00")
    assert not out.exists()


def test_no_machine_module(pico, tmp_path, capsys):
    failed(capsys, "--port", pico.port, "--sensor", "mpu6050", "--window", 4, "--rate", 100,
           "--label", "a", "--windows", 1, "-o", tmp_path / "x.csv",
           match="no machine.I2C (no machine module)")


def test_windows_that_do_not_arrive(pico, tmp_path, capsys):
    out = tmp_path / "keep.csv"
    out.write_text("kept\n")
    feed_file(tmp_path / "f.csv", 20)
    failed(capsys, "--port", pico.port, "--sensor", "stream", "--feed", tmp_path / "f.csv",
           "--window", 8, "--rate", 100, "--label", "a", "--windows", 4, "-o", out,
           match="window 3 of 4 did not arrive: the stream ended after 60 readings (the feed "
                 "holds 20 samples: 2 whole windows of 8)")
    assert out.read_text() == "kept\n"


def test_a_slow_sensor_times_out_one_that_hangs_is_interrupted_then_the_board_records_again(
        pico, machine, tmp_path, capsys, monkeypatch):
    machine("mpu6050 slow")  # the board's own window timeout: 300 ms a sample, 500 allowed
    failed(capsys, "--port", pico.port, "--sensor", "mpu6050", "--window", 4, "--rate", 100,
           "--timeout", 0.5, "--label", "a", "--windows", 2, "-o", tmp_path / "x.csv",
           match="window 1 of 2 did not arrive: a window of 4 samples took over 500 ms: "
                 "2 samples came")
    monkeypatch.setattr(rec, "ANSWER_S", 3.0)
    machine("mpu6050 hang")
    failed(capsys, "--port", pico.port, "--sensor", "mpu6050", "--window", 4, "--rate", 100,
           "--timeout", 1, "--label", "a", "--windows", 2, "-o", tmp_path / "x.csv",
           match="window 1 of 2 did not arrive within 4 s")
    assert not (tmp_path / "x.csv").exists()
    machine("mpu6050")
    code, _, err = run(capsys, "--port", pico.port, "--sensor", "mpu6050", "--window", 4,
                       "--rate", 100, "--label", "a", "--windows", 2, "-o", tmp_path / "x.csv")
    assert code == 0, err
    assert rows(tmp_path / "x.csv")[1] == expected_xyz(2, 4)


# --- bad cases the host sees before or without a board --------------------------------------------

def test_a_missing_port_and_a_board_that_does_not_answer(tmp_path, capsys, monkeypatch):
    feed_file(tmp_path / "f.csv", 8)
    args = ("--sensor", "stream", "--feed", tmp_path / "f.csv", "--window", 4, "--rate", 50,
            "--label", "a", "-o", tmp_path / "x.csv")
    failed(capsys, "--port", tmp_path / "ttyNOPE", *args,
           match="no serial port %s" % (tmp_path / "ttyNOPE"))
    monkeypatch.setattr(rec, "ANSWER_S", 1.5)
    master, slave = os.openpty()  # a port with nothing behind it
    try:
        failed(capsys, "--port", os.ttyname(slave), *args,
               match="does not answer: no MicroPython raw REPL prompt within 1.5 s")
    finally:
        os.close(master)
        os.close(slave)
    assert not (tmp_path / "x.csv").exists()


def test_bad_values_are_refused_before_the_board(tmp_path, capsys):
    feed = tmp_path / "f.csv"
    feed_file(feed, 8)
    out = tmp_path / "x.csv"
    base = {"--port": "/nonexistent", "--sensor": "stream", "--feed": feed, "--window": 4,
            "--rate": 50, "--label": "a", "-o": out}

    def bad(match, drop=(), **change):
        args = dict(base, **{"-o" if k == "o" else "--" + k: v for k, v in change.items()})
        flat = [str(x) for k, v in args.items() if k not in drop and v is not None
                for x in ((k,) if v is True else (k, v))]
        failed(capsys, *flat, match=match)

    for label in ("x" * 33, "caf\u00e9", "nan", " walk", "", "a\tb"):
        bad("label %r: " % label if label != "nan" else "must be finite", label=label)
    bad("argument --window: 0 is out of range", window=0)
    bad("argument --window", window=rec.WINDOW_MAX + 1)
    bad("argument --rate: 0 is out of range", rate=0)
    bad("argument --rate: 'fast' is not a number", rate="fast")
    bad("argument --axes", axes=0)
    bad("--sensor 'gyro'", sensor="gyro")
    bad("--sensor 'adc:'", sensor="adc:")
    bad("--sensor mpu6050 gives 3 axes, not --axes 2", sensor="mpu6050", axes=2, feed=None)
    bad("--sensor adc:26 gives 1 axis, not --axes 3", sensor="adc:26", axes=3, feed=None)
    bad("drop --feed", sensor="mpu6050", windows=1)
    bad("give one", feed=None)
    bad("--windows K", sensor="lis3dh", feed=None)
    bad("argument --addr: 0x80 is out of range", sensor="lis3dh", feed=None, windows=1, addr="0x80")
    bad("are for an I2C accelerometer", addr="0x18")
    bad("give both --sda and --scl", sensor="mpu6050", feed=None, windows=1, sda=4)
    bad("1 column a row, --axes is 3", axes=3, feed=_write(tmp_path, "one.csv", "1\n2\n"))
    bad("data row 2, column 1: 40000 is not an int16",
        feed=_write(tmp_path, "big.csv", "1,2\n40000,3\n"))
    bad("data row 1, column 2: 2.5 is not an int16", feed=_write(tmp_path, "frac.csv", "1,2.5\n"))
    bad("fewer than one window of 4", feed=_write(tmp_path, "short.csv", "1\n2\n"))
    bad("at most %d readings" % rec.READINGS_MAX, window=1024, axes=5, windows=1,
        feed=_write(tmp_path, "five.csv", "1,2,3,4,5\n"))
    bad("--timeout 1 s is shorter than a window", rate=2, timeout=1)
    bad("it is also an input of this command", o=feed)
    bad("it is a directory", o=tmp_path)
    assert not out.exists()


def test_append_refuses_other_columns(tmp_path, capsys):
    feed = tmp_path / "f.csv"
    feed_file(feed, 8, axes=2)
    base = ("--port", "/nonexistent", "--sensor", "stream", "--feed", feed, "--window", 4,
            "--rate", 50, "--label", "a", "--append", "-o")
    other = _write(tmp_path, "other.csv", "x,y,label\n1,2,a\n")
    failed(capsys, *base, other, match="its columns (x,y,label) are not these windows' "
                                       "(a0_0,a1_0,a0_1,...,label: 9)")
    plain = _write(tmp_path, "plain.csv", "1,2,3,4,5,6,7,a\n")  # 7 readings, no header
    failed(capsys, *base, plain, match="its rows have 8 columns, these windows' 9")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    failed(capsys, *base, fifo, match="cannot append to %s: not a regular file" % fifo)
    assert other.read_text() == "x,y,label\n1,2,a\n" and plain.read_text() == "1,2,3,4,5,6,7,a\n"


def _write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text)
    return p


# --- kbit.sensor itself ------------------------------------------------------------------------

def test_stream_reads_decimal_text_and_stops_at_its_end():
    import io

    from kbit.sensor import SensorError, Stream
    w = [0] * 6
    s = Stream(io.BytesIO(b"  12,-3\n-32768 x32767;+0 -5 e 9"), axes=2)
    s.read(w, 0)
    s.read(w, 2)
    s.read(w, 4)
    assert w == [12, -3, -32768, 32767, 0, -5] and s.count == 6
    with pytest.raises(SensorError, match="the stream ended after 6 readings"):
        s.read(w, 0)
    with pytest.raises(SensorError, match="ended after 1 readings"):
        Stream(io.BytesIO(b"7 8"), axes=2).read(w, 0)  # no separator after 8, then no data
    for text in (b"32768 ", b"-32769 ", b"999999 "):
        with pytest.raises(ValueError, match="outside int16"):
            Stream(io.BytesIO(text)).read(w, 0)
    with pytest.raises(ValueError):
        Stream(io.BytesIO(b""), axes=0)


def test_sampler_paces_and_times_out():
    import io
    import time

    from kbit.sensor import Sampler, Stream, WindowTimeout
    s = Sampler(Stream(io.BytesIO(b"1 2 3 4 5 6 7 8 9 10 "), axes=2), 5, 3000)
    t0 = time.monotonic()
    assert list(s.fill()) == list(range(1, 11))
    assert s.took_us >= 4 * 3000 and time.monotonic() - t0 >= 0.012 and s.late == 0

    class Slow:
        axes = 1

        def read(self, w, i):
            time.sleep(0.02)
            w[i] = i

    with pytest.raises(WindowTimeout, match="a window of 50 samples took over 30 ms: 2 samples"):
        Sampler(Slow(), 50, 1000, timeout_ms=30).fill()
    late = Sampler(Slow(), 3, 1000)
    late.fill()
    assert late.late == 2  # each read takes 20 periods: the 2nd and 3rd come late
    for bad in ((0, 1000), (4, 0), (4, -5)):
        with pytest.raises(ValueError):
            Sampler(Slow(), *bad)


@pytest.mark.parametrize("kind", ["mpu6050", "adxl345", "lis3dh"])
def test_accel_decodes_each_chip_and_refuses_another(kind):
    from kbit.sensor import Accel, Sampler, SensorError
    ns = fake()
    a = Accel(ns["I2C"](0, mode=kind), kind=kind, hz=100)
    s = Sampler(a, 4, 100)
    assert list(s.fill()) == expected_xyz(1, 4)[0]
    with pytest.raises(SensorError, match="is not a %s" % kind):
        Accel(ns["I2C"](0, mode=kind + " wrong"), kind=kind)
    with pytest.raises(SensorError, match="devices found: none"):
        Accel(ns["I2C"](0, mode="none"), kind=kind)
    with pytest.raises(ValueError, match="unknown accelerometer"):
        Accel(ns["I2C"](0, mode=kind), kind="bmi160")


def test_record_prints_the_protocol_and_reports_a_sensor_that_fails():
    from kbit.sensor import make, record
    ns = fake()
    lines = []
    record(lambda: make("lis3dh"), 2, 100, 3, out=lambda *a: lines.append(" ".join(map(str, a))))
    assert lines == ["kbit-record error this board has no machine.I2C (no machine module)"]
    lines = []
    from kbit.sensor import Accel
    record(Accel(ns["I2C"](0, mode="adxl345 unplug"), kind="adxl345"), 2, 100, 3,
           out=lambda *a: lines.append(" ".join(map(str, a))))
    w = expected_xyz(2, 2)
    assert [ln.split()[:2] + ln.split()[4:] for ln in lines[1:3]] == [
        ["W", str(k)] + [str(v) for v in w[k]] for k in range(2)]
    assert lines[0] == "kbit-record 3 2" and lines[3:] == [
        "kbit-record error reading the sensor failed (OSError 5)"]
    lines = []
    record(Accel(ns["I2C"](0, mode="mpu6050"), kind="mpu6050"), 1, 100, 2,
           out=lambda *a: lines.append(" ".join(map(str, a))))
    assert len(lines) == 4 and lines[-1] == "kbit-record done"


def test_sampling_allocates_nothing_on_the_emulated_pico(tmp_path):
    """Sampler.fill() of a stream (the board's stdin), an ADC and an accelerometer under
    micropython.heap_lock on the emulated Pico."""
    need(rp2040_sim.missing())
    script = tmp_path / "lock.py"
    script.write_text(
        "import gc, micropython\n"
        "from kbit.sensor import Accel, ADC, Sampler, Stream\n"
        "class Bus:\n"
        "    def scan(self):\n"
        "        return [0x68]\n"
        "    def writeto_mem(self, a, r, b):\n"
        "        pass\n"
        "    def readfrom_mem_into(self, a, r, b):\n"
        "        b[0] = 0x68 if r == 0x75 else 0xFF\n"
        "        if len(b) == 6:\n"
        "            b[1] = 0xFE\n"
        "class Pin:\n"
        "    k = 0\n"
        "    def read_u16(self):\n"
        "        Pin.k += 4000\n"
        "        return Pin.k\n"
        "for s in (Sampler(Stream(axes=3), 3, 50), Sampler(ADC(Pin()), 4, 50),\n"
        "          Sampler(Accel(Bus()), 2, 50)):\n"
        "    gc.collect()\n"
        "    micropython.heap_lock()\n"
        "    s.fill()\n"
        "    micropython.heap_unlock()\n"
        "    print(list(s.window))\n")
    p = rp2040_sim.run([str(script)], mpy=False, timeout=120,
                       input="1 -2 3\n4,5,6 7 8 -32768\n")
    assert p.returncode == 0, p.stderr
    assert p.stdout.split("\n")[:3] == [
        "[1, -2, 3, 4, 5, 6, 7, 8, -32768]", "[2000, 4000, 6000, 8000]",
        "[-2, 0, 0, -2, 0, 0]"]
