-- Bad input never crashes: NULL or a correct value.
SELECT simhash(E'\x01\x02\x03\t\r\n') IS NULL AS control_chars_only,
       simhash(E'abc\x01def') IS NOT NULL AS control_chars_inside,
       simhash(E'cafe\u0301 naïve') IS NOT NULL AS combining_marks,
       simhash('مرحبا بالعالم שלום עולם') IS NOT NULL AS right_to_left,
       simhash(repeat('𠀀', 1000)) IS NOT NULL AS astral_han;

-- 10 MB of text gives a fingerprint, the same as the same text built differently.
SELECT simhash(repeat('南京市长江大桥于1968年建成通车，是第一座双层铁路公路两用桥。', 120000)) =
       simhash(repeat('南京市长江大桥于1968年建成通车，是第一座双层铁路公路两用桥。', 120000) || '') AS ten_mb_deterministic,
       length(repeat('南京市长江大桥于1968年建成通车，是第一座双层铁路公路两用桥。', 120000)) AS chars;

-- A long simhash call honours statement_timeout (the core checks for interrupts).
SET statement_timeout = '300ms';
SELECT simhash(repeat('南京市长江大桥于1968年建成通车，是第一座双层铁路公路两用桥。', 1000000)) IS NOT NULL;
RESET statement_timeout;
SELECT 'still alive' AS after_timeout;
