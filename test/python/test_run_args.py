"""`traceprof run`'s command line: where the program starts
(split_run_args), the options (build_run_parser, cli/options.py's table)
and the default {run_name} (program_name)."""

import pytest

from traceprof.cli import run
from traceprof.cli.options import RUN_OPTIONS, TEMPLATE_VARS
from traceprof.cli.run import build_run_parser, program_name, split_run_args


@pytest.mark.parametrize("argv, want", [
    # The program starts at the first word that is not an option or its value.
    (["./prog", "a"], ["--", "./prog", "a"]),
    (["--folder", "out", "./prog", "--folder", "x"], ["--folder", "out", "--", "./prog", "--folder", "x"]),
    (["--folder=out", "./prog"], ["--folder=out", "--", "./prog"]),
    # An explicit "--" is left alone.
    (["--folder", "out", "--", "./prog"], ["--folder", "out", "--", "./prog"]),
    # A flag takes the next word only when it is a boolean word.
    (["--overwrite", "./prog", "2"], ["--overwrite", "--", "./prog", "2"]),
    (["--overwrite", "0", "./prog"], ["--overwrite", "0", "--", "./prog"]),
    (["--with-stack", "Yes", "./prog"], ["--with-stack", "Yes", "--", "./prog"]),
    (["--overwrite"], ["--overwrite"]),
    # Options without a value, and "-" (a program named "-").
    (["-q", "./prog"], ["-q", "--", "./prog"]),
    (["--quiet", "-", "x"], ["--quiet", "--", "-", "x"]),
    # A choice option takes its value, whatever it is.
    (["--format", "perfetto", "python3", "t.py"], ["--format", "perfetto", "--", "python3", "t.py"]),
    ([], []),
])
def test_split_run_args(argv, want):
    assert split_run_args(list(argv)) == want


def parse(argv):
    argv = split_run_args(argv)
    k = argv.index("--")
    a = build_run_parser().parse_args(argv[:k])
    return a, argv[k + 1:]


def test_options_set_their_variables():
    a, prog = parse(["--folder", "/tmp/x", "--overwrite", "--format", "perfetto", "--keep", "3",
                     "-q", "./prog", "--keep", "9"])
    assert prog == ["./prog", "--keep", "9"]
    assert a.TRACEPROF_FOLDER == "/tmp/x"
    assert a.TRACEPROF_OVERWRITE == "1"          # a flag alone means 1
    assert a.TRACEPROF_FORMAT == "perfetto"
    assert a.TRACEPROF_NUM_TRACES_TO_KEEP == "3"
    assert a.quiet is True
    # Options not given leave their variable alone (None: not set).
    assert a.TRACEPROF_SCHEDULE is None and a.TRACEPROF_WITH_STACK is None


def test_flag_value_and_bad_choice(capsys):
    a, _ = parse(["--overwrite", "0", "./p"])
    assert a.TRACEPROF_OVERWRITE == "0"
    with pytest.raises(SystemExit) as e:
        build_run_parser().parse_args(["--format", "xml"])
    assert e.value.code == 2
    assert "invalid choice" in capsys.readouterr().err


def test_option_table_is_consistent():
    # One option per variable, each variable a TRACEPROF_* name, and the
    # kinds the parser knows.
    opts = [o for o, *_ in RUN_OPTIONS]
    vars_ = [v for _, v, *_ in RUN_OPTIONS]
    assert len(set(opts)) == len(opts) and len(set(vars_)) == len(vars_)
    assert all(v.startswith("TRACEPROF_") for v in vars_)
    assert all(k in ("str", "bool") or isinstance(k, list) for _, _, _, k, _ in RUN_OPTIONS)
    assert "step" in TEMPLATE_VARS and "batch" in TEMPLATE_VARS


def test_cmd_run_without_program(capsys):
    with pytest.raises(SystemExit) as e:
        run.cmd_run(["--folder", "x"])
    assert e.value.code == 2
    assert "no program given" in capsys.readouterr().err


@pytest.mark.parametrize("argv, want", [
    (["./train"], "train"),
    (["/usr/bin/python3", "train.py", "--lr", "1"], "train"),
    (["python3.11", "-u", "dir/train.py"], "train"),
    (["python", "-m", "pkg.main", "x"], "pkg.main"),
    (["python", "-mpkg"], "pkg"),
    (["python3", "-c", "print(1)"], "python3"),
    (["python3"], "python3"),
    (["python3", "-", "x"], "python3"),
    (["python3", "-W", "ignore", "t.py"], "t"),
    (["torchrun", "--nproc-per-node", "2", "train.py"], "train"),
    (["composer", "-n", "8", "x/main.py"], "main"),
    (["accelerate", "launch", "--num_processes", "2", "train.py"], "train"),
    (["python3", "/venv/bin/accelerate", "launch", "t.py"], "t"),
    (["accelerate", "env", "t.py"], "accelerate"),
])
def test_program_name(argv, want):
    assert program_name(argv) == want
