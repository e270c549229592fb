# Issue 30 items 3 and 4: the process's own life stays its own.
#  - Item 3: the flush thread starts when there is first something to flush,
#    never at load: a process that records nothing has one thread, and
#    unshare(CLONE_NEWUSER), which Linux refuses to a multi-threaded
#    process, works in it and in its forked children (`unshare -Ur id`
#    under `traceprof run` too).
#  - Item 4: a child made with glibc clone() (no CLONE_VM) or a raw
#    SYS_clone runs no fork handler and has no flush thread: it exits at
#    once (the default TRACEPROF_EXIT_TIMEOUT_S is 60 s), records nothing,
#    and the parent's trace is saved as usual.
#  - Item 12: a program that chroots before its last step: every window,
#    the last one too, is in the real folder (absolute and relative
#    TRACEPROF_FOLDER), none under the jail, and the live file says
#    finished there.
#  - Item 11: under the program's own RLIMIT_AS with a little room, its
#    threads' mallocs succeed as without traceprof, one `traceprof:` line
#    says what is not recorded, and the trace counts the lost events.
#  - Minor: under RLIMIT_NOFILE=32, traceprof holds at most 2 descriptors
#    while a window records: the root anchored at start (a chroot must not
#    move the trace, item 12) and the window's file being written.  The
#    sampler's /proc/self/stat is opened at each read, the window's folder
#    reached by its path from the anchor.  The program opens at least 26
#    files where it opens 28 without traceprof (22 before issue 30, 24
#    before the folder and /proc/self/stat were let go).
. "$TP_TOP/test/lib/common.sh"
unset TRACEPROF_LIVE # as by default: the live file is on
prog="$BUILD/test/prog_own_life"
[ -x "$prog" ] || skip "$prog not built"

# Item 3: one thread while nothing is recorded.  Under TSan its own
# background thread is there too: compare with the untraced count.
want=$("$prog" threads)
got=$(traced "$prog" threads)
[ "$got" = "$want" ] || die "threads: $got with traceprof, $want without"

if "$prog" unshare >/dev/null 2>&1; then
	out=$(traced "$prog" unshare 2>"$TP_TMP/unshare.err") ||
		die "unshare: exit $?: $out $(cat "$TP_TMP/unshare.err")"
	[ "$out" = ok ] || die "unshare: $out"
	if command -v unshare >/dev/null && unshare -Ur true 2>/dev/null; then
		out=$(TRACEPROF_FOLDER="$TP_TMP/ns" "$BUILD/traceprof" run -- unshare -Ur id -u 2>"$TP_TMP/ns.err") ||
			die "traceprof run -- unshare -Ur id: exit $?: $(cat "$TP_TMP/ns.err")"
		[ "$out" = 0 ] || die "traceprof run -- unshare -Ur id -u printed '$out'"
	fi
else
	echo "unshare(CLONE_NEWUSER) unavailable here even without traceprof; its cases left out"
fi

