#!/usr/bin/env bash
# traceprof installed under a path with a space, a colon, or non-ASCII
# characters (issue 41 item 5): ld.so splits LD_PRELOAD at spaces and colons
# with no escape, and Python splits PYTHONPATH at colons.  For each such
# folder, the build's command (launcher, library, package) copied there, and
# a pip install's layout (site-packages/traceprof/lib/libtraceprof.so, run
# through the console script's entry point) run a Python program that starts
# a Python child and a shell: nothing from ld.so on stderr, the library in
# both Pythons (their events are in the trace), pyboot's sitecustomize ran
# (--step torch's import finder is in sys.meta_path), every LD_PRELOAD entry
# and the boot folder exist as given; `traceprof --lib` prints a path that
# an unquoted LD_PRELOAD=$(traceprof --lib) takes.
. "$TP_TOP/test/lib/common.sh"
cat >kid.py <<'PY'
import os, subprocess, sys
import traceprof
who = sys.argv[1]
traceprof.instant("hello_" + who)
traceprof.step()
pre = os.environ.get("LD_PRELOAD", "")
boot = os.environ.get("PYTHONPATH", "").split(":")[0]
for e in pre.split(":"):
    # A path is a file; a name without '/' (a sanitizer build's runtime,
    # libtsan.so.2) is the loader's to find.
    assert " " not in e and ("/" not in e or os.path.isfile(e)), ("LD_PRELOAD entry", e, pre)
if "boot" in sys.argv:
    assert os.path.isfile(os.path.join(boot, "sitecustomize.py")), ("PYTHONPATH", boot)
    assert any(type(f).__name__ == "_TorchFinder" for f in sys.meta_path), "pyboot did not run"
if who == "parent":
    subprocess.run([sys.executable, __file__, "child"] + sys.argv[2:], check=True)
    subprocess.run(["sh", "-c", "echo shell ok"], check=True)
print(who, "ok")
PY

# Two events named hello_parent and hello_child in the folder's traces.
check_events() {
	"$PYTHON" - "$1" <<'PY' || die "$2: events missing in $1"
import glob, json, sys
names = set()
for f in glob.glob(sys.argv[1] + "/*.json"):
    names.update(e.get("name") for e in json.load(open(f))["traceEvents"])
assert {"hello_parent", "hello_child"} <= names, sorted(n for n in names if n and "hello" in n)
PY
}

check_run() { # NAME: the outputs NAME.out / NAME.err of a run
	local n=$1
	grep -q "ld.so\|cannot be preloaded" "$n.err" && die "$n: ld.so complained: $(cat "$n.err")"
	grep -qx "parent ok" "$n.out" && grep -qx "child ok" "$n.out" && grep -qx "shell ok" "$n.out" ||
		die "$n: the program did not run as it should: $(cat "$n.out" "$n.err")"
	! grep -v "^traceprof: .* exists and overwrite is off" "$n.err" | grep -q . ||
		die "$n: stderr: $(cat "$n.err")"
	check_events "$TP_TMP/t_$n" "$n"
	echo "$n: ok"
}

i=0
for d in "my envs" "a:b" "ünï cödé:x"; do
	i=$((i + 1))
	D="$TP_TMP/$d"
	mkdir -p "$D/site/traceprof"
	cp -r "$BUILD/traceprof" "$BUILD/libtraceprof.so" "$BUILD/python" "$D/"
	# A pip install's layout: the library inside the package.
	cp -r "$BUILD/python/traceprof/." "$D/site/traceprof/"
	mkdir -p "$D/site/traceprof/lib" && cp "$BUILD/libtraceprof.so" "$D/site/traceprof/lib/"

	PYTHONPATH="$TP_TOP/python" "$D/traceprof" run -q --step torch --folder "$TP_TMP/t_launcher$i" -- \
		"$PYTHON" kid.py parent boot >launcher$i.out 2>launcher$i.err
	check_run launcher$i

	# The console script of a pip install runs traceprof.cli.main:entry.
	PYTHONPATH="$TP_TOP/python" "$PYTHON" -c 'import sys
sys.path.insert(0, sys.argv.pop(1)); sys.argv[0] = "traceprof"
from traceprof.cli.main import entry
entry()' "$D/site" run -q --step torch --folder "$TP_TMP/t_wheel$i" -- \
		"$PYTHON" kid.py parent boot >wheel$i.out 2>wheel$i.err
	check_run wheel$i

	# --lib, unquoted, as the README shows it.
	lib=$("$D/traceprof" --lib) || die "--lib failed"
	[ -f "$lib" ] || die "--lib printed '$lib', not a file"
	[ "$lib" = "${lib//[ :]/}" ] || die "--lib printed a path LD_PRELOAD cannot take: '$lib'"
	# shellcheck disable=SC2086
	PYTHONPATH="$TP_TOP/python" TRACEPROF_FOLDER="$TP_TMP/t_lib$i" LD_PRELOAD=${TP_PRELOAD%"$TP_LIB"}$lib \
		"$PYTHON" kid.py parent >lib$i.out 2>lib$i.err
	check_run lib$i
done
