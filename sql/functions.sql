-- simdup: every function implemented in Rust (and the operator <~>), each with its COMMENT.
--
-- The Rust side declares them with #[pg_extern(sql = "")], which generates no SQL: this file is
-- the one place that says their argument names, defaults, volatility, strictness, parallel
-- safety and cost. The C symbol of a #[pg_extern] function fn is fn_wrapper; a few functions
-- whose fmgr info is written by hand (crate::fmgr::finfo_v1!) have their own symbol. Installed
-- first (extension_sql_file!(..., bootstrap) in src/lib.rs), so the other sql/ files may use
-- any of them. One section per Rust module, in the order below; within a section, the order of
-- the source file.

-- ---------------------------------------------------------------------------------------------
-- fingerprint (src/fingerprint.rs)
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION simhash(body text) RETURNS bigint
LANGUAGE c IMMUTABLE STRICT PARALLEL SAFE
AS 'MODULE_PATHNAME', 'simhash_wrapper';
COMMENT ON FUNCTION simhash(text) IS
  'simdup: 64-bit SimHash fingerprint of a Chinese/English text (NFKC + lower case, jieba segmentation, sublinear TF x IDF weights, xxh3-64); NULL for text without words';

CREATE FUNCTION simhash_features(body text)
RETURNS TABLE (token text, weight double precision, hash bigint, count integer, idf double precision)
LANGUAGE c IMMUTABLE STRICT PARALLEL SAFE COST 1000
AS 'MODULE_PATHNAME', 'simhash_features_wrapper';
COMMENT ON FUNCTION simhash_features(text) IS
  'simdup: the weighted features behind simhash(text), one row per distinct token: token, weight, hash, count, idf';

CREATE FUNCTION simhash(body text, title text) RETURNS bigint
LANGUAGE c IMMUTABLE PARALLEL SAFE
AS 'MODULE_PATHNAME', 'simhash_title_wrapper';
COMMENT ON FUNCTION simhash(text, text) IS
  'simdup: SimHash of a document with a title: format 1 of title || E''\n'' || body (the title-aware choice measured best, docs/quality.md); a NULL or empty title gives simhash(body), a NULL body NULL';

CREATE FUNCTION simhash(body text, title text, scheme text) RETURNS bigint
LANGUAGE c IMMUTABLE PARALLEL SAFE
AS 'MODULE_PATHNAME', 'simhash_title_scheme_wrapper';
COMMENT ON FUNCTION simhash(text, text, text) IS
  'simdup: SimHash of body (and title, may be NULL) under a named scheme: default (format 1, title fingerprinted with the body), title (body words also in the title x5), improved (Zhang & He 2020: part of speech, word length, cue words x5, title words x5); unknown scheme 22023, NULL scheme 22004';

CREATE FUNCTION simhash_features(body text, title text, scheme text)
RETURNS TABLE (token text, weight double precision, hash bigint, count integer, idf double precision)
LANGUAGE c IMMUTABLE PARALLEL SAFE COST 1000
AS 'MODULE_PATHNAME', 'simhash_features_scheme_wrapper';
COMMENT ON FUNCTION simhash_features(text, text, text) IS
  'simdup: the weighted features behind simhash(body, title, scheme), one row per distinct token: token, weight, hash, count, idf';

CREATE FUNCTION simhash_block(fp bigint, i integer) RETURNS integer
LANGUAGE c IMMUTABLE STRICT PARALLEL SAFE
AS 'MODULE_PATHNAME', 'simhash_block_wrapper';
COMMENT ON FUNCTION simhash_block(bigint, integer) IS
  'simdup: 16-bit block i (0 = most significant, 0..3) of a fingerprint, as 0..65535 (the key of the block indexes of simdup 0.1.0)';

CREATE FUNCTION simdup_fingerprint_version() RETURNS integer
LANGUAGE c IMMUTABLE STRICT PARALLEL SAFE
AS 'MODULE_PATHNAME', 'simdup_fingerprint_version_wrapper';
COMMENT ON FUNCTION simdup_fingerprint_version() IS
  'simdup: version of the fingerprint format computed by this build';