# Item 4: the child's life, in ms, must be short with the default timeout.
for how in glibc raw; do
	rm -rf "$TP_TMP/clone"
	out=$(cd "$TP_TMP" && env -u TRACEPROF_EXIT_TIMEOUT_S TRACEPROF_FOLDER="$TP_TMP/clone" \
		timeout 120 env LD_PRELOAD="$TP_PRELOAD" "$prog" clone $how 2>"$TP_TMP/clone.err") ||
		die "clone $how: exit $?: $out $(cat "$TP_TMP/clone.err")"
	case "$out" in
	"ok "*) ;;
	*) die "clone $how: $out" ;;
	esac
	ms=${out#ok }
	[ "$ms" -lt 5000 ] || die "clone $how: the child took $ms ms to exit: $(cat "$TP_TMP/clone.err")"
	# ASan itself warns when a clone()d child's stack is not one it knows
	# (__asan_handle_no_return): its lines, not traceprof's, are left out.
	[ "${TP_SANITIZER:-}" != asan ] ||
		sed -i -e '/^==[0-9]*==WARNING: ASan is ignoring requested __asan_handle_no_return/d' \
			-e '/^False positive error reports may follow$/d' \
			-e '/^For details see https:..github.com.google.sanitizers.issues.189$/d' "$TP_TMP/clone.err"
	[ ! -s "$TP_TMP/clone.err" ] || die "clone $how: printed $(cat "$TP_TMP/clone.err")"
	n=$(ls "$TP_TMP/clone" | wc -l)
	[ "$n" = 1 ] || die "clone $how: $n trace files: $(ls "$TP_TMP/clone")"
done
# Item 12 (as root only: chroot needs CAP_SYS_CHROOT).
if [ "$(id -u)" = 0 ]; then
	for folder in "$TP_TMP/abs" rel; do
		rm -rf "$TP_TMP/jail" "$TP_TMP/start"
		mkdir -p "$TP_TMP/jail" "$TP_TMP/start"
		out=$(cd "$TP_TMP/start" && env TRACEPROF_FOLDER="$folder" TRACEPROF_SCHEDULE=active=1 \
			LD_PRELOAD="$TP_PRELOAD" "$prog" chroot "$TP_TMP/jail" 3 2>"$TP_TMP/chroot.err") ||
			die "chroot $folder: exit $?: $out $(cat "$TP_TMP/chroot.err")"
		[ "$out" = ok ] || die "chroot $folder: $out"
		jailed=$(cd "$TP_TMP/jail" && find . -type f)
		[ -z "$jailed" ] || die "chroot $folder: written under the jail: $jailed"
		case $folder in /*) dir=$folder ;; *) dir=$TP_TMP/start/$folder ;; esac
		n=$(ls "$dir" 2>/dev/null | grep -c "step3.trace.$TP_EXT" || true)
		[ "$n" = 1 ] || die "chroot $folder: the last window is not in $dir: $(ls -R "$TP_TMP/start" "$dir" 2>&1)"
		# The live file too: written after the chroot, still in the folder.
		grep -q '"state":"finished"' "$dir"/.live/*.json ||
			die "chroot $folder: the live file does not say finished: $(cat "$dir"/.live/*.json 2>&1)"
	done
else
	echo "not root: the chroot case is left out"
fi
# Item 11: 8 threads alive together under the current size + 24 MiB.
if [ -z "${TP_SANITIZER:-}" ]; then
	out=$("$prog" rlimit 24 8) || die "rlimit untraced: $out"
	rm -rf "$TP_TMP/as"
	out=$(TRACEPROF_FOLDER="$TP_TMP/as" TRACEPROF_LOG=info traced "$prog" rlimit 24 8 \
		2>"$TP_TMP/as.err") || die "rlimit: exit $?: $out $(cat "$TP_TMP/as.err")"
	[ "$out" = ok ] || die "rlimit: $out $(cat "$TP_TMP/as.err")"
	grep -q '^traceprof: no room for a recording buffer' "$TP_TMP/as.err" ||
		die "rlimit: no line about the events not recorded: $(cat "$TP_TMP/as.err")"
	grep 'nothing recorded (no CUDA call' "$TP_TMP/as.err" && die "rlimit: says nothing was recorded"
	"$PYTHON" - "$TP_TMP/as" <<'PY' || die "rlimit: the trace does not count the lost events"
import sys
sys.path.insert(0, __import__("os").environ["TP_TOP"] + "/test/lib")
from rel import load_trace, trace_files
files = trace_files(sys.argv[1])
foot = load_trace(files[-1])["traceprof"]
lost, written = foot.get("events_lost_no_memory", 0), foot["events_written"]
# 8 threads x 1000 x 2 events, each written or counted.
assert lost + written >= 16000, (lost, written)
assert lost > 0, foot
PY
	# The minor: descriptors under RLIMIT_NOFILE=32.
	base=$(bash -c "ulimit -n 32 && '$prog' nofile 32" 2>/dev/null)
	got=$(bash -c "ulimit -n 32 && TRACEPROF_FOLDER='$TP_TMP/nofile' LD_PRELOAD='$TP_PRELOAD' '$prog' nofile 32" 2>"$TP_TMP/nofile.err")
	[ "$got" -ge $((base - 2)) ] ||
		die "nofile: $got files with traceprof, $base without; held then: $(grep '^fd ' "$TP_TMP/nofile.err" | tr '\n' ' ')"
	ls "$TP_TMP/nofile"/*."$TP_EXT" >/dev/null || die "nofile: no trace saved: $(cat "$TP_TMP/nofile.err")"
	[ -z "$(find "$TP_TMP/nofile" -name '.*tmp*')" ] || die "nofile: temporary files left"
	echo "nofile: $got files with traceprof, $base without"
else
	echo "under a sanitizer (its own address space and descriptors): rlimit and nofile left out"
fi
echo ok
