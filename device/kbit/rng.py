"""xorshift16 (7, 9, 8), the one generator of kilobit (docs/contract.md, section 2).

Every value stays below 2^24 (`scale` splits the 16x16 product), so MicroPython never leaves its
small-int range and nothing is allocated. `step` and `scale` work on a bare state so that a
model can keep its generator as one int attribute.
"""


def step(x):
    """The state after x (1..65535); it is also the generator's output."""
    x ^= (x << 7) & 0xFFFF
    x ^= x >> 9
    return x ^ ((x << 8) & 0xFFFF)


def scale(x, n):
    """(x * n) >> 16 for x, n <= 65535, in two halves (each term < 2^24)."""
    return ((x >> 8) * n + (((x & 0xFF) * n) >> 8)) >> 8


def seed_state(seed):
    """Any non-negative integer seed -> a valid state (1..65535)."""
    if seed < 0:
        raise ValueError("seed must be >= 0")
    return seed % 0xFFFF + 1


class Rng:
    def __init__(self, state=1):
        if not 1 <= state <= 0xFFFF:
            raise ValueError("bad parameters: rng state must be in 1..65535")
        self.state = state

    def next(self):
        x = step(self.state)
        self.state = x
        return x

    def below(self, n):
        """Integer in [0, n), n <= 65535: the high half of next() * n, no division."""
        return scale(self.next(), n)