-- ---------------------------------------------------------------------------------------------
-- operators (src/operators.rs)
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION hamming(a bigint, b bigint) RETURNS integer
LANGUAGE c IMMUTABLE STRICT PARALLEL SAFE
AS 'MODULE_PATHNAME', 'hamming_wrapper';
COMMENT ON FUNCTION hamming(bigint, bigint) IS
  'simdup: number of differing bits between two 64-bit fingerprints (0..64); hamming(fp, q) <= k on a column with simdup block indexes is served by them';

CREATE OPERATOR <~> (PROCEDURE = hamming, LEFTARG = bigint, RIGHTARG = bigint, COMMUTATOR = <~>);
COMMENT ON OPERATOR <~> (bigint, bigint) IS
  'simdup: Hamming distance between two 64-bit fingerprints; fp <~> q <= k is served by the block indexes';

-- Its fmgr info is written by hand (crate::fmgr::finfo_v1!), under its own C symbol.
CREATE FUNCTION _simdup_hamming_support(internal) RETURNS internal
LANGUAGE c IMMUTABLE STRICT PARALLEL SAFE
AS 'MODULE_PATHNAME', '_simdup_hamming_support';
COMMENT ON FUNCTION _simdup_hamming_support(internal) IS
  'simdup (internal): planner support function of hamming and jaccard(text, text, integer): loads the library, and with it the planner step serving hamming(fp, q) <= k and jaccard(body, q) >= t, before the scan paths are built';
ALTER FUNCTION hamming(bigint, bigint) SUPPORT _simdup_hamming_support;

-- ---------------------------------------------------------------------------------------------
-- search::functions (src/search/functions.rs)
-- ---------------------------------------------------------------------------------------------

-- _simdup_tids and _simdup_nearest_tids: fmgr info written by hand (crate::fmgr::finfo_v1!),
-- under the C symbols every installed version since 0.2.0 names (src/search/functions.rs says
-- why).
CREATE FUNCTION _simdup_tids(tbl oid, attnum integer, q bigint, k integer) RETURNS tid[]
LANGUAGE c STABLE STRICT PARALLEL SAFE
AS 'MODULE_PATHNAME', '_simdup_tids';
COMMENT ON FUNCTION _simdup_tids(oid, integer, bigint, integer) IS
  'simdup (internal): tids of the visible rows of tbl whose fingerprint column attnum is within k of q, found through its block indexes; the planner puts it in a Tid Scan for hamming(fp, q) <= k';

CREATE FUNCTION _simdup_nearest_tids(tbl oid, attnum integer, q bigint, n bigint) RETURNS tid[]
LANGUAGE c STABLE PARALLEL SAFE
AS 'MODULE_PATHNAME', '_simdup_nearest_tids';
COMMENT ON FUNCTION _simdup_nearest_tids(oid, integer, bigint, bigint) IS
  'simdup (internal): tids of the rows of tbl within the distance of the n-th nearest to q (column attnum; ties at that distance included), found exactly through its block indexes; the planner puts it in a Tid Scan for ORDER BY fp <~> q LIMIT n';

CREATE FUNCTION _simdup_block_indexes(tbl oid, attnum integer)
RETURNS TABLE (index oid, block integer, bit_offset integer, bits integer, kind text)
LANGUAGE c STABLE STRICT PARALLEL SAFE
AS 'MODULE_PATHNAME', '_simdup_block_indexes_wrapper';
COMMENT ON FUNCTION _simdup_block_indexes(oid, integer) IS
  'simdup (internal): the block indexes of a fingerprint column, read from the catalog: index, block, bit offset, width, kind (key: 0.2.0, block: 0.1.0)';

