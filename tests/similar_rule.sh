# The similarity trigger's decision, written as SQL over two rows a and b, for the test scripts
# that check what concurrent writers stored (tests/concurrency, tests/citus). Sourced, not run.
#
#   similar_near T C BANDS ROWS   prints a boolean SQL expression over a.body and b.body
#
# It restates Rule::judge (core/src/similarity/mod.rs) with the indexes' expressions (bands, short
# bands, containment keys) and the public measures (jaccard, containment, shingles), not with
# the trigger's own _simdup_similar_*_match, so that the tests check the trigger against the
# rule and not against itself:
#   - a shared band of the similarity index (BANDS x ROWS), then jaccard >= T, or containment
#     >= C when neither text is tiny (fewer than 50 5-shingles), or the short-text rule;
#   - containment keys that meet (the containment index), then containment >= C or the
#     short-text rule;
#   - a shared band of the short-text index, then the short-text rule.
# The short-text rule: the shorter text under 50 characters (fewer than 46 5-shingles),
# both texts short-banded, 3-shingle jaccard >= T. C is the table's containment threshold (the
# callers' tables have containment on).
similar_near() {
  local t="$1" c="$2" bands="$3" rows="$4"
  local short_a="_simdup_similar_short_bands(a.body, $t)" short_b="_simdup_similar_short_bands(b.body, $t)"
  local short_rule="(least(cardinality(shingles(a.body)), cardinality(shingles(b.body))) + 4 < 50
           AND $short_a IS NOT NULL AND $short_b IS NOT NULL AND jaccard(a.body, b.body, 3) >= $t)"
  local band="_simdup_similar_bands(a.body, 5, $bands, $rows) && _simdup_similar_bands(b.body, 5, $bands, $rows)"
  local contained="containment(a.body, b.body) >= $c"
  local not_tiny="least(cardinality(shingles(a.body)), cardinality(shingles(b.body))) >= 50"
  local keys="_simdup_similar_key_probe(a.body, 5, $c) && _simdup_similar_keys(b.body, 5, $c)"
  echo "coalesce($band AND (jaccard(a.body, b.body) >= $t OR $contained AND $not_tiny OR $short_rule)
                OR $short_a && $short_b AND $short_rule
                OR $keys AND ($contained OR $short_rule), false)"
}
