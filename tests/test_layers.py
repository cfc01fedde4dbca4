"""The host package's import graph (scripts/check_layers.py, docs/architecture.md): no import
circle of more than 2 files, and no module importing a layer above its own. The checker itself
is tested on planted graphs, so a check that cannot fail would fail here."""
import importlib.util
import os

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location(
    "check_layers", os.path.join(HERE, "..", "scripts", "check_layers.py"))
check_layers = importlib.util.module_from_spec(spec)
spec.loader.exec_module(check_layers)


def test_no_circle_over_two_files_and_no_upward_import():
    g = check_layers.graph()
    assert len(g) > 60 and sum(len(v) for v in g.values()) > 300  # the whole package was read
    circles = check_layers.circles(g)
    assert max([len(c) for c in circles] or [1]) <= check_layers.MAX_CIRCLE, circles
    assert check_layers.upward(g) == []


def test_every_module_is_in_a_layer():
    assert [m for m in check_layers.graph() if m != "kilobit" and
            check_layers.layer(m) is None] == []


def test_the_checker_finds_planted_circles_and_upward_imports():
    g = {"kilobit.core.a": {"kilobit.models.b": 1}, "kilobit.models.b": {"kilobit.cli.c": 1},
         "kilobit.cli.c": {"kilobit.core.a": 1}, "kilobit.core.d": {}}
    assert check_layers.circles(g) == [["kilobit.cli.c", "kilobit.core.a", "kilobit.models.b"]]
    up = check_layers.upward(g)
    assert [(m, t) for m, _, t, _, _ in up] == [("kilobit.core.a", "kilobit.models.b"),
                                                ("kilobit.models.b", "kilobit.cli.c")]


def test_a_lazy_import_and_a_parent_package_count(tmp_path):
    pkg = tmp_path / "kilobit"
    for d in ("core", "cli"):
        (pkg / d).mkdir(parents=True)
        (pkg / d / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "core" / "x.py").write_text("def f():\n    from kilobit.cli import y\n")
    (pkg / "cli" / "y.py").write_text("import kilobit.core.x\n")
    g = check_layers.graph(str(pkg))
    assert {"kilobit.cli", "kilobit.cli.y"} <= set(g["kilobit.core.x"])  # inside a function
    assert {"kilobit.core", "kilobit.core.x"} <= set(g["kilobit.cli.y"])  # parents run too
    assert check_layers.circles(g) == [["kilobit.cli.y", "kilobit.core.x"]]
    assert [(m, t) for m, _, t, _, _ in check_layers.upward(g)] == [
        ("kilobit.core.x", "kilobit.cli"), ("kilobit.core.x", "kilobit.cli.y")]
