# Never break the host: >= 100 bad or odd configurations, each run with and
# without the library; same exit status, stdout and program stderr, and one
# explaining "traceprof:" line per problem (test/lib/rel_matrix.py).
. "$TP_TOP/test/lib/common.sh"
prog="$BUILD/test/prog_rel_host"
[ -x "$prog" ] || die "$prog not built"
"$PYTHON" "$TP_TOP/test/lib/rel.py" matrix "$prog" "$TP_LIB" "$TP_TMP"
