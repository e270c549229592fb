"""What every command shares: the `traceprof:` messages, the launcher's
folder (where the library and pyboot are looked for), the version, and
two ways to print names and sizes."""

import os
import re
import sys

# Set by the launcher (scripts/traceprof, or its installed copy) through
# setup(): the folder of the launcher itself, not of this package, which
# an install puts elsewhere (lib/traceprof/tpcli).
SCRIPT_DIR = None
VERSION = "@VERSION@"  # the launcher's, replaced by `make install`


def setup(script_dir_path, version_text):
    global SCRIPT_DIR, VERSION
    SCRIPT_DIR = script_dir_path
    VERSION = version_text


def err(msg):
    sys.stderr.write("traceprof: %s\n" % msg)


def fail(msg, code=2):
    err(msg)
    sys.exit(code)


def script_dir():
    if SCRIPT_DIR:
        return SCRIPT_DIR
    # Imported without the launcher: the package's folder (scripts/).
    return os.path.dirname(os.path.dirname(os.path.realpath(__file__)))


def version():
    if not VERSION.startswith("@"):
        return VERSION
    for cand in (os.path.join(script_dir(), "..", "VERSION"),
                 os.path.join(script_dir(), "VERSION")):
        try:
            with open(cand) as f:
                return f.read().strip()
        except OSError:
            pass
    return "unknown"


def natural_key(path):
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", path)]


def human_bytes(n):
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return ("%d %s" % (n, unit)) if unit == "B" else ("%.1f %s" % (n, unit))
        n /= 1024.0
