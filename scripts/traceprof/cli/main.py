"""The `traceprof` command line: COMMAND dispatch, the usage text,
--version; and launch(), the launcher's way in (exit statuses of a closed
pipe and of ^C)."""

import os
import sys

from . import sigmask
from .. import util
from ..util import fail, version


USAGE = """usage: traceprof COMMAND ...

commands:
  run [OPTIONS] -- PROGRAM [ARGS...]   run PROGRAM with the profiler preloaded
  merge [-o OUT] FILES... | FOLDER      merge the per-rank traces of one job
  summary FILE [--by all|api|kernel|marker|step|comm] [--top N] [--csv]
                                        print a key_averages-style table
  summary FILES... | FOLDER --by rank   step times per rank; names the straggler
  export --parquet OUT FILES... | FOLDER
                                        every event as a Parquet dataset (pyarrow)
  recover [FOLDER...]                   finish the windows of processes that died
                                        (killed, crashed) into cut traces
  top [FOLDER] [--once|--json]          watch a running job: step times and status
                                        of each process, the straggler, stalls
  --lib                                 print the library `run` preloads, for
                                        LD_PRELOAD=$(traceprof --lib) PROGRAM
  --version                             print the version

`traceprof COMMAND --help` shows the options of one command.
Traces open in https://ui.perfetto.dev (Open trace file) or chrome://tracing.
"""


def main(argv):
    if not argv or argv[0] in ("-h", "--help", "help"):
        sys.stdout.write(USAGE)
        return 0 if argv else 2
    if argv[0] in ("--version", "-V", "version"):
        print("traceprof %s" % version())
        return 0
    if argv[0] == "--lib":
        # The library `run` would preload (TRACEPROF_LIB, the package's
        # lib/, beside the launcher, ...), for C programs started without
        # the command: LD_PRELOAD=$(traceprof --lib) ./train.
        # A path LD_PRELOAD can carry: through a link when the install's
        # path has spaces or colons (cli/linkpath.py).
        from .runenv import find_library, preload_safe
        print(preload_safe(find_library()))
        return 0
    cmd, rest = argv[0], argv[1:]
    # Each command imports its own modules only: `run` starts the program
    # sooner without the readers and writers of merge and summary.
    if cmd == "run":
        from .run import cmd_run
        return cmd_run(rest)
    if cmd == "merge":
        from .merge import cmd_merge
        return cmd_merge(rest)
    if cmd == "summary":
        from .summary import cmd_summary
        return cmd_summary(rest)
    if cmd == "export":
        from .export import cmd_export
        return cmd_export(rest)
    if cmd == "recover":
        from .recover import cmd_recover
        return cmd_recover(rest)
    if cmd == "top":
        from .top import cmd_top
        return cmd_top(rest)
    sys.stderr.write(USAGE)
    fail("unknown command '%s'" % cmd)


def launch(argv, script_dir=None):
    """Runs the command line argv (without the program's name) and exits.
    script_dir: a launcher script's folder (None: the package's)."""
    sigmask.block_for_run(argv)
    util.setup(script_dir)
    try:
        sys.exit(main(argv))
    except BrokenPipeError:
        try:
            sys.stdout = None
        finally:
            os._exit(141)
    except KeyboardInterrupt:
        sys.exit(130)


def entry():
    """The `traceprof` console command of a pip install (pyproject.toml's
    [project.scripts]).  Importing this module imported only sigmask and
    util, so run's signals are still blocked before the rest loads."""
    launch(sys.argv[1:])