-- ---------------------------------------------------------------------------------------------
-- search::indexes (src/search/indexes.rs)
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION _simdup_key(fp bigint, "offset" integer) RETURNS bigint
LANGUAGE c IMMUTABLE STRICT PARALLEL SAFE
AS 'MODULE_PATHNAME', '_simdup_key_wrapper';
COMMENT ON FUNCTION _simdup_key(bigint, integer) IS
  'simdup (internal): the block-index key of a fingerprint: fp rotated left by offset bits, sign bit flipped (the keys of one block value form one range)';

-- ---------------------------------------------------------------------------------------------
-- args (src/args.rs)
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION _simdup_check_k(k integer) RETURNS integer
LANGUAGE c IMMUTABLE STRICT PARALLEL SAFE
AS 'MODULE_PATHNAME', '_simdup_check_k_wrapper';
COMMENT ON FUNCTION _simdup_check_k(integer) IS
  'simdup (internal): k when it is a valid maximum Hamming distance (0..64); 22023 otherwise';

CREATE FUNCTION _simdup_check_shingle_size(k integer) RETURNS integer
LANGUAGE c IMMUTABLE STRICT PARALLEL SAFE
AS 'MODULE_PATHNAME', '_simdup_check_shingle_size_wrapper';
COMMENT ON FUNCTION _simdup_check_shingle_size(integer) IS
  'simdup (internal): k when it is a valid shingle size (1..256); 22023 otherwise';

CREATE FUNCTION _simdup_layout(blocks integer) RETURNS integer[]
LANGUAGE c IMMUTABLE STRICT PARALLEL SAFE
AS 'MODULE_PATHNAME', '_simdup_layout_wrapper';
COMMENT ON FUNCTION _simdup_layout(integer) IS
  'simdup (internal): the bit offsets at which the blocks of a layout of m nearly equal blocks start (2..8 blocks; 22023 otherwise)';

CREATE FUNCTION _simdup_check_group_method(method text) RETURNS text
LANGUAGE c IMMUTABLE STRICT PARALLEL SAFE
AS 'MODULE_PATHNAME', '_simdup_check_group_method_wrapper';
COMMENT ON FUNCTION _simdup_check_group_method(text) IS
  'simdup (internal): the grouping method when it is components or leader; 22023 otherwise';

-- ---------------------------------------------------------------------------------------------
-- minhash (src/similarity/minhash.rs)
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION shingles(body text, k integer DEFAULT 5) RETURNS bigint[]
LANGUAGE c IMMUTABLE STRICT PARALLEL SAFE
AS 'MODULE_PATHNAME', 'shingles_wrapper';
COMMENT ON FUNCTION shingles(text, integer) IS
  'simdup: set of xxh3-64 hashes of the character k-shingles (default k = 5) of the normalized text (NFKC, lower case, whitespace runs as one space), sorted as unsigned 64-bit numbers; a text shorter than k characters is one shingle; NULL for empty or whitespace-only text';

CREATE FUNCTION word_shingles(body text, k integer DEFAULT 3) RETURNS bigint[]
LANGUAGE c IMMUTABLE STRICT PARALLEL SAFE
AS 'MODULE_PATHNAME', 'word_shingles_wrapper';
COMMENT ON FUNCTION word_shingles(text, integer) IS
  'simdup: set of hashes of the word k-shingles (default k = 3) of the text: jieba words, numbers and English words, punctuation dropped; NULL for text without words';

CREATE FUNCTION jaccard(a text, b text, k integer DEFAULT 5) RETURNS double precision
LANGUAGE c IMMUTABLE STRICT PARALLEL SAFE
AS 'MODULE_PATHNAME', 'jaccard_wrapper';
COMMENT ON FUNCTION jaccard(text, text, integer) IS
  'simdup: exact Jaccard similarity |A∩B|/|A∪B| of the character k-shingle sets (default k = 5) of two texts, 0..1; NULL when either has no shingles; jaccard(text_column, q) >= t on a table with a similarity index is served by it';
