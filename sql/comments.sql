-- Every public object of simdup carries a comment (\df+ and \do+ show them).
COMMENT ON FUNCTION simhash(text) IS
  'simdup: 64-bit SimHash fingerprint of a Chinese/English text (NFKC + lower case, jieba segmentation, sublinear TF x IDF weights, xxh3-64); NULL for text without words';
COMMENT ON FUNCTION simhash_features(text) IS
  'simdup: the weighted features behind simhash(text), one row per distinct token: token, weight, hash, count, idf';
COMMENT ON FUNCTION simhash(text, text) IS
  'simdup: SimHash of a document with a title: format 1 of title || E''\n'' || body (the title-aware choice measured best, docs/quality.md); a NULL or empty title gives simhash(body), a NULL body NULL';
COMMENT ON FUNCTION simhash(text, text, text) IS
  'simdup: SimHash of body (and title, may be NULL) under a named scheme: default (format 1, title fingerprinted with the body), title (body words also in the title x5), improved (Zhang & He 2020: part of speech, word length, cue words x5, title words x5); unknown scheme 22023, NULL scheme 22004';
COMMENT ON FUNCTION simhash_features(text, text, text) IS
  'simdup: the weighted features behind simhash(body, title, scheme), one row per distinct token: token, weight, hash, count, idf';
COMMENT ON FUNCTION simhash_block(bigint, integer) IS
  'simdup: 16-bit block i (0 = most significant, 0..3) of a fingerprint, as 0..65535';
COMMENT ON FUNCTION simdup_fingerprint_version() IS
  'simdup: version of the fingerprint format computed by this build';
COMMENT ON FUNCTION hamming(bigint, bigint) IS
  'simdup: number of differing bits between two 64-bit fingerprints (0..64)';
COMMENT ON OPERATOR <~> (bigint, bigint) IS
  'simdup: Hamming distance between two 64-bit fingerprints';

-- Near-duplicate search on B-tree indexes of the four 16-bit blocks (sql/search.sql).
COMMENT ON FUNCTION simdup_match(bigint, bigint, integer) IS
  'simdup: true when hamming(fp, q) <= k; an inlinable SQL function whose four block conditions use the block indexes of simdup_enable (exact for any k 0..64). Pass q as a column, constant, bigint parameter, simhash(''literal'') or simhash($1)';
COMMENT ON FUNCTION simdup_probe(bigint, integer, integer) IS
  'simdup: every value (0..65535) of block i of q within Hamming radius floor(k/4): the index probes that find all fingerprints within distance k';
COMMENT ON FUNCTION simdup_max_distance() IS
  'simdup: the current simdup.max_distance (default k of the batch functions); loads the library, so it works before any other simdup call in a session';
COMMENT ON FUNCTION simdup_enable(regclass, name, name, text, integer) IS
  'simdup: equips a table for near-duplicate search: adds fingerprint_column bigint GENERATED ALWAYS AS (simhash(text_column)) STORED and four B-tree indexes (simhash_block(fp, i)) INCLUDE (fp), and records it in simdup_tables. text_column NULL adopts an existing bigint fingerprint_column. on_duplicate => ''reject'' | ''skip'' | ''mark'' also installs the dedup trigger simdup_dedup (BEFORE INSERT OR UPDATE): a row within max_distance (default: simdup.max_distance at enable time) of an existing row raises 23505, is not stored, or is stored with dup_of (added, the primary key''s type) = the smallest key among its near-duplicates; safe under concurrency (advisory locks). Requires owning the table';
COMMENT ON FUNCTION simdup_disable(regclass) IS
  'simdup: removes what simdup_enable added to a table: the dedup trigger and dup_of column (if any), the block indexes, the generated fingerprint column (if simdup_enable added it) and its simdup_tables row. Requires owning the table';
