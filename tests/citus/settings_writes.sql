-- The writes of one round of settings.sql, included once for the distributed table and once
-- for the local one (:tbl): the same statements, as role :writer, under the round's settings
-- (:set_cmd). Every literal is read by the writer's settings: a text with backslashes (one
-- backslash with standard_conforming_strings off), a date that DMY and MDY read differently, an
-- interval that sql_standard reads differently, a float8 with more digits than
-- extra_float_digits = -3 prints, a bytea (escape-looking under standard_conforming_strings off,
-- hex-looking otherwise), a timestamptz and a timestamp without an offset. :src is a table of
-- one row to INSERT ... SELECT from.
SET ROLE :writer;
:set_cmd
-- one row, INSERT ... VALUES
INSERT INTO :tbl (id, body, d, iv, f, b, tz, ts) VALUES (1, 'Amber\\owls drift past quiet harbor lights at dusk',
  '01/02/2020', '-1 2:03:04', 0.1234567890123456789, '\\x00ff5c', '2020-01-01 00:00:00', '2020-01-01 00:00:00');
-- several rows, one INSERT ... VALUES (a batch)
INSERT INTO :tbl (id, body, d, iv, f, b, tz, ts) VALUES
  (2, 'Brisk\\\\winds scatter maple leaves over the old stone bridge', '02/03/2020', '1-2', 1.0000000000000002, '\\\\', '2020-03-29 02:30:00', '2020-03-29 02:30:00'),
  (3, 'Copper kettles whistle\\in a crowded morning kitchen', '11/12/1999', '-0 12:00:00', -9.87654321098765e-300, '\\x', '1999-12-31 23:59:59.999999', '1999-12-31 23:59:59.999999'),
  (4, 'Distant thunder rolls\\beyond the violet mountain ridge', '12/11/2010', '-1-1 -1 -1:01:01', 98765.43210987654, '\\xdeadbeef', '2010-06-15 08:00:00', '2010-06-15 08:00:00');
-- prepared, a generic plan and a custom one (the values are the statement's parameters)
PREPARE settings_ins(bigint, text, date, interval, float8, bytea, timestamptz, timestamp) AS
  INSERT INTO :tbl (id, body, d, iv, f, b, tz, ts) VALUES ($1, $2, $3, $4, $5, $6, $7, $8);
SET plan_cache_mode = force_generic_plan;
EXECUTE settings_ins(5, 'Eager puppies chase\\bright yellow tennis balls', '03/04/2021', '-2 3:04:05', 0.30000000000000004, '\\x5c27', '2021-04-03 10:00:00', '2021-04-03 10:00:00');
SET plan_cache_mode = force_custom_plan;
EXECUTE settings_ins(6, 'Frosted windows glow\\while children build snow forts', '04/05/2021', '2-3', 3.141592653589793, '\\x61', '2021-05-04 11:00:00', '2021-05-04 11:00:00');
RESET plan_cache_mode;
DEALLOCATE settings_ins;
-- COPY FROM STDIN (text format: \\ is one backslash whatever the settings)
COPY :tbl (id, body, d, iv, f, b, tz, ts) FROM STDIN;
7	Gentle rivers carve\\deep canyons through red sandstone	05/06/2020	-4 5:06:07	2.718281828459045	\\x0a0b5c	2020-07-01 12:00:00	2020-07-01 12:00:00
8	Hungry pelicans dive\\\\for silver sardines near the pier	12/01/2020	1-2 3 4:05:06	123456.78901234567	\\x5c	2020-12-31 23:30:00	2020-12-31 23:30:00
\.
-- text-changing UPDATEs: new literals; expressions of the stored values (computed on the
-- shard); prepared with a generic plan
UPDATE :tbl SET body = 'Jade lanterns sway\\above the night market stalls', d = '07/08/2021', iv = '-5 6:07:08',
  f = '0.3333333333333333', b = '\\x5c5c', tz = '2021-03-04 05:06:07', ts = '2021-03-04 05:06:07' WHERE id = 1;
UPDATE :tbl SET body = body || ' \\ and home again', d = d + 1, iv = iv * 2, f = f * 3, tz = tz + '1 hour', ts = ts + '1 hour' WHERE id = 2;
PREPARE settings_upd(bigint, text, date, interval, float8) AS UPDATE :tbl SET body = $2, d = $3, iv = $4, f = $5 WHERE id = $1;
SET plan_cache_mode = force_generic_plan;
EXECUTE settings_upd(3, 'Keen falcons circle\\high over golden wheat fields', '09/10/2021', '-3 4:05:06', 0.9876543210987654);
RESET plan_cache_mode;
DEALLOCATE settings_upd;
-- INSERT ... SELECT from a table (:src: distributed for the distributed round), with literals
-- and expressions of its values (computed on the shard)
INSERT INTO :tbl (id, body, d, iv, f, b, tz, ts)
  SELECT 10, s.body || ' \\ Mellow cellos hum softly beneath stained glass', '05/06/2023', s.iv * 3, s.f / 7, s.b || '\\x01'::bytea,
         s.tz + '-1 2:03:04', '2023-06-05 01:02:03'
  FROM :src s WHERE s.id = 1;
RESET ROLE;
-- RETURNING (as the owner, still under the round's settings): the rows as stored, in the
-- writer's settings' text
INSERT INTO :tbl (id, body, d, iv, f, b, tz, ts) VALUES (9, 'Ivory pianos echo\\through an empty concert hall',
  '10/11/2022', '-6 7:08:09', 6.02214076e23, '\\x0d0a', '2022-11-10 09:00:00', '2022-11-10 09:00:00')
  RETURNING row(id, body, d, iv, f, b, tz, ts)::text AS ret_ins \gset
UPDATE :tbl SET body = 'Lively drummers march\\down the festival avenue', d = '11/12/2022', iv = '-7 8:09:10'
  WHERE id = 9 RETURNING row(id, body, d, iv, f, b, tz, ts)::text AS ret_upd \gset
RESET standard_conforming_strings;
RESET escape_string_warning;
RESET DateStyle;
RESET IntervalStyle;
RESET extra_float_digits;
RESET bytea_output;
RESET TimeZone;
