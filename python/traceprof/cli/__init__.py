"""The `traceprof` command, one module per job:

    main.py        the COMMAND dispatch, --help, --version; entry() is
                   the pip console command, launch() the launchers' way in
    options.py     run's options (one per TRACEPROF_* variable)
    sigmask.py     the signals run blocks before anything else
    run.py         traceprof run; runenv.py (library, pyboot),
                   runfiles.py (where the files go, the list at the end)
    merge.py       traceprof merge; inputs.py (files and ranks)
    summary.py     traceprof summary; ranks.py (--by rank),
                   summary_comm.py (--by comm), table.py (tables, CSV)

The trace files themselves are read and written by ../traces/, which both
merge and summary use; ../util.py has the messages and the version.
Python 3 standard library only.  Importing the package imports nothing.
"""
