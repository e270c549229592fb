# rel_cut_rotate.sh with TRACEPROF_FORMAT=perfetto: finishing a cut .pftrace
# window rotates the dead process's older .pftrace windows as its own save
# would have (recover.py reads their header instant's traceprofWindow).
. "$TP_TOP/test/lib/common.sh"
TP_CUT_FORMAT=perfetto exec bash "$TP_TOP/test/integration/rel_cut_rotate.sh"