-- Shingling two texts costs about as much as a hundred operators; and the support function
-- loads the library while the planner simplifies a query, so that the planner step serving
-- jaccard(body, q) >= t with a similarity index is installed before the scan paths are built.
ALTER FUNCTION jaccard(text, text, integer) COST 100;
ALTER FUNCTION jaccard(text, text, integer) SUPPORT _simdup_hamming_support;

CREATE FUNCTION containment(a text, b text, k integer DEFAULT 5) RETURNS double precision
LANGUAGE c IMMUTABLE STRICT PARALLEL SAFE
AS 'MODULE_PATHNAME', 'containment_wrapper';
COMMENT ON FUNCTION containment(text, text, integer) IS
  'simdup: containment |A∩B|/min(|A|,|B|) of the character k-shingle sets (default k = 5) of two texts, 0..1: the share of the smaller text''s shingles found in the other, 1 when one contains the other (an added header or paragraph lowers jaccard but not this); NULL when either has no shingles';

CREATE FUNCTION jaccard(a bigint[], b bigint[]) RETURNS double precision
LANGUAGE c IMMUTABLE STRICT PARALLEL SAFE
AS 'MODULE_PATHNAME', 'jaccard_sets_wrapper';
COMMENT ON FUNCTION jaccard(bigint[], bigint[]) IS
  'simdup: exact Jaccard similarity of two stored shingle sets (from shingles or word_shingles; order and duplicates ignored); NULL when either is empty; NULL elements raise 22004';

CREATE FUNCTION minhash(body text, k integer DEFAULT 5, n integer DEFAULT 128) RETURNS bigint[]
LANGUAGE c IMMUTABLE STRICT PARALLEL SAFE COST 5000
AS 'MODULE_PATHNAME', 'minhash_wrapper';
COMMENT ON FUNCTION minhash(text, integer, integer) IS
  'simdup: MinHash signature (n values, default 128) of the character k-shingles (default k = 5) of a text; deterministic (fixed seeds, see minhash_format_version); NULL for empty or whitespace-only text. Store it: sig bigint[] GENERATED ALWAYS AS (minhash(body)) STORED';

CREATE FUNCTION _simdup_similar_short_bands(body text, threshold double precision) RETURNS bigint[]
LANGUAGE c IMMUTABLE STRICT PARALLEL SAFE COST 2500
AS 'MODULE_PATHNAME', '_simdup_similar_short_bands_wrapper';
COMMENT ON FUNCTION _simdup_similar_short_bands(text, double precision) IS
  'simdup (internal): LSH band values of the character 3-shingles of a short text (at most 100 distinct 3-shingles and 1000 characters), banded so that texts of 3-shingle Jaccard similarity threshold share one with probability >= 0.99; NULL for other texts: the expression of the similarity dedup trigger''s short-text index';

CREATE FUNCTION _simdup_similar_keys(body text, k integer, containment double precision)
RETURNS bigint[]
LANGUAGE c IMMUTABLE STRICT PARALLEL SAFE COST 2500
AS 'MODULE_PATHNAME', '_simdup_similar_keys_wrapper';
COMMENT ON FUNCTION _simdup_similar_keys(text, integer, double precision) IS
  'simdup (internal): the containment keys of the character k-shingles of a text (its 32 rarest shingles, and for a text of fewer than 50 shingles the first ones a text holding containment of them must share), tagged by role; NULL for text without shingles: the expression of the similarity dedup trigger''s containment index';

CREATE FUNCTION _simdup_similar_key_probe(body text, k integer, containment double precision)
RETURNS bigint[]
LANGUAGE c IMMUTABLE STRICT PARALLEL SAFE COST 2500
AS 'MODULE_PATHNAME', '_simdup_similar_key_probe_wrapper';
COMMENT ON FUNCTION _simdup_similar_key_probe(text, integer, double precision) IS
  'simdup (internal): the values a text looks up in the containment index (its containment prefix among the sketches, its sketch among the prefixes): _simdup_similar_key_probe(a, k, c) && _simdup_similar_keys(b, k, c) when the containment keys of a and b meet; NULL for text without shingles';

