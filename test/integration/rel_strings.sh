# Hostile strings: names of markers, counters and threads, the program's path
# and the configured folder and run name with quotes, backslashes, control
# characters and invalid UTF-8 always give valid JSON (strict UTF-8, strict
# json.loads), and the names survive where they are valid.
. "$TP_TOP/test/lib/common.sh"
src="$BUILD/test/prog_rel_strings"
[ -x "$src" ] || die "$src not built"
# The program itself under a hostile path: it becomes the command line, the
# process name and the default {run_name}.
dir=$(printf 'bin "q" \\ \001\033 \xff\xfe dir')
mkdir -p "$dir"
exe="$dir/$(printf 'pr"og\\\t\xc3\x28')"
cp "$src" "$exe"
run() { # FOLDER [ENV...]
	local folder=$1
	shift
	env "$@" TRACEPROF_FOLDER="$folder" LD_PRELOAD="$TP_PRELOAD" "$exe" >out.txt 2>err.txt ||
		die "the program failed: $(cat err.txt)"
	grep -q names out.txt || die "no output"
}
run default
run "$(printf 'f "x" \\ \n\001 \xff/{run_name}')" TRACEPROF_RUN_NAME="$(printf 'run "\\ \xff\x01')"
run comp TRACEPROF_COMPRESS=gzip
# libunwind's unw_backtrace crashes under TSan: stacks are left out there.
if [ "${TP_SANITIZER:-}" = tsan ]; then run stack; else run stack TRACEPROF_WITH_STACK=1; fi
"$PYTHON" - <<'PY'
import os, sys
sys.path.insert(0, os.path.join(os.environ["TP_TOP"], "test", "lib"))
import rel
traces = rel.load_all(".")
if len(traces) < 4:
    rel.fail("expected 4 traces, got %r" % sorted(traces))
for path, t in traces.items():
    ev = t["traceEvents"]
    names = {e.get("name") for e in ev}
    for want in ("plain", "quote \" and backslash \\ and slash /", "\"\\\"\\\\\"",
                 "ctl \x01\x02\x07\b\t\n\v\f\r\x1b\x1f\x7f end",
                 "utf8 \u00e9 \u20ac \U0001F600", "</script><script>alert(1)</script>",
                 "%s%n%x%p", "void vectorAdd<float>(float const*, float*, int) [with T = \"x\"]"):
        if want not in names:
            rel.fail("%s: name %r missing" % (path, want))
    bad = [n for n in names if n and n.startswith("bad ")]
    if not bad or "\ufffd" not in bad[0]:
        rel.fail("%s: invalid UTF-8 not replaced by U+FFFD: %r" % (path, bad))
    longs = [n for n in names if n and n.startswith("LLLL")]
    if not longs:
        rel.fail("%s: the overlong name is missing" % path)
    threads = [e["args"]["name"] for e in ev if e.get("ph") == "M" and e.get("name") == "thread_name"]
    if len(threads) < 5:
        rel.fail("%s: expected 5 thread names, got %r" % (path, threads))
    print("ok   %s: %d events, thread names %r" % (os.path.basename(path), len(ev), threads))
print("PASS")
PY