COMMENT ON FUNCTION simdup_dedup_trigger() IS
  'simdup: the dedup trigger function installed by simdup_enable(..., on_duplicate => ...) as BEFORE INSERT OR UPDATE FOR EACH ROW, arguments (on_duplicate, max_distance, text_column or '''', fingerprint_column, key_column): computes simhash of the new text, takes the row''s advisory lock stripes, looks up the near-duplicate with the smallest key through the block indexes, then rejects (23505), skips or marks (dup_of) the row';
COMMENT ON FUNCTION simdup_lock_stripes(bigint, integer) IS
  'simdup (internal): the advisory lock stripes (0..4095) the dedup trigger locks exclusively, as pg_advisory_xact_lock(table OID, stripe), for fingerprint fp at maximum distance k: one per piece of the fingerprint cut into k + 1 pieces (near-duplicates share a piece, so a stripe), ascending';
COMMENT ON FUNCTION simdup_block_indexes(regclass) IS
  'simdup: the block indexes (simhash_block(fp, i)) INCLUDE (fp) of a table enabled with simdup_enable, with their block number';
COMMENT ON FUNCTION simdup_table_info(regclass) IS
  'simdup: fingerprint column and single-column primary key of an enabled table, as used by simdup_pairs and simdup_groups; errors say what is missing';
COMMENT ON FUNCTION simdup_fingerprint_pairs(regclass, integer) IS
  'simdup: all pairs of distinct fingerprints (fa < fb) of an enabled table within Hamming distance k, each once, with the distance: identical fingerprints collapsed, then an in-memory join on equal or neighbouring values of each 16-bit block (never all pairs)';
COMMENT ON FUNCTION simdup_fingerprint_components(regclass, integer) IS
  'simdup: connected components of simdup_fingerprint_pairs(tbl, k): each fingerprint with a near neighbour, and the smallest fingerprint of its component';
COMMENT ON FUNCTION simdup_pairs(regclass, integer) IS
  'simdup: all pairs of rows of an enabled table whose fingerprints are within distance k (default simdup.max_distance), identical fingerprints included, each pair once: primary keys a < b as text, and the distance';
COMMENT ON FUNCTION simdup_groups(regclass, integer) IS
  'simdup: connected components of near-duplicate rows (distance <= k, default simdup.max_distance): one row per row that has at least one near-duplicate, as (primary key as text, group_id); groups numbered 1, 2, ... by their smallest key';
COMMENT ON FUNCTION simdup_tables_guard() IS
  'simdup (internal): trigger letting only the owner of a table add or remove its simdup_tables row';
COMMENT ON FUNCTION simdup_forget_dropped() IS
  'simdup (internal): event trigger function removing the simdup_tables row of a dropped table or fingerprint column (and the dedup trigger of a table whose fingerprint column was dropped)';
COMMENT ON TABLE simdup_tables IS
  'simdup: tables equipped by simdup_enable (kept by pg_dump): text column (NULL when an existing fingerprint column was adopted), fingerprint column, and the dedup trigger''s on_duplicate and max_distance (NULL without a trigger)';
COMMENT ON EVENT TRIGGER simdup_forget_dropped IS
  'simdup: forgets equipped tables (simdup_tables rows) when the table or its fingerprint column is dropped';

-- MinHash and Jaccard (src/minhash.rs).
COMMENT ON FUNCTION shingles(text, integer) IS
  'simdup: set of xxh3-64 hashes of the character k-shingles (default k = 5) of the normalized text (NFKC, lower case, whitespace runs as one space), sorted as unsigned 64-bit numbers; a text shorter than k characters is one shingle; NULL for empty or whitespace-only text';
COMMENT ON FUNCTION word_shingles(text, integer) IS
  'simdup: set of hashes of the word k-shingles (default k = 3) of the text: jieba words, numbers and English words, punctuation dropped; NULL for text without words';
COMMENT ON FUNCTION jaccard(text, text, integer) IS
  'simdup: exact Jaccard similarity |A∩B|/|A∪B| of the character k-shingle sets (default k = 5) of two texts, 0..1; NULL when either has no shingles';
COMMENT ON FUNCTION jaccard(bigint[], bigint[]) IS
  'simdup: exact Jaccard similarity of two stored shingle sets (from shingles or word_shingles; order and duplicates ignored); NULL when either is empty; NULL elements raise 22004';
COMMENT ON FUNCTION minhash(text, integer, integer) IS
  'simdup: MinHash signature (n values, default 128) of the character k-shingles (default k = 5) of a text; deterministic (fixed seeds, see minhash_format_version); NULL for empty or whitespace-only text. Store it: sig bigint[] GENERATED ALWAYS AS (minhash(body)) STORED';
COMMENT ON FUNCTION minhash(bigint[], integer) IS
  'simdup: MinHash signature (n values, default 128) of a stored shingle set, e.g. minhash(word_shingles(body)); NULL for an empty set; NULL elements raise 22004';
COMMENT ON FUNCTION minhash_jaccard(bigint[], bigint[]) IS
  'simdup: estimated Jaccard similarity of two signatures, the fraction of agreeing positions (standard deviation sqrt(J(1-J)/n), at most 0.044 for n = 128); different lengths raise 22023, NULL elements 22004';
COMMENT ON FUNCTION minhash_bands(bigint[], integer, integer) IS
  'simdup: LSH band values of a signature: bands hashes of rows consecutive values each (bands*rows <= n). Index with CREATE INDEX ON t USING gin (minhash_bands(sig, 16, 8)) and search with WHERE minhash_bands(sig, 16, 8) && minhash_bands(minhash($1), 16, 8); a pair of similarity J becomes a candidate with probability minhash_s_curve(J, bands, rows). Pick bands and rows with minhash_choose_bands(n, threshold); see docs/minhash.md';
COMMENT ON FUNCTION minhash_s_curve(double precision, integer, integer) IS
  'simdup: probability 1-(1-J^rows)^bands that two documents of Jaccard similarity J share at least one of bands LSH bands of rows rows';
COMMENT ON FUNCTION minhash_choose_bands(integer, double precision) IS
  'simdup: bands and rows (bands*rows <= n) for a Jaccard threshold strictly between 0 and 1, minimizing the false-positive plus false-negative area under the S-curve, with the approximate threshold (1/bands)^(1/rows) where the curve is steepest';
COMMENT ON FUNCTION minhash_format_version() IS
  'simdup: version of the MinHash format (normalization, shingle hashes, permutation seeds, band hash) computed by this build; stored shingle sets, signatures and band indexes of another version must be recomputed';
