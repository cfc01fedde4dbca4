"""The one pseudo-random generator of kilobit (docs/contract.md, section 2).

16-bit xorshift (7, 9, 8): cheap on an 8-bit AVR (shifts and xors only) and easy to reproduce
bit for bit in Python, MicroPython and C.
"""


def seed_state(seed):
    """Map any non-negative integer seed to a valid state (1..65535)."""
    if seed < 0:
        raise ValueError("seed must be >= 0")
    return seed % 0xFFFF + 1


class Rng:
    def __init__(self, state):
        if not 1 <= state <= 0xFFFF:
            raise ValueError("rng state must be in 1..65535, got %r" % state)
        self.state = state

    def next(self):
        x = self.state
        x ^= (x << 7) & 0xFFFF
        x ^= x >> 9
        x ^= (x << 8) & 0xFFFF
        self.state = x
        return x

    def below(self, n):
        """Uniform-ish integer in [0, n): the high half of a 16x16->32 product, no division."""
        return (self.next() * n) >> 16
