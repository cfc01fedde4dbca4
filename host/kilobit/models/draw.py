"""The draw of a golden case's parameters from a seed, with some of them given (issue 24):

    d = Draw(seed, given)                 # given: {name: value} from the command line
    steps = d.integers("steps", 80, 400)  # the given value, or the draw
    kernel = d.choice("kernel", ("laplace", "rbf"))

Every parameter is drawn in the same order from the same generator whether it is given or not,
and a given one then takes the place of its draw: so the parameters not given are drawn exactly
as without the given ones (`golden make rkp --seed 1 --steps 231`, 231 being seed 1's draw,
makes the same case as `--seed 1`), and a draw that depends on a given one (a budget a third of
the steps) sees the given value. A draw that rejects a combination and draws again (until())
takes the given values into every try, and gives up with a ValueError when they leave no valid
case; there a given value may make an earlier try valid, so only what is drawn before the tries
(the steps) is sure to stay as without it.
"""
import numpy as np

#: tries before a rejecting draw gives up on the given parameters
TRIES = 10000


class Draw:
    def __init__(self, seed, given=None):
        self.g = np.random.default_rng(seed)
        self.given = dict(given or {})

    def take(self, name, drawn):
        """The given value of `name`, else `drawn` (drawn by the caller in its turn)."""
        return self.given[name] if name in self.given else drawn

    def integers(self, name, lo, hi):
        """A whole number lo .. hi-1 (numpy's integers), or the given one."""
        return self.take(name, int(self.g.integers(lo, hi)))

    def choice(self, name, options):
        """One of `options` (numpy's choice), or the given one."""
        v = self.g.choice(options)
        return self.take(name, v.item() if hasattr(v, "item") else v)

    def flag(self, name, p):
        """1 with probability p, else 0 (from one uniform draw), or the given one."""
        return self.take(name, int(self.g.random() < p))

    def until(self, draw_once, valid):
        """draw_once() again and again until valid(its dict): the first valid one."""
        for _ in range(TRIES):
            p = draw_once()
            if valid(p):
                return p
        raise ValueError("no valid case with the parameters given (%s) in %d draws"
                         % (", ".join("%s=%s" % kv for kv in sorted(self.given.items())), TRIES))