CREATE FUNCTION minhash(shingles bigint[], n integer DEFAULT 128) RETURNS bigint[]
LANGUAGE c IMMUTABLE STRICT PARALLEL SAFE
AS 'MODULE_PATHNAME', 'minhash_set_wrapper';
COMMENT ON FUNCTION minhash(bigint[], integer) IS
  'simdup: MinHash signature (n values, default 128) of a stored shingle set, e.g. minhash(word_shingles(body)); NULL for an empty set; NULL elements raise 22004';

CREATE FUNCTION minhash_jaccard(a bigint[], b bigint[]) RETURNS double precision
LANGUAGE c IMMUTABLE STRICT PARALLEL SAFE
AS 'MODULE_PATHNAME', 'minhash_jaccard_wrapper';
COMMENT ON FUNCTION minhash_jaccard(bigint[], bigint[]) IS
  'simdup: estimated Jaccard similarity of two signatures, the fraction of agreeing positions (standard deviation sqrt(J(1-J)/n), at most 0.044 for n = 128); different lengths raise 22023, NULL elements 22004';

CREATE FUNCTION minhash_format_version() RETURNS integer
LANGUAGE c IMMUTABLE STRICT PARALLEL SAFE
AS 'MODULE_PATHNAME', 'minhash_format_version_wrapper';
COMMENT ON FUNCTION minhash_format_version() IS
  'simdup: version of the MinHash format (normalization, shingle hashes, permutation seeds, band hash) computed by this build; stored shingle sets, signatures and band indexes of another version must be recomputed';

CREATE FUNCTION minhash_bands(sig bigint[], bands integer, rows integer) RETURNS bigint[]
LANGUAGE c IMMUTABLE STRICT PARALLEL SAFE
AS 'MODULE_PATHNAME', 'minhash_bands_wrapper';
COMMENT ON FUNCTION minhash_bands(bigint[], integer, integer) IS
  'simdup: LSH band values of a signature: bands hashes of rows consecutive values each (bands*rows <= n). Index with CREATE INDEX ON t USING gin (minhash_bands(sig, 16, 8)) and search with WHERE minhash_bands(sig, 16, 8) && minhash_bands(minhash($1), 16, 8); a pair of similarity J becomes a candidate with probability minhash_s_curve(J, bands, rows). Pick bands and rows with minhash_choose_bands(n, threshold); see docs/minhash.md';

CREATE FUNCTION minhash_s_curve(similarity double precision, bands integer, rows integer)
RETURNS double precision
LANGUAGE c IMMUTABLE STRICT PARALLEL SAFE
AS 'MODULE_PATHNAME', 'minhash_s_curve_wrapper';
COMMENT ON FUNCTION minhash_s_curve(double precision, integer, integer) IS
  'simdup: probability 1-(1-J^rows)^bands that two documents of Jaccard similarity J share at least one of bands LSH bands of rows rows';

CREATE FUNCTION minhash_choose_bands(n integer, threshold double precision)
RETURNS TABLE (bands integer, rows integer, approx_threshold double precision)
LANGUAGE c IMMUTABLE STRICT PARALLEL SAFE
AS 'MODULE_PATHNAME', 'minhash_choose_bands_wrapper';
COMMENT ON FUNCTION minhash_choose_bands(integer, double precision) IS
  'simdup: bands and rows (bands*rows <= n) for a Jaccard threshold strictly between 0 and 1, minimizing the false-positive plus false-negative area under the S-curve, with the approximate threshold (1/bands)^(1/rows) where the curve is steepest';

