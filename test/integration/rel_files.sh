# Files: a symlink planted at the final or the temporary name is never
# followed; temporary files are removed on error paths; SIGKILL leaves at most
# a temporary file (name starting with '.'), never a truncated final one;
# files are created 0644 under the umask.
. "$TP_TOP/test/lib/common.sh"
life="$BUILD/test/prog_rel_life"
host="$BUILD/test/prog_rel_host"
[ -x "$life" ] && [ -x "$host" ] || die "test programs not built"
PRE="$TP_PRELOAD"

# 1. A symlink at the final name, without and with overwrite.
echo precious >victim
for ow in 0 1; do
	mkdir -p "sym$ow"
	ln -s ../victim "sym$ow/t.json"
	TRACEPROF_FOLDER="sym$ow" TRACEPROF_FILENAME=t.json TRACEPROF_OVERWRITE=$ow \
		LD_PRELOAD="$PRE" "$host" 2 0 5 0 >/dev/null 2>"sym$ow.err" || die "host failed (overwrite=$ow)"
	[ "$(cat victim)" = precious ] || die "the symlink's target was written (overwrite=$ow)"
	if [ $ow = 0 ]; then
		[ -L sym0/t.json ] || die "the planted symlink was replaced without overwrite"
		[ -f sym0/t.1.json ] || die "no suffixed file next to the planted symlink: $(ls -a sym0)"
	else
		[ -f sym1/t.json ] && [ ! -L sym1/t.json ] || die "overwrite did not replace the link itself"
	fi
done
echo "ok   symlink at the final name"

# 2. Symlinks at the temporary names: the shell's pid is the program's after
#    exec, so the names ".t.json.tmp.PID.N" are known in advance.
mkdir -p symtmp
sh -c 'for n in 0 1 2 3; do ln -s ../victim "symtmp/.t.json.tmp.$$.$n"; done
       exec env TRACEPROF_FOLDER=symtmp TRACEPROF_FILENAME=t.json LD_PRELOAD="$1" "$2" 2 0 5 0' \
	sh "$PRE" "$host" >/dev/null 2>symtmp.err || die "host failed with planted temporary names"
[ "$(cat victim)" = precious ] || die "a planted temporary name was followed"
[ -f symtmp/t.json ] || die "no trace next to planted temporary names: $(ls -a symtmp)"
[ "$(find symtmp -name '.t.json.tmp.*' -type l | wc -l)" = 4 ] || die "planted links changed"
echo "ok   symlinks at the temporary names"

# 3. Modes under several umasks (files 0644 & ~umask, folders 0755 & ~umask).
for um in 022 077 002 027; do
	(umask $um && TRACEPROF_FOLDER="mode$um/sub" LD_PRELOAD="$PRE" "$host" 2 0 5 0 >/dev/null 2>&1)
	f=$(find "mode$um" -name '*.json' -type f)
	[ -n "$f" ] || die "no file written under umask $um"
	want=$(printf '%o' $((0644 & ~0$um)))
	got=$(stat -c %a "$f")
	[ "$got" = "$want" ] || die "umask $um: file mode $got, want $want"
	wantd=$(printf '%o' $((0755 & ~0$um)))
	gotd=$(stat -c %a "mode$um/sub")
	[ "$gotd" = "$wantd" ] || die "umask $um: folder mode $gotd, want $wantd"
done
echo "ok   modes under umask 022 077 002 027"

# 4. Error paths remove the temporary file: final name is a folder
#    (rename fails), file size limit (write fails), disk full in a tmpfs.
mkdir -p errdir/rank0.step2.trace.json/x
TRACEPROF_FOLDER=errdir TRACEPROF_OVERWRITE=1 LD_PRELOAD="$PRE" "$host" 2 0 5 0 >/dev/null 2>errdir.err
grep -q 'failed' errdir.err || die "no message when the rename fails: $(cat errdir.err)"
[ -z "$(find errdir -name '.*tmp*')" ] || die "temporary file left after a failed rename"
(ulimit -f 8 && TRACEPROF_FOLDER=fsize LD_PRELOAD="$PRE" "$host" 4 4 2000 0 >/dev/null 2>fsize.err)
grep -q 'File too large' fsize.err || die "no message at RLIMIT_FSIZE: $(cat fsize.err)"
[ -z "$(find fsize -name '.*tmp*')" ] || die "temporary file left at RLIMIT_FSIZE"
echo "ok   temporary files removed on error paths"

# 5. SIGKILL at random moments, while recording and while saving a large
#    trace: never a final file that is not a complete trace.
"$PYTHON" - "$life" <<'PY'
import os, random, signal, subprocess, sys, time
sys.path.insert(0, os.path.join(os.environ["TP_TOP"], "test", "lib"))
import rel
life, pre = sys.argv[1], os.environ["TP_PRELOAD"]
random.seed(1234)
finals = temps = 0
for i in range(12):
    folder = "kill%d" % i
    env = dict(os.environ, LD_PRELOAD=pre, TRACEPROF_FOLDER=folder,
               TRACEPROF_BUFFER_EVENTS="1048576")
    # "big": 400k markers in step 0, then a loop; a schedule saves a window
    # while the loop runs, so kills land in writes and renames too.
    env["TRACEPROF_SCHEDULE"] = "active=2"
    p = subprocess.Popen([life, "big", "400000"], env=env, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    time.sleep(random.uniform(0.0, 0.8))
    p.send_signal(signal.SIGKILL)
    p.wait()
    if not os.path.isdir(folder):
        continue
    for f in os.listdir(folder):
        if f.startswith("."):
            temps += 1
            continue
        finals += 1
        try:
            rel.load_trace(os.path.join(folder, f))
        except Exception as e:  # noqa: BLE001
            rel.fail("SIGKILL left a final file that is not a complete trace: %s: %s" % (f, e))
print("ok   SIGKILL x12: %d complete final files, %d temporary files, none truncated" % (finals, temps))
PY
echo PASS
