# Issue 30 items 8 and 14: `traceprof run` gives the program the signals it
# gets when run directly, as real shells see it.
#   - SIGPIPE and SIGXFSZ have their default action in the program (Python,
#     which the launcher runs in, ignores both): `yes | head -n1` dies of
#     SIGPIPE (141, no "Broken pipe"), a write past `ulimit -f` of SIGXFSZ.
#   - A signal sent to the whole process group (the program is in it) is not
#     forwarded a second time: `kill -TERM -PGID` and `timeout -s TERM`
#     (which signals the launcher, then the group) deliver one SIGTERM, a
#     kill to the launcher alone still one.
#   - A program that stops itself stops the launcher too (a shell's job is
#     then "Stopped"); continuing the group, or the launcher alone,
#     continues the program.
. "$TP_TOP/test/lib/common.sh"
T="$BUILD/traceprof"
count="$BUILD/test/prog_sig_count"
[ -x "$T" ] || die "$T not built"
[ -x "$count" ] || die "$count not built"
export TRACEPROF_FOLDER="$TP_TMP/tr"

# ---- SIGPIPE, SIGXFSZ --------------------------------------------------
pipe_case() { # command words...: prints "STATUS" then the stderr
	bash -c '"$@" 2>err.txt | head -n1 >/dev/null; echo "${PIPESTATUS[0]}"; cat err.txt' bash "$@"
}
want=$(pipe_case yes)
got=$(pipe_case "$T" run -q -- yes)
[ "$got" = "$want" ] || die "yes | head -n1: status and stderr $(echo $got) with traceprof run, $(echo $want) without"
echo "ok   yes | head -n1: $(echo $want) with and without traceprof run"
fsize_case() {
	bash -c 'ulimit -f 1; "$@" if=/dev/zero of=big bs=4096 count=4 2>err.txt; echo $?; grep -v "^traceprof:" err.txt || true' bash "$@"
}
want=$(fsize_case dd)
got=$(fsize_case "$T" run -q -- dd)
[ "$got" = "$want" ] || die "a write past ulimit -f: $(echo $got) with traceprof run, $(echo $want) without"
echo "ok   a write past ulimit -f: $(echo $want) with and without traceprof run"

# ---- group signals -----------------------------------------------------
start_job() { # in its own process group (set -m), like a shell's job
	rm -f cnt.txt
	set -m
	"$@" >cnt.txt 2>cnt.err &
	job=$!
	set +m
	for _ in $(seq 300); do
		grep -q ready cnt.txt 2>/dev/null && return
		sleep 0.02
	done
	die "the program never got ready: $(cat cnt.err)"
}
end_job() { # expected TERM count
	wait $job || die "the job failed ($?): $(cat cnt.err)"
	grep -q "^TERM $1 INT 0 HUP 0$" cnt.txt || die "$2: $(tail -1 cnt.txt), want TERM $1"
	echo "ok   $2: TERM $1"
}
start_job "$T" run -q -- "$count" 1.5
kill -TERM -- -$job
end_job 1 "kill -TERM to the job's process group"
start_job "$T" run -q -- "$count" 1.5
kill -TERM $job
end_job 1 "kill -TERM to traceprof run alone"
if command -v timeout >/dev/null; then
	# timeout signals its child, then its process group.  Both usually
	# coalesce into one delivery to a program run directly; if timeout is
	# scheduled out between its two kills, the program gets two, with or
	# without traceprof: a few tries.
	# An attempt where the program was not ready yet (a slow start of the
	# launcher's Python: the signal then kills it before its handler is
	# installed, as it would a program run directly) does not count.
	for attempt in 1 2 3 4; do
		timeout -s TERM 2.5 "$T" run -q -- "$count" 3.5 >cnt.txt 2>cnt.err || true
		! grep -q "^TERM 1 INT 0 HUP 0$" cnt.txt || break
		echo "attempt $attempt: $(tail -1 cnt.txt)"
	done
	grep -q "^TERM 1 INT 0 HUP 0$" cnt.txt || die "timeout -s TERM: $(tail -1 cnt.txt), want TERM 1"
	echo "ok   timeout -s TERM: TERM 1"
fi

# ---- stop and continue --------------------------------------------------
state() { sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1; }
wait_state() { # pid, state letter
	for _ in $(seq 250); do
		[ "$(state "$1")" = "$2" ] && return 0
		sleep 0.02
	done
	return 1
}
for how in group alone; do
	rm -f stop.txt
	set -m
	"$T" run -q -- sh -c 'echo stopping; kill -STOP $$; echo resumed' >stop.txt 2>stop.err &
	job=$!
	set +m
	wait_state $job T || { kill -KILL -- -$job; die "the program stopped itself; traceprof run did not stop (state $(state $job)): $(cat stop.txt stop.err)"; }
	if [ $how = group ]; then kill -CONT -- -$job; else kill -CONT $job; fi
	rc=0
	wait $job || rc=$?
	[ $rc = 0 ] || die "after SIGCONT ($how): status $rc: $(cat stop.txt stop.err)"
	grep -q resumed stop.txt || die "SIGCONT to the $how did not continue the program: $(cat stop.txt)"
	echo "ok   stopped with the program, continued ($how)"
done

# The same with a real interactive bash on a terminal: a program that stops
# itself, and a ^Z typed at it, give "Stopped" and the prompt back; fg
# continues it to its end.
command -v bash >/dev/null || { echo "note: no bash: terminal cases not run"; echo ok; exit 0; }
"$PYTHON" - "$T" <<'PY'
import os, pty, select, sys, time
T = sys.argv[1]
pid, fd = pty.fork()
if pid == 0:
    os.execvp("bash", ["bash", "--norc", "--noprofile", "-i"])
out = b""
def read_until(text, t):
    global out
    end = time.time() + t
    while time.time() < end and text.encode() not in out:
        if select.select([fd], [], [], 0.1)[0]:
            try:
                out += os.read(fd, 4096)
            except OSError:
                break
    return text.encode() in out
def send(s):
    os.write(fd, s.encode())
def case(name, cmd, ztyped):
    global out
    out = b""
    send(cmd + "\n")
    if ztyped:
        if not read_until("started", 20):
            raise SystemExit("FAIL: %s: never started: %r" % (name, out[-300:]))
        time.sleep(0.3)
        send("\x1a")
    if not read_until("Stopped", 20):
        raise SystemExit("FAIL: %s: the shell never saw the job stopped: %r" % (name, out[-300:]))
    send("fg\n")
    send("echo status=$?\n")
    if not read_until("status=0", 20):
        raise SystemExit("FAIL: %s: fg did not run it to its end: %r" % (name, out[-300:]))
    print("ok   terminal, %s: Stopped, then fg ran it to its end" % name)
send("PS1='$ '\n")
case("the program stops itself",
     "%s run -q -- sh -c 'kill -STOP $$; echo resumed'" % T, False)
case("^Z typed", "%s run -q -- sh -c 'echo started; sleep 1; echo done'" % T, True)
send("exit\n")
os.waitpid(pid, 0)
PY
echo ok
