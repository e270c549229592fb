"""`traceprof top`'s terminal view (curses, from the standard library):
the header, one row per process and the straggler, redrawn every second
from a new snapshot; keys sort (s, r), scroll and quit (q)."""

import curses
import os
import time

from .top import SORTS, align, header_lines, row_cells, straggler_line
from .top_live import LiveError
from ..util import fail

REFRESH_S = 1.0
KEYS = "s slowest first  r by rank  arrows/PgUp/PgDn scroll  q quit"


def _put(win, y, x, text, attr=0):
    """One line, cut at the window's edge (curses refuses to write past
    the last column of the last line)."""
    h, w = win.getmaxyx()
    if 0 <= y < h and x < w:
        try:
            win.addnstr(y, x, text, max(0, w - x - (1 if y == h - 1 else 0)), attr)
        except curses.error:
            pass


def _draw(win, snap, sort, top, problem):
    win.erase()
    h, _ = win.getmaxyx()
    lines = header_lines(snap)
    for i, line in enumerate(lines):
        _put(win, i, 0, line)
    y = len(lines)
    _put(win, y, 0, straggler_line(snap), curses.A_BOLD)
    y += 1
    rows = sorted(snap["processes"], key=SORTS[sort])
    s = snap["straggler"]
    room = max(0, h - y - 1)
    top = max(0, min(top, len(rows) - room))
    shown = "" if len(rows) <= room else "rows %d-%d of %d; " % (
        top + 1, min(len(rows), top + room), len(rows))
    _put(win, y, 0, problem or "sorted %s; %s%s" % (
        "slowest first" if sort == "slowest" else "by rank", shown, KEYS),
        curses.A_BOLD if problem else curses.A_DIM)
    y += 1
    text = align([row_cells(r) for r in rows])
    for i in range(top, min(len(rows), top + room)):
        r = rows[i]
        attr = curses.A_BOLD if r["status"] in ("stalled", "stale") else 0
        if s is not None and (r["host"], r["pid"]) == (s["host"], s["pid"]):
            attr |= curses.A_REVERSE
        _put(win, y, 0, text[i], attr)
        y += 1
    win.refresh()
    return top, room


def _loop(win, take, snap, sort):
    try:
        curses.curs_set(0)
    except curses.error:
        pass
    top, problem = 0, None
    due = time.monotonic() + REFRESH_S
    while True:
        top, room = _draw(win, snap, sort, top, problem)
        win.timeout(max(0, int((due - time.monotonic()) * 1000)))
        ch = win.getch()
        if ch in (ord("q"), ord("Q"), 27):
            return 0
        if ch == ord("s"):
            sort, top = "slowest", 0
        elif ch == ord("r"):
            sort, top = "rank", 0
        elif ch in (curses.KEY_DOWN, ord("j")):
            top += 1
        elif ch in (curses.KEY_UP, ord("k")):
            top = max(0, top - 1)
        elif ch == curses.KEY_NPAGE:
            top += max(1, room)
        elif ch == curses.KEY_PPAGE:
            top = max(0, top - max(1, room))
        if time.monotonic() >= due:
            try:
                snap, problem = take(), None
            except LiveError as e:
                # The files went away (the job's folder was cleaned up):
                # the last snapshot stays, with why it is not updated.
                problem = "not updated: %s" % e
            due = time.monotonic() + REFRESH_S


def run_screen(take, snap, sort):
    try:
        return curses.wrapper(_loop, take, snap, sort)
    except curses.error as e:
        # A terminal curses cannot drive (TERM unknown to terminfo, or
        # one without the capabilities it needs).
        fail("top: cannot draw on this terminal (TERM=%s: %s); set TERM=xterm, or use --once "
             "or --json" % (os.environ.get("TERM", ""), e), 1)
