-- A 100 MB text: simhash completes, or is cancelled by statement_timeout within a second of the
-- deadline, and the backend's memory stays bounded (the text is processed in 64 KiB pieces).
CREATE TEMP TABLE huge AS
SELECT repeat('南京市长江大桥于1968年建成通车，是第一座双层铁路公路两用桥。', 1150000) AS t;
SELECT octet_length(t) > 100000000 AS over_100_mb FROM huge;

-- Cancelled: the statement ends within a second of the deadline.
SET statement_timeout = '200ms';
SELECT clock_timestamp() AS t0 \gset
SELECT simhash(t) IS NOT NULL FROM huge;
RESET statement_timeout;
SELECT clock_timestamp() - :'t0'::timestamptz < interval '1.2 s' AS cancelled_within_a_second_of_the_deadline;

-- Completed (no timeout):
SELECT simhash(t) IS NOT NULL AS completed FROM huge;

-- Peak resident memory of this backend (VmHWM): the 100 MB value itself and its detoasted
-- copies, not a multiple of it.
SELECT (regexp_match(pg_read_file('/proc/self/status'), 'VmHWM:\s+(\d+) kB'))[1]::bigint < 1024 * 1024
       AS peak_memory_under_1_gb;
DROP TABLE huge;
