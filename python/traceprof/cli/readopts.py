"""The reading options every command that reads traces takes (summary,
merge, export): --max-value-mb, the largest single value or packet decoded
(traces/reader.py's max_value)."""

from ..traces import reader


def add(p):
    p.add_argument("--max-value-mb", type=int, default=reader.MAX_VALUE_MB, metavar="MB",
                   help="the largest single JSON value (an event, a name) or Perfetto packet "
                        "read, in MiB (default %d): a larger one is refused, so that a "
                        "corrupt file or a decompression bomb costs bounded time and memory"
                        % reader.MAX_VALUE_MB)


def apply(p, a):
    """Sets the reader's limit from the parsed arguments a of parser p."""
    if not 1 <= a.max_value_mb <= 1 << 20:
        p.error("--max-value-mb %d: give a size in MiB from 1 to %d, such as %d (the "
                "default)" % (a.max_value_mb, 1 << 20, reader.MAX_VALUE_MB))
    reader.set_max_value_mb(a.max_value_mb)
