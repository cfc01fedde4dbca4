"""Windows of sensor readings on a board: what `kilobit record` runs there, and what a board's
own program can sample with before it hands a window to kbit.features.

    from kbit.sensor import Accel, Sampler
    from machine import I2C, Pin
    acc = Accel(I2C(0, sda=Pin(4), scl=Pin(5)), kind="lis3dh", hz=100)
    s = Sampler(acc, n=64, period_us=10000)        # 64 samples at 100 Hz
    s.fill()                                        # s.window: array("h") x0 y0 z0 x1 y1 z1 ...

A sensor has `axes` and `read(window, i)`, which writes one sample's `axes` int16 readings at
window[i], window[i+1], ...; every read is integer-only and allocates nothing, so a window is
sampled with no allocation (no collection can stall the pacing):

- Accel(i2c, addr=None, kind="mpu6050" | "adxl345" | "lis3dh", hz=100): x, y, z of an I2C
  accelerometer (machine.I2C or SoftI2C), its registers from the chips' datasheets (below);
- ADC(pin): one axis, machine.ADC(pin).read_u16() >> 1 (0..32767: 0 V reads 0);
- Stream(src=None, axes=1): readings sent as decimal text (spaces, commas or newlines between
  them) on src, the board's stdin by default: how the host feeds the virtual Pico.

Sensor errors (absent at its address, a wrong chip, a stream that ended) are SensorError; a
window that takes longer than its timeout is WindowTimeout, a SensorError too.
"""
from array import array

from .compat import const

try:
    from time import sleep_us, ticks_add, ticks_diff, ticks_us
except ImportError:  # CPython: the host runs this module in its tests
    import time as _time

    def ticks_us():
        return _time.monotonic_ns() // 1000

    def ticks_diff(a, b):
        return a - b

    def ticks_add(a, b):
        return a + b

    def sleep_us(us):
        _time.sleep(us / 1000000)


class SensorError(Exception):
    """The sensor is absent, is not what it was said to be, or stopped giving readings."""


class WindowTimeout(SensorError):
    """A window took longer than the Sampler's timeout."""


# An accelerometer's datasheet facts: (default address, ID register, ID value, first data
# register (for a read of 6 bytes), big-endian data, right shift of a reading, setup writes).
# MPU-6050 (InvenSense RM-MPU-6000A): WHO_AM_I 0x75 = 0x68; PWR_MGMT_1 0x6B := 0 wakes it (it
# powers up asleep); ACCEL_CONFIG 0x1C := 0 is +-2 g, 16384 LSB/g; ACCEL_XOUT_H 0x3B..0x40,
# x y z big-endian. ADXL345 (Analog Devices): DEVID 0x00 = 0xE5; BW_RATE 0x2C := rate code (set
# from hz); DATA_FORMAT 0x31 := 0 is +-2 g, 10 bits, 3.9 mg/LSB; POWER_CTL 0x2D := 0x08
# (Measure); DATAX0 0x32..0x37, little-endian. LIS3DH (ST): WHO_AM_I 0x0F = 0x33; CTRL_REG4
# 0x23 := 0x88 (block data update, high resolution, +-2 g); CTRL_REG1 0x20 := ODR << 4 | 0x07
# (x, y, z on); OUT_X_L 0x28..0x2D little-endian, 12 bits left-justified (>> 4: 1 mg/digit);
# bit 7 of the register address asks it to auto-increment over the 6 bytes.
KINDS = {
    "mpu6050": (0x68, 0x75, 0x68, 0x3B, True, 0, ((0x6B, 0x00), (0x1C, 0x00))),
    "adxl345": (0x53, 0x00, 0xE5, 0x32, False, 0, ((0x31, 0x00), (0x2D, 0x08))),
    "lis3dh": (0x18, 0x0F, 0x33, 0x28 | 0x80, False, 4, ((0x23, 0x88),)),
}
# ADXL345 BW_RATE codes 6..15 give 6.25 Hz .. 3200 Hz, doubling: the slowest at or above hz
# (in Hz x 100, to stay in integers); LIS3DH's CTRL_REG1 ODR codes 1..7 and 9 (HR mode).
_ADXL_RATE = const(0x2C)
_LIS_CTRL1 = const(0x20)
_LIS_ODR = ((1, 1), (2, 10), (3, 25), (4, 50), (5, 100), (6, 200), (7, 400), (9, 1344))
_I16 = const(0x8000)


def _adxl_code(hz):
    code, rate = 6, 625  # 6.25 Hz
    while rate < hz * 100 and code < 15:
        code += 1
        rate *= 2
    return code


