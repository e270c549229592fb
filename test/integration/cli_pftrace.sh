#!/usr/bin/env bash
# .pftrace files (Perfetto's protobuf, TRACEPROF_FORMAT=perfetto):
# `traceprof summary` reads their slices (encoded here by the real protoc
# with Perfetto's published schema from a text proto: interned and inline
# names, an incremental clock and an absolute one, nested slices).
. "$TP_TOP/test/lib/common.sh"
T="$TP_TOP/python/traceprof"
PROTO=${TP_PERFETTO_PROTO:-$(dirname "$TP_TOP")/shared/clients/perfetto_trace.proto}
[ -f "$PROTO" ] || skip "Perfetto's schema not found ($PROTO)"
command -v protoc >/dev/null || skip "protoc not installed (Debian: protobuf-compiler)"

# Clock 64 is incremental (0 at MONOTONIC 1,000,000 ns) and the default;
# one packet gives its time on MONOTONIC (3) itself.
#   thread track 11: cudaLaunchKernel 1000-5000 ns holding "inner" 2000-3000,
#                    cudaLaunchKernel 10000-12000 ns
#   stream track 22: sm90_gemm (inline name) 4000-9000 ns; an instant at 9500
cat >t.txtpb <<'EOF'
packet { trusted_packet_sequence_id: 1 sequence_flags: 1
  clock_snapshot { clocks { clock_id: 3 timestamp: 1000000 }
                   clocks { clock_id: 64 timestamp: 0 is_incremental: true } }
  trace_packet_defaults { timestamp_clock_id: 64 } }
packet { trusted_packet_sequence_id: 1
  track_descriptor { uuid: 11 name: "main" thread { pid: 500 tid: 500 } } }
packet { trusted_packet_sequence_id: 1 timestamp: 1000
  interned_data { event_names { iid: 1 name: "cudaLaunchKernel" }
                  event_names { iid: 2 name: "inner" }
                  event_categories { iid: 1 name: "cuda_runtime" } }
  track_event { type: TYPE_SLICE_BEGIN track_uuid: 11 name_iid: 1 category_iids: 1 } }
packet { trusted_packet_sequence_id: 1 timestamp: 1000
  track_event { type: TYPE_SLICE_BEGIN track_uuid: 11 name_iid: 2 } }
packet { trusted_packet_sequence_id: 1 timestamp: 1000
  track_event { type: TYPE_SLICE_END track_uuid: 11 } }
packet { trusted_packet_sequence_id: 1 timestamp: 1000
  track_event { type: TYPE_SLICE_BEGIN track_uuid: 22 name: "sm90_gemm" categories: "kernel" } }
packet { trusted_packet_sequence_id: 1 timestamp: 1000
  track_event { type: TYPE_SLICE_END track_uuid: 11 } }
packet { trusted_packet_sequence_id: 1 timestamp: 4000
  track_event { type: TYPE_SLICE_END track_uuid: 22 } }
packet { trusted_packet_sequence_id: 1 timestamp: 1009500 timestamp_clock_id: 3
  track_event { type: TYPE_INSTANT track_uuid: 22 name: "mark" } }
packet { trusted_packet_sequence_id: 1 timestamp: 1000
  track_event { type: TYPE_SLICE_BEGIN track_uuid: 11 name_iid: 1 category_iids: 1 } }
packet { trusted_packet_sequence_id: 1 timestamp: 2000
  track_event { type: TYPE_SLICE_END track_uuid: 11 } }
EOF
protoc --encode=perfetto.protos.Trace -I "$(dirname "$PROTO")" "$PROTO" <t.txtpb >t.pftrace
# The file is what Perfetto's schema says: protoc reads it back.
protoc --decode=perfetto.protos.Trace -I "$(dirname "$PROTO")" "$PROTO" <t.pftrace | grep -q sm90_gemm ||
	die "protoc cannot read back t.pftrace"

"$PYTHON" "$T" summary t.pftrace --csv >all.csv 2>err.txt || { cat err.txt; die "summary of t.pftrace failed"; }
cat all.csv
"$PYTHON" - <<'PY' || die "summary of t.pftrace is wrong"
import csv
rows = {r["name"]: r for r in csv.DictReader(open("all.csv"))}
assert set(rows) == {"cudaLaunchKernel", "inner", "sm90_gemm"}, rows
def row(n):
    r = rows[n]
    return int(r["calls"]), float(r["total_us"]), float(r["self_us"]), float(r["min_us"]), float(r["max_us"])
assert row("cudaLaunchKernel") == (2, 6.0, 5.0, 2.0, 4.0), row("cudaLaunchKernel")
assert row("inner") == (1, 1.0, 1.0, 1.0, 1.0), row("inner")
assert row("sm90_gemm") == (1, 5.0, 5.0, 5.0, 5.0), row("sm90_gemm")
# Window: first event (1 us) to last (12 us) = 11 us.
assert abs(float(rows["sm90_gemm"]["percent_window"]) - 100 * 5 / 11) < 0.01, rows["sm90_gemm"]
PY
"$PYTHON" "$T" summary t.pftrace --by api --csv >api.csv
grep -q '^cudaLaunchKernel,2,' api.csv && ! grep -q inner api.csv || die "--by api: $(cat api.csv)"
"$PYTHON" "$T" summary t.pftrace --by kernel --csv >kernel.csv
grep -q '^sm90_gemm,1,' kernel.csv || die "--by kernel: $(cat kernel.csv)"
gzip -k t.pftrace
"$PYTHON" "$T" summary t.pftrace.gz --csv >all-gz.csv
diff -u all.csv all-gz.csv || die "summary of the .gz differs"

# A file cut short: a message, not a traceback.
head -c 60 t.pftrace >cut.pftrace
if "$PYTHON" "$T" summary cut.pftrace 2>err.txt; then die "a truncated .pftrace accepted"; fi
grep -q "truncated\|cut short" err.txt && ! grep -q Traceback err.txt || die "truncated: $(cat err.txt)"

# summary --by rank reads .pftrace too (cli_merge_pftrace.sh checks its
# figures): this file has no steps, which it says in one line.
if "$PYTHON" "$T" summary --by rank t.pftrace 2>err.txt; then die "--by rank found steps in t.pftrace"; fi
[ "$(wc -l <err.txt)" = 1 ] && grep -q "no ProfilerStep#N events" err.txt || die "--by rank: $(cat err.txt)"
echo "pftrace: summary reads slices"
