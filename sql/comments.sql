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
