#!/usr/bin/env bash
# TRACEPROF_ON_SAVE (collector/onsave.c): the command runs after each file is
# saved with {path} quoted, is not itself traced, and with
# TRACEPROF_NUM_TRACES_TO_KEEP=0 the local file goes once the command
# succeeded; a failing command is logged and changes nothing else.
. "$TP_TOP/test/lib/common.sh"
T="$BUILD/traceprof"
P="$BUILD/test/prog_demo_train"
mkdir up
# 1. Copy each file; three windows.  The command records its LD_PRELOAD.
"$T" run --folder "$PWD/a b" --schedule wait=1,warmup=0,active=1,repeat=3 \
	--on-save 'cp {path} up/ && echo "pre=[$LD_PRELOAD]" >>up/env.txt' -- "$P" 8 1 >/dev/null 2>err.txt \
	|| { cat err.txt; die "run failed"; }
n_local=$(ls "a b"/*.$TP_EXT | wc -l)
n_up=$(ls up/*.$TP_EXT | wc -l)
[ "$n_local" = 3 ] && [ "$n_up" = 3 ] || { cat err.txt; die "local $n_local, uploaded $n_up (want 3 and 3)"; }
for f in "a b"/*.$TP_EXT; do cmp "$f" "up/$(basename "$f")" || die "copy of $f differs"; done
! grep -q traceprof up/env.txt || die "the command ran with libtraceprof preloaded: $(cat up/env.txt)"
# 2. keep=0: deleted locally after a successful upload.
rm -f up/*
"$T" run --folder "$PWD/k0" --keep 0 --schedule wait=1,warmup=0,active=1,repeat=2 \
	--on-save 'sleep 0.2; cp "$1" up/' -- "$P" 6 1 >/dev/null 2>err.txt || { cat err.txt; die "keep=0 run failed"; }
[ "$(ls up/*.$TP_EXT | wc -l)" = 2 ] || { cat err.txt; die "keep=0: not uploaded"; }
[ -z "$(ls k0 2>/dev/null)" ] || die "keep=0: local files left: $(ls k0)"
# 3. A failing command: logged, the file kept, the exit code unchanged.
set +e
# (The program records something: a process that records nothing writes no
# file, so bash alone would give the command nothing to run on.)
"$T" run --folder "$PWD/f" --on-save 'echo uploading {path}; exit 5' -- bash -c '"$1" 1 1 >/dev/null; exit 4' sh "$P" >out.txt 2>err.txt
rc=$?
set -e
[ $rc = 4 ] || die "exit code changed to $rc by a failing ON_SAVE"
grep -q "TRACEPROF_ON_SAVE.*failed with exit status 5" err.txt || die "failure not logged: $(cat err.txt)"
ls f/*.$TP_EXT >/dev/null || die "file of a failed upload deleted"
# 4. keep=0 and a failing command: the file stays.
"$T" run --folder "$PWD/g" --keep 0 --on-save 'false' -- "$P" 1 1 >/dev/null 2>err.txt
ls g/*.$TP_EXT >/dev/null || die "keep=0 deleted a file whose upload failed"
# 5. keep=0 without a command: deleted right after the save (Composer), with a warning.
"$T" run --folder "$PWD/h" --keep 0 -- "$P" 1 1 >/dev/null 2>err.txt
grep -q "NUM_TRACES_TO_KEEP=0 without TRACEPROF_ON_SAVE" err.txt || die "no warning for keep=0 alone: $(cat err.txt)"
[ -z "$(ls h 2>/dev/null)" ] || die "keep=0 without ON_SAVE kept $(ls h)"
# 6. keep=1 with uploads slower than the saves: rotation waits for a file's
#    upload before deleting it, so every upload gets its file, and once they
#    are done (process exit waits for them) only the newest stays.
rm -f up/*
"$T" run --folder "$PWD/k1" --keep 1 --schedule wait=1,warmup=0,active=1,repeat=3 \
	--on-save 'sleep 0.5; cp "$1" up/' -- "$P" 8 1 >/dev/null 2>err.txt || { cat err.txt; die "keep=1 run failed"; }
grep -q "failed" err.txt && die "keep=1: an upload failed: $(cat err.txt)"
[ "$(ls up/*.$TP_EXT | wc -l)" = 3 ] || { cat err.txt; die "keep=1: uploaded $(ls up)"; }
[ "$(ls k1/*.$TP_EXT | wc -l)" = 1 ] || { cat err.txt; die "keep=1: local files: $(ls k1)"; }
[ "$(ls k1)" = "rank0.step5.trace.$TP_EXT" ] || die "keep=1 kept $(ls k1), not the newest"
echo "on-save ok"
