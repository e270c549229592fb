# `make demo` (scripts/demo) prints the command it runs; pasted into a shell
# from the source tree, that line must do the same thing (issue 21 item 12:
# it left out the LD_LIBRARY_PATH of the stand-in runtime, and the pasted
# command then failed with CUDA error 35).  Writes into $TP_TMP only
# (DEMO_OUT).
. "$TP_TOP/test/lib/common.sh"
[ -x "$BUILD/test/prog_demo_train" ] || die "prog_demo_train not built"
[ -e "$BUILD/standin/libcudart.so.13" ] || skip "no stand-in runtime built ($BUILD/standin)"
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
	gpu=1
else
	gpu=0
fi
build_rel=$BUILD
case "$BUILD" in "$TP_TOP"/*) build_rel=${BUILD#"$TP_TOP"/} ;; esac

DEMO_OUT="$TP_TMP/demo" BUILD="$build_rel" sh "$TP_TOP/scripts/demo" >demo.out 2>&1 ||
	die "scripts/demo failed: $(tail -20 demo.out)"
line=$(grep '^+ ' demo.out | head -1)
[ -n "$line" ] || die "the demo printed no command: $(head -20 demo.out)"
echo "printed: $line"
ls "$TP_TMP/demo" >first.list

rm -rf "$TP_TMP/demo"
(cd "$TP_TOP" && sh -c "${line#+ }") >pasted.out 2>&1 || die "the pasted command failed: $(cat pasted.out)"
ls "$TP_TMP/demo" >second.list
cmp -s first.list second.list || die "different files: $(cat first.list) vs $(cat second.list)"
# The runtime the pasted command found works (the stand-in here: one
# device, no error 35).
if [ $gpu = 0 ]; then
	grep -q 'demo_train: 1 CUDA device(s)' pasted.out || die "the pasted command's program found no device: $(cat pasted.out)"
fi
! grep -q 'error 35' pasted.out || die "CUDA error 35 in the pasted run: $(cat pasted.out)"
grep -q 'demo_train: 1 CUDA device(s)\|demo_train: [0-9]* CUDA device' demo.out || die "demo output: $(cat demo.out)"
echo "ok: the pasted command wrote $(tr '\n' ' ' <second.list)"
