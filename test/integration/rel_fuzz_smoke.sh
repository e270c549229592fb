# CI smoke run of the libFuzzer targets (test/fuzz/): builds them with clang
# (-fsanitize=fuzzer,address,undefined) and runs each for about 20 s over its
# seed corpus.  The 10-minute runs: docs/development.md, "Fuzzing and sanitizers".
# Skipped when clang cannot build a fuzzer.  TP_FUZZ_SECONDS overrides 20.
. "$TP_TOP/test/lib/common.sh"
CLANG=${CLANG:-clang}
command -v "$CLANG" >/dev/null || skip "clang not installed"
secs=${TP_FUZZ_SECONDS:-20}
flags="-g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -std=gnu11
       -D_GNU_SOURCE -I$TP_TOP -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes
       -Wmissing-prototypes -Wno-unused-parameter"
cd "$TP_TOP"
# shellcheck disable=SC2086
"$CLANG" $flags test/fuzz/fuzz_json.c format/json.c format/json_str.c format/json_strcache.c \
	test/fuzz/stub_sink.c -lm \
	-o "$TP_TMP/fuzz_json" 2>"$TP_TMP/cc.err" ||
	{ grep -q "fuzzer" "$TP_TMP/cc.err" && skip "clang cannot build libFuzzer targets here"; cat "$TP_TMP/cc.err"; die "fuzz_json does not build"; }
# shellcheck disable=SC2086
"$CLANG" $flags test/fuzz/fuzz_config.c common/config.c common/log.c collector/schedule.c \
	common/schedule_spec.c common/procfs.c common/fd.c \
	format/template.c -o "$TP_TMP/fuzz_config" || die "fuzz_config does not build"
cd "$TP_TMP"
for t in json config; do
	mkdir -p "corpus_$t"
	cp "$TP_TOP/test/fuzz/corpus_$t/"* "corpus_$t/"
	# The seeds first (each must pass), then new inputs in a scratch corpus.
	./fuzz_$t -runs=0 "corpus_$t" >"$t.seeds.log" 2>&1 || { tail -30 "$t.seeds.log"; die "fuzz_$t fails on its seed corpus"; }
	./fuzz_$t -max_total_time="$secs" -max_len=4096 -timeout=10 -print_final_stats=1 \
		-artifact_prefix="$TP_TMP/$t-" "corpus_$t" >"$t.log" 2>&1 ||
		{ tail -40 "$t.log"; die "fuzz_$t found a problem (artifact in $TP_TMP)"; }
	echo "ok   fuzz_$t: $(grep -Eo 'Done [0-9]+ runs in [0-9]+ second' "$t.log")"
done
