"""`kilobit data list`: the data sets every --data takes, from kilobit.data.DATASETS.

cli/__init__.py adds the parser (add_parsers) and dispatches to COMMANDS.
"""


def add_parsers(sub):
    p = sub.add_parser("data", help="the data sets --data takes: name, size, task, source, "
                                    "licence")
    dsub = p.add_subparsers(dest="action", required=True)
    d = dsub.add_parser("list", help="list the data sets (a CSV file is taken too: features, "
                                     "then the label)")
    d.add_argument("--task", choices=("binary", "multi-class"),
                   help="only the data sets of one task (rkp and ckp learn binary ones)")


COLUMNS = ("name", "rows", "features", "classes", "task", "split (train / test)", "source",
           "licence", "here")


def table(task=None):
    """The rows of `kilobit data list`, each a tuple of COLUMNS' texts."""
    from kilobit import data
    out = []
    for i in data.DATASETS.values():
        if task and i.task != task:
            continue
        miss = i.missing()
        out.append((i.name, str(i.rows), str(i.features), str(i.classes), i.task,
                    "%d / %d" % (i.train, i.test), i.source, i.licence,
                    "yes" if miss is None else "needs " + miss))
    return out


def cmd_data(a):
    rows = [COLUMNS] + table(a.task)
    widths = [max(len(r[j]) for r in rows) for j in range(len(COLUMNS))]
    right = {1, 2, 3}  # the numbers
    for r in rows:
        print("  ".join(c.rjust(w) if j in right else c.ljust(w)
                        for j, (c, w) in enumerate(zip(r, widths))).rstrip())
    print("--data also takes a CSV file: comma-, semicolon- or tab-separated, features then the "
          "label in the last column, an optional header row")
    return 0


COMMANDS = {"data": cmd_data}
