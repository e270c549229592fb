"""Paths that LD_PRELOAD and PYTHONPATH can carry (issue 41 item 5).

ld.so splits LD_PRELOAD at every space and colon and has no escape for
either (glibc's elf/rtld.c, handle_preload_list: strcspn(list, " :")), and
Python splits PYTHONPATH at colons.  A library installed under
"/home/me/my envs/" would be preloaded as two missing files: two
"ERROR: ld.so: ... cannot be preloaded" lines in the program and in every
child, and no trace.  So when the library's folder (or pyboot's) holds such a
character, `traceprof run` names it through a symbolic link to that folder,
made in a private folder of this user whose own path has none:
$XDG_RUNTIME_DIR/traceprof, else $TMPDIR/traceprof-UID, else
/tmp/traceprof-UID (created 0700; used only when it is a real folder owned by
this user that no one else can write).  The link names the folder, not the
file: the loader computes $ORIGIN from the path it opened, and the wheel's
RPATH, $ORIGIN/../../traceprof.libs, then still reaches the package through
the link.  Links are named after a hash of their target, so that each run
finds the one it made before, and they stay: a child the program leaves
running may still exec with that LD_PRELOAD after `traceprof run` ends.
Non-ASCII characters need nothing: both lists are bytes to their readers."""

import hashlib
import os
import stat

# Where ld.so cuts an LD_PRELOAD entry, and (':') Python a PYTHONPATH one.
# Tabs and newlines are not cut by ld.so, but a shell's unquoted
# $(traceprof --lib) would be: they get a link too.
_CUT = (" ", ":", "\t", "\n")


def needs_link(path):
    return any(c in path for c in _CUT)


def _private_folders():
    uid = os.getuid()
    xdg = os.environ.get("XDG_RUNTIME_DIR")
    if xdg and os.path.isabs(xdg):
        yield os.path.join(xdg, "traceprof")
    tmp = os.environ.get("TMPDIR")
    if tmp and os.path.isabs(tmp):
        yield os.path.join(tmp, "traceprof-%d" % uid)
    yield "/tmp/traceprof-%d" % uid


def _usable(folder):
    """folder exists (made now if missing) as a real folder of this user
    that only this user can write."""
    try:
        os.mkdir(folder, 0o700)
    except FileExistsError:
        pass
    except OSError:
        return False
    try:
        st = os.lstat(folder)
    except OSError:
        return False
    return (stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and
            not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH))


def _link(folder, name, target):
    """folder/name, a symbolic link to target (made, or replaced when it
    points elsewhere).  Returns its path, or None."""
    path = os.path.join(folder, name)
    try:
        if os.readlink(path) == target:
            return path
    except OSError:
        pass
    tmp = "%s.%d.tmp" % (path, os.getpid())
    try:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        os.symlink(target, tmp)
        os.replace(tmp, path)  # atomic: a concurrent run sees the old or the new link
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        return None
    return path


def carried(path, kind):
    """path itself when LD_PRELOAD / PYTHONPATH can carry it, else the same
    file or folder through a link made as above; None when no private
    folder could be made.  kind: "lib" (path is a file: its folder is
    linked) or "dir" (path is a folder)."""
    if not needs_link(path):
        return path
    real = os.path.realpath(path)
    folder, base = (os.path.dirname(real), os.path.basename(real)) if kind == "lib" \
        else (real, "")
    name = "%s-%s" % (kind, hashlib.sha256(os.fsencode(folder)).hexdigest()[:16])
    for priv in _private_folders():
        if needs_link(priv) or not _usable(priv):
            continue
        link = _link(priv, name, folder)
        if link:
            return os.path.join(link, base) if base else link
    return None