-- ---------------------------------------------------------------------------------------------
-- similar (src/similarity/search.rs)
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION minhash_choose_bands(n integer, threshold double precision, recall double precision)
RETURNS TABLE (bands integer, rows integer, approx_threshold double precision)
LANGUAGE c IMMUTABLE STRICT PARALLEL SAFE
AS 'MODULE_PATHNAME', 'minhash_choose_bands_for_recall_wrapper';
COMMENT ON FUNCTION minhash_choose_bands(integer, double precision, double precision) IS
  'simdup: bands and rows (bands*rows <= n) under which a pair of Jaccard similarity threshold becomes a candidate with probability at least recall (minhash_s_curve(threshold, bands, rows) >= recall), the steepest such curve (smallest false-positive area below the threshold), with its approximate threshold (1/bands)^(1/rows); for verified searches (simdup_similar), see docs/similar.md';

CREATE FUNCTION _simdup_check_similarity(threshold double precision, recall double precision)
RETURNS double precision
LANGUAGE c IMMUTABLE STRICT PARALLEL SAFE
AS 'MODULE_PATHNAME', '_simdup_check_similarity_wrapper';
COMMENT ON FUNCTION _simdup_check_similarity(double precision, double precision) IS
  'simdup (internal): the threshold when it is a valid Jaccard threshold (0 < t <= 1) and recall a valid recall (0 < r < 1); 22023 otherwise';

-- ---------------------------------------------------------------------------------------------
-- batch (src/batch.rs)
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION simdup_max_distance() RETURNS integer
LANGUAGE c STABLE STRICT PARALLEL SAFE
AS 'MODULE_PATHNAME', 'simdup_max_distance_wrapper';
COMMENT ON FUNCTION simdup_max_distance() IS
  'simdup: the current simdup.max_distance (default k of the batch functions); loads the library, so it works before any other simdup call in a session';

CREATE FUNCTION _simdup_fingerprint_pairs(tbl regclass, fingerprint_column text, k integer)
RETURNS TABLE (fa bigint, fb bigint, distance integer)
LANGUAGE c STABLE STRICT PARALLEL RESTRICTED
AS 'MODULE_PATHNAME', '_simdup_fingerprint_pairs_wrapper';
COMMENT ON FUNCTION _simdup_fingerprint_pairs(regclass, text, integer) IS
  'simdup (internal): all pairs of distinct fingerprints (fa < fb) of a table''s fingerprint column within Hamming distance k, each once, with the distance: identical fingerprints collapsed, then an in-memory join on the values of each 16-bit block within its threshold (never all pairs)';

CREATE FUNCTION _simdup_fingerprint_components(tbl regclass, fingerprint_column text, k integer)
RETURNS TABLE (fp bigint, component bigint)
LANGUAGE c STABLE STRICT PARALLEL RESTRICTED
AS 'MODULE_PATHNAME', '_simdup_fingerprint_components_wrapper';
COMMENT ON FUNCTION _simdup_fingerprint_components(regclass, text, integer) IS
  'simdup (internal): connected components of _simdup_fingerprint_pairs(tbl, fingerprint_column, k): each fingerprint with a near neighbour, and the smallest fingerprint of its component';

CREATE FUNCTION _simdup_fingerprint_leaders(tbl regclass, fingerprint_column text, key_column text,
                                            k integer)
RETURNS TABLE (fp bigint, leader bigint)
LANGUAGE c STABLE STRICT PARALLEL RESTRICTED
AS 'MODULE_PATHNAME', '_simdup_fingerprint_leaders_wrapper';
COMMENT ON FUNCTION _simdup_fingerprint_leaders(regclass, text, text, integer) IS
  'simdup (internal): leader clustering of a table''s distinct fingerprints in the order of their smallest key: each fingerprint in a group of two or more with its leader, every member within k of its leader';

CREATE FUNCTION _simdup_graph_groups(n bigint, a bigint[], b bigint[], method text)
RETURNS TABLE (node bigint, first bigint)
LANGUAGE c IMMUTABLE STRICT PARALLEL SAFE
AS 'MODULE_PATHNAME', '_simdup_graph_groups_wrapper';
COMMENT ON FUNCTION _simdup_graph_groups(bigint, bigint[], bigint[], text) IS
  'simdup (internal): groups of the graph of nodes 1..n with edges a[i]-b[i], by method components or leader (in node order): each node in a group of two or more with its group''s first node; simdup_groups(..., verify => true) numbers its rows in key order';

