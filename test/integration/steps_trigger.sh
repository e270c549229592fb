# TRACEPROF_TRIGGER=SIGUSR2: nothing is recorded until the signal; then one
# capture of TRACEPROF_TRIGGER_STEPS steps (or the schedule's warmup+active)
# starts at the next step and is saved as usual.  The program's exit status
# and output are unchanged.
. "$TP_TOP/test/lib/common.sh"
command -v sleep >/dev/null || skip "no sleep"
run() { # folder, extra env...
	local folder=$1; shift
	env "$@" TRACEPROF_STEP=time:20 TRACEPROF_TRIGGER=SIGUSR2 TRACEPROF_FOLDER="$folder" \
		LD_PRELOAD="$TP_PRELOAD" sleep 1.5 &
	local pid=$!
	sleep 0.5
	kill -USR2 "$pid"
	wait "$pid" || die "traced sleep exited with $? after SIGUSR2"
}
run out1 TRACEPROF_TRIGGER_STEPS=3
run out2 TRACEPROF_SCHEDULE=wait=5,warmup=1,active=2
# Without a signal, nothing is saved.
TRACEPROF_STEP=time:20 TRACEPROF_TRIGGER=SIGUSR2 TRACEPROF_FOLDER=out3 traced sleep 0.3 ||
	die "untriggered run failed"
"$PYTHON" - <<'PY'
import glob, json
def one(folder, nsteps, nrec):
    files = glob.glob(folder + "/*.json")
    assert len(files) == 1, (folder, files)
    d = json.load(open(files[0]))
    a, b = d["traceprof"]["steps"]
    assert b - a + 1 == nrec, (folder, a, b)
    ps = sorted(int(e["name"].split("#")[1]) for e in d["traceEvents"]
                if e.get("name", "").startswith("ProfilerStep#"))
    assert ps == list(range(a, b + 1)), (folder, ps)
    # The signal came at ~0.5 s, steps are 20 ms: the capture starts late.
    assert a >= 15, (folder, a)
    print("ok", folder, a, b)
one("out1", 3, 3)
one("out2", 3, 2)  # warmup 1 is not saved: 2 recorded steps
assert not glob.glob("out3/*.json"), glob.glob("out3/*.json")
PY
