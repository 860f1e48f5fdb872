-- One round of settings.sql: the writes of settings_writes.sql under :set_cmd, into the
-- distributed table and then into the local one (each between :open and :close: nothing, or
-- BEGIN and COMMIT), and the two tables' rows and RETURNING rows compared. :label names the
-- round, :rows is the number of rows the local table holds after it.
\set tbl st_dist
\set src st_src
:open
\ir settings_writes.sql
:close
\set ret_ins_dist :ret_ins
\set ret_upd_dist :ret_upd
\set tbl st_local
\set src st_src_local
:open
\ir settings_writes.sql
:close
SELECT check_that(:'label',
  settings_diff() IS NULL AND :'ret_ins_dist' = :'ret_ins' AND :'ret_upd_dist' = :'ret_upd' AND (SELECT count(*) FROM st_local) = :rows,
  format('%s; RETURNING %s / %s, %s / %s', settings_diff(), :'ret_ins_dist', :'ret_ins', :'ret_upd_dist', :'ret_upd'));
