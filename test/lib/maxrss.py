"""Runs a command and reports the peak resident memory of its process tree.

    maxrss.py REPORT_FILE COMMAND [ARGS...]

Writes to REPORT_FILE the largest resident set (in KiB) that any process of
the tree reached: getrusage(RUSAGE_CHILDREN).ru_maxrss, which the kernel
carries up from every descendant that was waited for (a test's shell waits
for what it starts).  Exits with the command's status (128 + N when a signal
N ended it), so test/run-all reads the status as if it had run the command
itself.  A process left running after the command exits is not counted.
The floor is about 14 MiB, this Python's own size: the kernel counts the
forked child's pages from before its exec.
"""
import resource
import subprocess
import sys


def main(argv):
    report, cmd = argv[0], argv[1:]
    try:
        rc = subprocess.call(cmd)
    except OSError as e:
        print("maxrss.py: cannot run %s: %s" % (cmd[0], e), file=sys.stderr)
        rc = 127
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    with open(report, "w") as f:
        f.write("%d\n" % peak)
    return 128 - rc if rc < 0 else rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
