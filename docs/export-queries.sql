-- The queries of README's "Reading the result", over the dataset of
--   traceprof export --parquet traceprof_export traceprof_traces/JOB
-- in DuckDB (pip install duckdb; `duckdb` on the command line reads the same).
-- test/integration/export_parquet.sh runs each one as written here.

-- name: slowest_rank_per_step
-- Which rank was slowest in each step, against the step's median rank.
SELECT step,
       arg_max(rank, duration_ns) AS slowest_rank,
       max(duration_ns) / 1e6 AS slowest_ms,
       median(duration_ns) / 1e6 AS median_ms
FROM read_parquet('traceprof_export/**/*.parquet', hive_partitioning = true)
WHERE name LIKE 'ProfilerStep#%'
GROUP BY step
ORDER BY step;

-- name: top_kernels
-- GPU work (kernels, copies, sets) by total time across ranks: summary --by kernel's rows.
SELECT name, count(*) AS calls, sum(duration_ns) / 1e3 AS total_us
FROM read_parquet('traceprof_export/**/*.parquet', hive_partitioning = true)
WHERE category IN ('kernel', 'gpu_memcpy', 'gpu_memset')
GROUP BY name
ORDER BY total_us DESC, name
LIMIT 20;

-- name: top_cuda_calls
-- CUDA runtime and driver calls by total time across ranks: summary --by api's rows.
SELECT name, count(*) AS calls, sum(duration_ns) / 1e3 AS total_us
FROM read_parquet('traceprof_export/**/*.parquet', hive_partitioning = true)
WHERE category IN ('cuda_runtime', 'cuda_driver')
GROUP BY name
ORDER BY total_us DESC, name
LIMIT 20;

-- name: comm_vs_compute
-- Per rank: GPU time in NCCL's kernels (communication) against the other kernels.
SELECT rank,
       coalesce(sum(duration_ns) FILTER (WHERE name ILIKE '%nccl%'), 0) / 1e6 AS comm_ms,
       coalesce(sum(duration_ns) FILTER (WHERE name NOT ILIKE '%nccl%'), 0) / 1e6 AS compute_ms
FROM read_parquet('traceprof_export/**/*.parquet', hive_partitioning = true)
WHERE category = 'kernel'
GROUP BY rank
ORDER BY rank;