def _lis_odr(hz):
    for code, rate in _LIS_ODR:
        if rate >= hz:
            return code
    return _LIS_ODR[-1][0]


class Accel:
    """x, y, z of an I2C accelerometer (KINDS: mpu6050, adxl345, lis3dh) at addr (default: the
    chip's usual address), set up to measure at least hz samples a second. SensorError when
    nothing answers at addr or the chip there has another ID."""

    axes = 3

    def __init__(self, i2c, addr=None, kind="mpu6050", hz=100):
        if kind not in KINDS:
            raise ValueError("unknown accelerometer %r (known: %s)"
                             % (kind, ", ".join(sorted(KINDS))))
        a0, id_reg, id_val, self._reg, self._big, self._shift, setup = KINDS[kind]
        self.i2c, self.kind = i2c, kind
        self.addr = a0 if addr is None else addr
        try:
            found = i2c.scan()
        except OSError as e:
            raise SensorError("the I2C bus does not work (%s): check SDA, SCL and pull-ups" % e)
        if self.addr not in found:
            raise SensorError("no %s at I2C address 0x%02x (devices found: %s)" % (
                kind, self.addr, ", ".join("0x%02x" % a for a in found) or "none"))
        self._raw = bytearray(6)
        one = memoryview(self._raw)[:1]
        i2c.readfrom_mem_into(self.addr, id_reg, one)
        if one[0] != id_val:
            raise SensorError("the device at I2C address 0x%02x is not a %s (ID register 0x%02x "
                              "reads 0x%02x, a %s's is 0x%02x)"
                              % (self.addr, kind, id_reg, one[0], kind, id_val))
        if kind == "adxl345":
            setup = ((_ADXL_RATE, _adxl_code(hz)),) + setup
        elif kind == "lis3dh":
            setup = setup + ((_LIS_CTRL1, _lis_odr(hz) << 4 | 0x07),)
        for reg, val in setup:
            one[0] = val
            i2c.writeto_mem(self.addr, reg, one)

    def read(self, window, i):
        r = self._raw
        self.i2c.readfrom_mem_into(self.addr, self._reg, r)
        k = 0
        while k < 3:
            if self._big:
                v = r[2 * k] << 8 | r[2 * k + 1]
            else:
                v = r[2 * k + 1] << 8 | r[2 * k]
            if v >= _I16:
                v -= 2 * _I16
            window[i + k] = v >> self._shift
            k += 1


class ADC:
    """One axis: an analog pin (a pin number or name for machine.Pin, or an object with
    read_u16()), read as read_u16() >> 1 so that every reading fits int16 and 0 V reads 0."""

    axes = 1

    def __init__(self, pin):
        if hasattr(pin, "read_u16"):
            self.adc = pin
        else:
            try:
                from machine import ADC as _ADC, Pin
            except ImportError:
                raise SensorError("this board has no machine.ADC (no machine module)")
            try:  # a Pin, not a number: what every port's ADC takes (ESP32's only that)
                self.adc = _ADC(Pin(pin))
            except (ValueError, TypeError, OSError) as e:
                raise SensorError("no ADC on pin %r (%s)" % (pin, e))

    def read(self, window, i):
        window[i] = self.adc.read_u16() >> 1


_END = const(0x65)  # "e": the sender has no more readings


class Stream:
    """`axes` readings a sample, sent as decimal integers (an optional "-") separated by
    anything else on src (an object with readinto, the board's stdin by default): what the host
    feeds a board that has no sensor of its own. An "e" ends the stream: the read that meets it
    raises SensorError. ValueError for a reading outside int16."""

    def __init__(self, src=None, axes=1):
        if src is None:
            import sys
            src = sys.stdin.buffer
        if type(axes) is not int or axes < 1:
            raise ValueError("axes must be a positive int")
        self.src, self.axes = src, axes
        self._into = src.readinto  # bound once: binding it per reading would allocate
        self._c = bytearray(1)
        self.count = 0  # readings taken so far

    def _int(self):
        c, into = self._c, self._into
        neg = seen = False
        v = 0
        while True:
            if not into(c):
                raise SensorError("the stream ended after %d readings" % self.count)
            b = c[0]
            if 0x30 <= b <= 0x39:
                v = v * 10 + b - 0x30
                seen = True
                if v > _I16:
                    raise ValueError("a reading outside int16 after %d readings" % self.count)
            elif seen:
                break
            elif b == 0x2D:
                neg = True
            elif b == _END:
                raise SensorError("the stream ended after %d readings" % self.count)
            else:
                neg = False
        if neg:
            v = -v
        elif v == _I16:
            raise ValueError("a reading outside int16 after %d readings" % self.count)
        self.count += 1
        return v

    def read(self, window, i):
        k = 0
        while k < self.axes:
            window[i + k] = self._int()
            k += 1


