"""bench/run's rows, by job: common.py (settings, table, helpers), host.py
(rows 1-5), flush.py (6-8, 12-15), torch_rows.py (9, 10), cold.py (11)."""
