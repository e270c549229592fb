"""The `traceprof` command (scripts/traceprof is its launcher), one module
per job:

    cli.py         the COMMAND dispatch, --help, --version
    options.py     run's options (one per TRACEPROF_* variable)
    sigmask.py     the signals run blocks before anything else
    run.py         traceprof run; runenv.py (library, pyboot),
                   runfiles.py (where the files go, the list at the end)
    merge.py       traceprof merge; inputs.py (files and ranks),
                   mergewrite.py (the timeline), shift.py (times),
                   output.py (the output file, JSON encoding),
                   pfmerge.py (Perfetto files into one .pftrace)
    summary.py     traceprof summary; ranks.py (--by rank),
                   events.py (event groups), table.py (tables, CSV)
    reader.py      JSON traces as a stream, through the JSON parser;
                   tail.py (members after the events), pftrace.py
                   (.pftrace, Perfetto's protobuf), wire.py (its wire
                   format)
    util.py        messages, the launcher's folder, the version

Python 3 standard library only.  Importing the package imports nothing.
"""
