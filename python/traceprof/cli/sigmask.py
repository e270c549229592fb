"""The signals `traceprof run` forwards to the program, blocked by the
launcher before the rest of the package is imported.

The imports and the set-up take 0.1 to 0.6 s on a busy machine: a signal
sent meanwhile waits, and is forwarded once the program runs, instead of
killing traceprof with its default action.  This module imports only
signal, so that the launcher can block them first thing."""

import signal

RUN_SIGNALS = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT,
               signal.SIGUSR1, signal.SIGUSR2}
RUN_MASK0 = None  # the mask traceprof started with: the program's


def block_for_run(argv):
    """Blocks RUN_SIGNALS and SIGCHLD when argv (without the program's
    name) is a `run` command, keeping the mask it replaces in RUN_MASK0."""
    global RUN_MASK0
    if argv[:1] == ["run"] and RUN_MASK0 is None:
        RUN_MASK0 = signal.pthread_sigmask(signal.SIG_BLOCK, RUN_SIGNALS | {signal.SIGCHLD})
