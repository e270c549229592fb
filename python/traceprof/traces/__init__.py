"""Reading and writing trace files, for every command that needs them:

    reader.py      JSON traces as a stream, through the JSON parser
    tail.py        the members after the events (footer, drops)
    pftrace.py     .pftrace, Perfetto's protobuf; wire.py (its wire format)
    events.py      event groups (steps, categories) as summary reads them
    shift.py       moving events to another clock base (merge)
    mergewrite.py  the merged JSON timeline; output.py (the output file,
                   compression, JSON encoding)
    pfmerge.py     Perfetto files into one .pftrace

Nothing here imports the commands (../cli/).
"""
