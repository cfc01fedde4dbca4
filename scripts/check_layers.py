#!/usr/bin/env python3
"""The host package's import graph: its circles and its layers (docs/architecture.md).

    python scripts/check_layers.py            # exit 1 on a circle over 2 files or an upward import
    python scripts/check_layers.py --graph    # also print every module's imports

Every `import` and `from ... import` of host/kilobit counts, at module level or inside a
function (a lazy import still ties the two files together), and so does the parent package that
importing a module runs. A circle is a strongly connected component of that graph (Tarjan).
Layers, bottom to top; a module may import its own layer and the ones below only:

    0 core      kilobit.core.*          the contract's shared pieces
    1 data      kilobit.data.*          data sets and fixed features
    2 models    kilobit.models.*        one package per model type + the registry
    3 runtimes  kilobit.runtimes.*      runtime adapters, firmware builds, boards, deploy
    4 tools     kilobit.golden, kilobit.bench.*, kilobit.stream, kilobit.record, kilobit.demo,
                kilobit.arduino, kilobit.inspect, kilobit.predict, kilobit.plot, kilobit.api
    5 cli       kilobit.cli.*, kilobit.__main__ (the entry point: signal handlers, then the CLI)
"""
import ast
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PKG = os.path.join(os.path.dirname(HERE), "host", "kilobit")
MAX_CIRCLE = 2
LAYERS = [("core", ("kilobit.core",)), ("data", ("kilobit.data",)),
          ("models", ("kilobit.models",)), ("runtimes", ("kilobit.runtimes",)),
          ("tools", ("kilobit.golden", "kilobit.bench", "kilobit.stream", "kilobit.record",
                     "kilobit.demo", "kilobit.api",
                     "kilobit.arduino", "kilobit.inspect", "kilobit.predict", "kilobit.plot")),
          ("cli", ("kilobit.cli", "kilobit.__main__"))]


def modules(pkg=PKG):
    """{module name: (path, is_package)} of every .py file under pkg."""
    out = {}
    for root, dirs, files in os.walk(pkg):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for f in sorted(files):
            if not f.endswith(".py"):
                continue
            rel = os.path.relpath(os.path.join(root, f), pkg)[:-3].split(os.sep)
            is_pkg = rel[-1] == "__init__"
            if is_pkg:
                rel = rel[:-1]
            out[".".join(["kilobit"] + rel)] = (os.path.join(root, f), is_pkg)
    return out


def layer(name):
    """The layer index of a module name, or None (the top package kilobit itself)."""
    for i, (_, prefixes) in enumerate(LAYERS):
        if any(name == p or name.startswith(p + ".") for p in prefixes):
            return i
    return None


def _with_parents(name, known):
    """name and each parent package it runs on import (kilobit.a.b -> kilobit.a, kilobit.a.b)."""
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(2, len(parts) + 1) if ".".join(parts[:i]) in known]


def imports(name, path, is_pkg, known):
    """The kilobit modules `name` imports, anywhere in its file: {target: first line}."""
    with open(path) as f:
        tree = ast.parse(f.read(), path)
    out = {}

    def add(target, line):
        for t in _with_parents(target, known):
            if t != name:
                out.setdefault(t, line)

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] == "kilobit":
                    add(a.name, node.lineno)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".") if is_pkg else name.split(".")[:-1]
                base = base[:len(base) - (node.level - 1)]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            if mod.split(".")[0] != "kilobit":
                continue
            add(mod, node.lineno)
            for a in node.names:  # `from pkg import submodule`
                if mod + "." + a.name in known:
                    add(mod + "." + a.name, node.lineno)
    return out


def graph(pkg=PKG):
    known = modules(pkg)
    return {n: imports(n, p, is_pkg, known) for n, (p, is_pkg) in known.items()}


def circles(g):
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]
    for root in sorted(g):
        if root in index:
            continue
        work = [(root, iter(sorted(g[root])))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(g[w]))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return sorted(out, key=lambda c: (-len(c), c))


def upward(g):
    """[(module, its layer, imported module, that layer, line)] of every import of a higher
    layer."""
    out = []
    for m, targets in sorted(g.items()):
        lm = layer(m)
        for t, line in sorted(targets.items()):
            lt = layer(t)
            if lm is not None and lt is not None and lt > lm:
                out.append((m, LAYERS[lm][0], t, LAYERS[lt][0], line))
    return out


def main(argv):
    g = graph()
    if "--graph" in argv:
        for m in sorted(g):
            print("%s -> %s" % (m, ", ".join(sorted(g[m])) or "-"))
    bad = 0
    comps = circles(g)
    for c in comps:
        over = len(c) > MAX_CIRCLE
        bad += over
        print("%s circle of %d: %s" % ("FAIL" if over else "note", len(c), " <-> ".join(c)))
    for m, lm, t, lt, line in upward(g):
        bad += 1
        print("FAIL upward import: %s (%s) imports %s (%s), line %d" % (m, lm, t, lt, line))
    print("%d modules, %d imports, largest circle %d file(s), %d problem(s)"
          % (len(g), sum(len(v) for v in g.values()), max([len(c) for c in comps] or [1]), bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
