-- hamming(bigint, bigint) -> int and the operator <~> (its own commutator).
SELECT hamming(0, 0) AS same,
       hamming(0, -1) AS all_bits,
       hamming(1, 3) AS one_bit,
       0 <~> 255 AS op_eight_bits,
       hamming(NULL, 1) IS NULL AS null_in_null_out;

SELECT oprname, oprleft::regtype, oprright::regtype, oprresult::regtype,
       oprcom::regoperator AS commutator
FROM pg_operator WHERE oprname = '<~>';

-- Ordering by distance.
SELECT v, v <~> 0 AS d FROM (VALUES (7::bigint), (0), (1), (-1), (3)) s(v) ORDER BY v <~> 0, v;

-- simhash_block(fp, i): 16-bit block i, 0 = most significant, as 0..65535.
SELECT simhash_block(x'0123456789abcdef'::bigint, 0) AS b0,
       simhash_block(x'0123456789abcdef'::bigint, 1) AS b1,
       simhash_block(x'0123456789abcdef'::bigint, 2) AS b2,
       simhash_block(x'0123456789abcdef'::bigint, 3) AS b3,
       simhash_block(-1, 0) AS top_of_negative;

-- The four blocks reassemble the fingerprint.
SELECT bool_and(((simhash_block(fp, 0)::bigint << 48) | (simhash_block(fp, 1)::bigint << 32)
                | (simhash_block(fp, 2)::bigint << 16) | simhash_block(fp, 3)::bigint) = fp) AS reassembles
FROM (SELECT (random() * 1.8e19 - 9e18)::bigint AS fp FROM generate_series(1, 1000)) s;

-- Out-of-range block index: invalid_parameter_value (22023).
\set VERBOSITY default
SELECT simhash_block(0, 4);
SELECT simhash_block(0, -1);
\set VERBOSITY sqlstate
SELECT simhash_block(0, 4);
