"""Checks every schedule a user would paste from the given Markdown files:
`--schedule SPEC` and `TRACEPROF_SCHEDULE=SPEC`.  Each must end: a
`repeat=N` with N > 0, or, within the next 12 lines, the sentence that says
it repeats forever and writes a file per cycle ("repeats until the program
ends" ... "its own file").  torch's schedule, which traceprof copies,
repeats forever when repeat is absent or 0: a pasted example without it
writes a file per cycle for as long as the job runs.  Prints each offender
as FILE:LINE: SPEC and exits 1 when there is one."""

import re
import sys

SPEC = re.compile(r"(?:--schedule[ =]|TRACEPROF_SCHEDULE=)['\"]?([a-z_]+=[0-9][a-z_=0-9,]*)")
SAYS = re.compile(r"repeats\s+until\s+the\s+program\s+ends.*?its\s+own\s+file", re.S)


def ends(spec):
    m = re.search(r"(?:^|,)repeat=([0-9]+)", spec)
    return bool(m) and int(m.group(1)) > 0


def main(paths):
    bad = 0
    for path in paths:
        lines = open(path, encoding="utf-8").read().split("\n")
        for i, line in enumerate(lines):
            for m in SPEC.finditer(line):
                spec = m.group(1)
                if ends(spec) or SAYS.search("\n".join(lines[i:i + 13])):
                    continue
                print("%s:%d: %s: no repeat=N (N > 0) and no word that it repeats forever"
                      % (path, i + 1, spec))
                bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
