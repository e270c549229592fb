"""Printing a summary: torch's time format, a text table, CSV."""

import sys


def fmt_time(us):
    """torch.autograd.profiler_util._format_time."""
    if us >= 1e6:
        return "%.3fs" % (us / 1e6)
    if us >= 1e3:
        return "%.3fms" % (us / 1e3)
    return "%.3fus" % us


def print_table(head, rows):
    widths = [len(h) for h in head]
    for r in rows:
        for i, c in enumerate(r):
            widths[i] = max(widths[i], len(c))
    widths[0] = min(widths[0], 60)
    sep = "  ".join("-" * w for w in widths)

    def line(cells):
        out = []
        for i, c in enumerate(cells):
            if i == 0:
                c = c if len(c) <= widths[0] else c[:widths[0] - 3] + "..."
                out.append(c.ljust(widths[0]))
            else:
                out.append(c.rjust(widths[i]))
        return "  ".join(out).rstrip()

    print(sep)
    print(line(head))
    print(sep)
    for r in rows:
        print(line(r))
    print(sep)


def write_csv(rows):
    import csv
    wr = csv.writer(sys.stdout, lineterminator="\n")
    for r in rows:
        wr.writerow(r)
