-- Every public object of simdup carries a comment (\df+ and \do+ show them).
COMMENT ON FUNCTION simhash(text) IS
  'simdup: 64-bit SimHash fingerprint of a Chinese/English text (NFKC + lower case, jieba segmentation, sublinear TF x IDF weights, xxh3-64); NULL for text without words';
COMMENT ON FUNCTION simhash_features(text) IS
  'simdup: the weighted features behind simhash(text), one row per distinct token: token, weight, hash, count, idf';
COMMENT ON FUNCTION simhash_block(bigint, integer) IS
  'simdup: 16-bit block i (0 = most significant, 0..3) of a fingerprint, as 0..65535';
COMMENT ON FUNCTION simdup_fingerprint_version() IS
  'simdup: version of the fingerprint format computed by this build';
COMMENT ON FUNCTION hamming(bigint, bigint) IS
  'simdup: number of differing bits between two 64-bit fingerprints (0..64)';
COMMENT ON OPERATOR <~> (bigint, bigint) IS
  'simdup: Hamming distance between two 64-bit fingerprints';
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