-- ---------------------------------------------------------------------------------------------
-- dedup::check (src/triggers.rs)
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION _simdup_check_dedup(tbl oid) RETURNS void
LANGUAGE c VOLATILE STRICT
AS 'MODULE_PATHNAME', '_simdup_check_dedup_wrapper';
COMMENT ON FUNCTION _simdup_check_dedup(oid) IS
  'simdup (internal): checks the columns the dedup trigger of a table (simdup_dedup or simdup_dedup_similar) reads and writes (exist, types, not a generated adopted fingerprint), as the trigger does on every row, and that the table has not both; simdup_enable and simdup_enable_similar call it after installing the trigger';

-- ---------------------------------------------------------------------------------------------
-- dedup::config (src/dedup/config.rs)
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION _simdup_dedup_trigger_args(on_duplicate text, max_distance integer,
                                           text_column text, fingerprint_column text,
                                           key_column text, threshold double precision,
                                           containment double precision)
RETURNS text
LANGUAGE c IMMUTABLE PARALLEL SAFE
AS 'MODULE_PATHNAME', '_simdup_dedup_trigger_args_wrapper';
COMMENT ON FUNCTION _simdup_dedup_trigger_args(text, integer, text, text, text, double precision, double precision) IS
  'simdup (internal): checks simdup_enable''s on_duplicate, max_distance and verification thresholds and returns the dedup trigger''s argument list';

-- ---------------------------------------------------------------------------------------------
-- dedup::lookup (src/dedup/lookup.rs)
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION _simdup_lock_stripes(fp bigint, k integer) RETURNS integer[]
LANGUAGE c IMMUTABLE STRICT PARALLEL SAFE
AS 'MODULE_PATHNAME', '_simdup_lock_stripes_wrapper';
COMMENT ON FUNCTION _simdup_lock_stripes(bigint, integer) IS
  'simdup (internal): the lock stripes (0..4095) the dedup trigger locks exclusively (pg_locks: locktype advisory, classid = table OID, objid = stripe, objsubid = 21316, a tag pg_advisory_* cannot take) for fingerprint fp at maximum distance k: one per piece of the fingerprint cut into k + 1 pieces (near-duplicates share a piece, so a stripe), ascending';

-- ---------------------------------------------------------------------------------------------
-- dedup::similar (src/similarity/trigger.rs)
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION _simdup_similar_match(a text, b text, k integer, threshold double precision,
                                      containment double precision)
RETURNS double precision
LANGUAGE c IMMUTABLE PARALLEL SAFE COST 2500
AS 'MODULE_PATHNAME', '_simdup_similar_match_wrapper';
COMMENT ON FUNCTION _simdup_similar_match(text, text, integer, double precision, double precision) IS
  'simdup (internal): the Jaccard similarity of the character k-shingles of two texts when the similarity dedup trigger counts them as near-duplicates (Jaccard >= threshold, or containment >= containment when that is not NULL, or for two short texts the Jaccard similarity of their 3-shingles >= threshold), NULL otherwise: the condition of the cross-shard check on Citus';

CREATE FUNCTION _simdup_similar_short_match(a text, b text, k integer, threshold double precision)
RETURNS double precision
LANGUAGE c IMMUTABLE PARALLEL SAFE COST 2500
AS 'MODULE_PATHNAME', '_simdup_similar_short_match_wrapper';
COMMENT ON FUNCTION _simdup_similar_short_match(text, text, integer, double precision) IS
  'simdup (internal): the Jaccard similarity of the character k-shingles of two texts when the similarity dedup trigger''s short-text rule alone counts them as near-duplicates (the shorter text under 50 characters, both short, the Jaccard similarity of their 3-shingles >= threshold), NULL otherwise: the condition of the cross-shard check on Citus for rows that share only a short band';

