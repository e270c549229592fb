#!/usr/bin/env bash
# `traceprof top`'s interactive view (issue 46 item 2), driven in tmux: the
# screen is read with capture-pane while a writer process updates the live
# files (test/lib/genlive.py: rank 3 the straggler, rank 5 stalled, rank 6
# stale, rank 7 finished); it refreshes (rank 5's stalled seconds grow),
# keys sort it (r by rank, s slowest first), the last snapshot stays with
# a "not updated" line when the files go away, and q quits with status 0;
# a terminal curses cannot drive is one traceprof: line.
. "$TP_TOP/test/lib/common.sh"
[ -z "${TP_SANITIZER:-}" ] || skip "traceprof top is Python only: nothing for $TP_SANITIZER to check"
command -v tmux >/dev/null || skip "no tmux (scripts/install-deps --with-optional installs it)"
T="$TP_TOP/scripts/traceprof"
PY=$("$PYTHON" -c 'import sys; print(sys.executable)')
SOCK="$TP_TMP/tmux.sock"
# A socket's path holds at most 107 bytes.
[ ${#SOCK} -lt 100 ] || SOCK=$(mktemp -u /tmp/tp-tmux.XXXXXX)
tm() { tmux -S "$SOCK" "$@"; }

mkdir -p tr/.live
"$PY" "$TP_TOP/test/lib/genlive.py" tr/.live job --duration 60 --interval-ms 100 --step-ms 100 &
writer=$!
trap 'touch tr/.live/stop 2>/dev/null; tm kill-server 2>/dev/null || true; rm -f "$SOCK"; wait $writer 2>/dev/null || true' EXIT

# screen_until PATTERN WHAT: the pane's text once it matches PATTERN (15 s).
screen_until() {
	local i
	for i in $(seq 75); do
		tm capture-pane -p -t top >screen.txt 2>/dev/null || true
		if grep -Eq "$1" screen.txt; then return 0; fi
		sleep 0.2
	done
	die "$2; the screen: $(cat screen.txt)"
}
rows() { grep '^rank ' screen.txt | cut -c1-6 | tr '\n' ,; }

tm -f /dev/null new-session -d -s top -x 180 -y 20 \
	"TERM=xterm '$PY' '$T' top tr --stall-after 2; echo \$? >rc.txt"
screen_until '^rank 6 .*stale' "rank 6 never shown stale"
screen_until '^rank 5 .*stalled [0-9]+ s in cudaStreamSynchronize, inside ncclAllReduce' "rank 5 not stalled"
grep -Eq '^straggler: rank 3 \(median step 2' screen.txt || die "no straggler line: $(cat screen.txt)"
grep -q '^run synthetic: 8 processes in tr/.live' screen.txt || die "header: $(cat screen.txt)"
grep -q 'sorted slowest first' screen.txt || die "not sorted slowest first: $(cat screen.txt)"
case $(rows) in "rank 5,rank 6,rank 3,"*|"rank 6,rank 5,rank 3,"*) ;; *) die "slowest first: $(rows)" ;; esac
cp screen.txt first.txt

# It refreshes: rank 5's seconds in its call grow.
secs() { sed -n 's/^rank 5 .*stalled \([0-9]*\) s in.*/\1/p' "$1"; }
s1=$(secs first.txt)
for i in $(seq 50); do
	tm capture-pane -p -t top >screen.txt
	s2=$(secs screen.txt)
	[ "${s2:-0}" -lt $((s1 + 2)) ] || break
	sleep 0.2
done
[ "${s2:-0}" -ge $((s1 + 2)) ] || die "rank 5's seconds did not grow from $s1: $(cat screen.txt)"

tm send-keys -t top r
screen_until 'sorted by rank' "r did not sort by rank"
[ "$(rows)" = "rank 0,rank 1,rank 2,rank 3,rank 4,rank 5,rank 6,rank 7," ] || die "by rank: $(rows)"
tm send-keys -t top s
screen_until 'sorted slowest first' "s did not sort slowest first"
case $(rows) in "rank 5,rank 6,rank 3,"*|"rank 6,rank 5,rank 3,"*) ;; *) die "slowest first again: $(rows)" ;; esac

# The files go away (the job's folder cleaned up): the last snapshot
# stays, with a line saying why it is not updated.
touch tr/.live/stop
wait $writer
mv tr/.live tr/gone
screen_until '^not updated: top: no live files in tr/.live' "no 'not updated' line once the files went"
grep -q '^rank 5 ' screen.txt || die "the last snapshot's rows went too: $(cat screen.txt)"
mv tr/gone tr/.live

tm send-keys -t top q
for i in $(seq 50); do [ -s rc.txt ] && break; sleep 0.2; done
[ "$(cat rc.txt 2>/dev/null)" = 0 ] || die "q did not quit with status 0 (rc.txt: $(cat rc.txt 2>/dev/null))"

# A pane of 4 rows: the arrows scroll, the line says which rows show.
tm new-session -d -s small -x 180 -y 8 "TERM=xterm '$PY' '$T' top tr"
for i in $(seq 50); do
	tm capture-pane -p -t small >small.txt
	grep -q '^sorted slowest first; rows 1-4 of 8;' small.txt && break
	sleep 0.2
done
grep -q '^sorted slowest first; rows 1-4 of 8;' small.txt || die "small pane: $(cat small.txt)"
tm send-keys -t small r Down Down
for i in $(seq 50); do
	tm capture-pane -p -t small >small.txt
	grep -q '^sorted by rank; rows 3-6 of 8;' small.txt && break
	sleep 0.2
done
[ "$(grep '^rank ' small.txt | cut -c1-6 | tr '\n' ,)" = "rank 2,rank 3,rank 4,rank 5," ] ||
	die "scrolled by rank: $(cat small.txt)"
tm send-keys -t small q

# A terminal curses cannot drive: one traceprof: line, exit 1.
tm new-session -d -s bad -x 180 -y 20 \
	"TERM=no-such-terminal '$PY' '$T' top tr 2>bad.err; echo \$? >badrc.txt"
for i in $(seq 50); do [ -s badrc.txt ] && break; sleep 0.2; done
[ "$(cat badrc.txt 2>/dev/null)" = 1 ] || die "unknown TERM: exit $(cat badrc.txt 2>/dev/null): $(cat bad.err)"
grep -q '^traceprof: top: cannot draw on this terminal (TERM=no-such-terminal: .*); set TERM=xterm, or use --once or --json$' bad.err ||
	die "unknown TERM: $(cat bad.err)"
[ "$(wc -l <bad.err)" = 1 ] || die "unknown TERM: more than one line: $(cat bad.err)"
echo "top view in tmux ok"