class Sampler:
    """A window of n samples of `sensor`, one every period_us microseconds (time.ticks_us
    pacing), in .window (array("h") of sensor.axes * n, interleaved). fill() samples it: no
    allocation, integers only; WindowTimeout when it takes longer than timeout_ms."""

    def __init__(self, sensor, n, period_us, timeout_ms=None):
        if type(n) is not int or n < 1 or type(period_us) is not int or period_us < 1:
            raise ValueError("n and period_us must be positive ints")
        self.sensor, self.n, self.period = sensor, n, period_us
        self.axes = sensor.axes
        self._read = sensor.read  # bound once: binding it per window would allocate
        self.window = array("h", bytes(2 * self.axes * n))
        if timeout_ms is None:  # twice the window's own time, and a second for a slow bus
            timeout_ms = (2 * n * period_us) // 1000 + 1000
        if not 1 <= timeout_ms <= 500000:  # ticks_diff spans 2**29 us
            raise ValueError("timeout_ms must be 1..500000")
        self.timeout_us = timeout_ms * 1000
        self.late = 0  # samples of the last window taken a whole period or more late
        self.took_us = 0  # how long the last window took

    def fill(self):
        w, read, step = self.window, self._read, self.axes
        period = self.period
        t0 = due = ticks_us()
        self.late = 0
        i = 0
        end = self.n * step
        while i < end:
            wait = ticks_diff(due, ticks_us())
            if wait > 0:
                sleep_us(wait)
            elif wait <= -period:
                self.late += 1
            read(w, i)
            i += step
            due = ticks_add(due, period)
            if ticks_diff(ticks_us(), t0) > self.timeout_us:
                raise WindowTimeout("a window of %d samples took over %d ms: %d samples came"
                                    % (self.n, self.timeout_us // 1000, i // step))
        self.took_us = ticks_diff(ticks_us(), t0)
        return w


def make(kind, axes=None, hz=100, addr=None, bus=0, sda=None, scl=None, pin=None, src=None):
    """The sensor `kilobit record --sensor` names: an Accel kind, "adc" (pin) or "stream"
    (axes). The I2C bus is machine.I2C(bus), with sda and scl pins when given."""
    if kind == "stream":
        return Stream(src, 1 if axes is None else axes)
    if kind == "adc":
        return ADC(pin)
    if kind not in KINDS:
        raise ValueError("unknown sensor %r" % (kind,))
    try:
        from machine import I2C, Pin
    except ImportError:
        raise SensorError("this board has no machine.I2C (no machine module)")
    try:
        if sda is None and scl is None:
            i2c = I2C(bus)
        else:
            i2c = I2C(bus, sda=Pin(sda), scl=Pin(scl))
    except (ValueError, TypeError, OSError) as e:
        raise SensorError("cannot open I2C bus %r (%s)" % (bus, e))
    return Accel(i2c, addr, kind, hz)


def record(sensor, n, period_us, count, timeout_ms=None, out=None):
    """Sample `count` windows and print each as one line, the protocol `kilobit record` reads:

        kbit-record AXES N                  once, first
        W K TOOK_US LATE V0 V1 ...          window K (from 0): AXES*N readings, interleaved
        kbit-record done                    after the last one
        kbit-record error MESSAGE           instead, when the sensor fails (then no more lines)

    sensor: a sensor, or a function that makes one (its errors are then reported as the
    sensor's). Sampling allocates nothing, so no collection can stall it (tests/test_record.py
    proves fill() under micropython.heap_lock); the lock is not taken here, or a sensor's error
    would become a bare MemoryError."""
    p = print if out is None else out
    try:
        if not hasattr(sensor, "read"):
            sensor = sensor()
        s = Sampler(sensor, n, period_us, timeout_ms)
        p("kbit-record", s.axes, n)
        k = 0
        while k < count:
            s.fill()
            p("W", k, s.took_us, s.late, *s.window)
            k += 1
    except (SensorError, ValueError) as e:
        p("kbit-record error %s" % e)
        return
    except OSError as e:  # the bus or the port under a sensor that worked at first
        p("kbit-record error reading the sensor failed (OSError %s)" % e)
        return
    p("kbit-record done")
