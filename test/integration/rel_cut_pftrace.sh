# Issue 44 for Perfetto files: rel_cut.sh's deaths (SIGKILL from outside,
# abort(), a NULL dereference; zstd and gzip) with TRACEPROF_FORMAT=perfetto.
# The writer hands the temporary file whole TracePackets at each drain;
# `traceprof recover` and `traceprof run` keep every whole packet and add
# the trace's name and a footer saying it was cut.  Each cut .pftrace must
# decode with Perfetto's schema (protoc, test/lib/pftrace.py, where it is
# here), hold every step that ended a second before the death with its
# events, be named after its last step, and read in `summary`.
. "$TP_TOP/test/lib/common.sh"
TP_CUT_FORMAT=perfetto exec bash "$TP_TOP/test/integration/rel_cut.sh"