CREATE FUNCTION _simdup_similar_key_match(a text, b text, k integer, threshold double precision,
                                          containment double precision)
RETURNS double precision
LANGUAGE c IMMUTABLE PARALLEL SAFE COST 2500
AS 'MODULE_PATHNAME', '_simdup_similar_key_match_wrapper';
COMMENT ON FUNCTION _simdup_similar_key_match(text, text, integer, double precision, double precision) IS
  'simdup (internal): the Jaccard similarity of the character k-shingles of two texts when the similarity dedup trigger counts them as near-duplicates through their containment keys (containment >= containment, or for two short texts the Jaccard similarity of their 3-shingles >= threshold), NULL otherwise or for a NULL containment: the condition of the cross-shard check on Citus for rows found through the containment index';

CREATE FUNCTION _simdup_similar_dedup_trigger_args(on_duplicate text, threshold double precision,
                                                   k integer, bands integer, rows integer,
                                                   text_column text, key_column text,
                                                   containment double precision)
RETURNS text
LANGUAGE c IMMUTABLE PARALLEL SAFE
AS 'MODULE_PATHNAME', '_simdup_similar_dedup_trigger_args_wrapper';
COMMENT ON FUNCTION _simdup_similar_dedup_trigger_args(text, double precision, integer, integer, integer, text, text, double precision) IS
  'simdup (internal): checks simdup_enable_similar''s on_duplicate, threshold, k, bands, rows and containment and returns the similarity dedup trigger''s argument list';

-- ---------------------------------------------------------------------------------------------
-- dedup::trigger (src/dedup/trigger.rs)
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION _simdup_dedup_settings(tbl oid)
RETURNS TABLE (on_duplicate text, max_distance integer, threshold double precision, containment double precision)
LANGUAGE c STABLE STRICT
AS 'MODULE_PATHNAME', '_simdup_dedup_settings_wrapper';
COMMENT ON FUNCTION _simdup_dedup_settings(oid) IS
  'simdup (internal): on_duplicate, max_distance and the verification thresholds of a table''s simdup_dedup trigger, read from its arguments; no row without one. simdup_register records them';

-- ---------------------------------------------------------------------------------------------
-- dedup::verify (src/dedup/verify.rs)
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION _simdup_verified(a text, b text, threshold double precision,
                                 containment double precision)
RETURNS boolean
LANGUAGE c IMMUTABLE PARALLEL SAFE
AS 'MODULE_PATHNAME', '_simdup_verified_wrapper';
COMMENT ON FUNCTION _simdup_verified(text, text, double precision, double precision) IS
  'simdup (internal): whether two texts are near-duplicates by the verification of a SimHash candidate: Jaccard of character 5-shingles >= threshold, or containment >= containment (NULL: no containment rule), or the short-text rule; false when either is NULL or has no shingles. The dedup trigger, the Citus checked write and simdup_pairs/simdup_groups with verify => true decide by it';

CREATE FUNCTION _simdup_unverified_risk(tbl oid, k integer) RETURNS void
LANGUAGE c VOLATILE STRICT
AS 'MODULE_PATHNAME', '_simdup_unverified_risk_wrapper';
COMMENT ON FUNCTION _simdup_unverified_risk(oid, integer) IS
  'simdup (internal): the WARNING simdup_enable gives for a dedup trigger without verification when the table is large enough that about 1 % or more of new rows would have an unrelated row within distance k (the rate measured on real news)';

-- ---------------------------------------------------------------------------------------------
-- citus::shard (src/citus/shard.rs)
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION _simdup_citus_distributed(tbl oid) RETURNS boolean
LANGUAGE c STABLE STRICT PARALLEL SAFE
AS 'MODULE_PATHNAME', '_simdup_citus_distributed_wrapper';
COMMENT ON FUNCTION _simdup_citus_distributed(oid) IS
  'simdup (internal): whether a table is Citus-distributed by hash, range or append (each shard holds part of the rows), read from Citus''s catalog when there is one; false for reference, local and plain tables';
