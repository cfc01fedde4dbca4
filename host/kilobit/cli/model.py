"""The commands on a trained model file: inspect and predict (issue 24).

    kilobit inspect m.kb [--board NAME ...] [--quiet]
    kilobit predict m.kb --data NAME|CSV [-o out.csv] [--runtime NAME] [--seed N] [--limit N]

cli/__init__.py adds the parsers (add_parsers) and dispatches to COMMANDS.
"""
import sys

from kilobit.core import options, outfile, progress


def add_parsers(sub, data_help, seed_help):
    from kilobit.runtimes import boards, catalog

    p = sub.add_parser("inspect", help="what a model file holds (type, parameters, learnt "
                                       "state, scaler) and the flash, RAM and EEPROM it takes "
                                       "on each board")
    p.add_argument("model", help="a .kb model file")
    p.add_argument("--board", action="append", dest="boards", metavar="NAME",
                   help="measure on this board only (repeatable; default: every board of "
                        "boards/: %s)" % ", ".join(boards.load_all()))
    p.add_argument("--quiet", action="store_true",
                   help="no progress on stderr while the boards are measured")

    p = sub.add_parser("predict", help="a model's predictions for a data set's test split or "
                                       "every row of a CSV, by the integer reference or a "
                                       "(virtual) board")
    p.add_argument("model", help="a .kb model file")
    p.add_argument("--data", required=True,
                   help=data_help + "; a data set predicts its test split, a CSV every row "
                                    "(features, then optionally the label)")
    p.add_argument("-o", "--output", metavar="CSV",
                   help="write the predictions there (a header, then prediction[,label] per "
                        "row) and the summary to stdout (default: the predictions to stdout, "
                        "the summary to stderr)")
    p.add_argument("--runtime", default="host", metavar="NAME",
                   help="where the model runs; not the host: its predictions are compared with "
                        "the host's. " + catalog.help_text())
    p.add_argument("--seed", type=options.seed(), default=0, help=seed_help)
    p.add_argument("--limit", type=options.integer(1), metavar="N",
                   help="only the first N rows (a board is slower than the host)")


def cmd_inspect(a):
    from kilobit import inspect
    from kilobit.runtimes import boards

    n = len(set(a.boards)) if a.boards else len(boards.load_all())
    with progress.bar(n, "measuring the boards", quiet=a.quiet) as bar:
        lines, _ = inspect.report(a.model, a.boards,
                                  progress=lambda name: bar.update(1, name + " measured"))
    print("\n".join(lines))
    return 0


def cmd_predict(a):
    from kilobit import predict

    r = predict.run(a.model, a.data, seed=a.seed, runtime=a.runtime, limit=a.limit)
    text = predict.csv_text(r)
    if a.output:
        outfile.write(a.output, text)
        summary = sys.stdout
        print("%d predictions -> %s" % (len(r["predictions"]), a.output))
    else:
        sys.stdout.write(text)
        summary = sys.stderr
    for line in predict.summary(r):
        print(line, file=summary)
    return 1 if r["agree"] is not None and r["agree"] != len(r["predictions"]) else 0


COMMANDS = {"inspect": cmd_inspect, "predict": cmd_predict}
