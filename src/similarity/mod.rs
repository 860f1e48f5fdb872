//! Near-duplicates by verified similarity: exact Jaccard (and containment) of character
//! shingles, candidates from MinHash LSH bands in GIN indexes. The rules themselves are the
//! core's (`simdup_core::similarity`, `simdup_core::similarity::minhash`, `simdup_core::similarity::overlap`,
//! `simdup_core::similarity::candidates`); this module maps them to SQL, over the dedup engine
//! (src/dedup/) and the search's plan-node helpers (src/search/), neither of which knows it.
//!
//! * [`minhash`]: the SQL functions of shingles, Jaccard, MinHash and LSH bands
//!   (`jaccard()`, `minhash()`, `_simdup_similar_bands()`, …), and the sets and bands the
//!   trigger and the checked write compute from a text;
//! * [`search`]: `simdup_similar(tbl, query, threshold)` and which similarity indexes a table has;
//! * [`planner`]: the planner step that serves `WHERE jaccard(body, q) >= t` with a similarity
//!   index (a Bitmap Heap Scan over its GIN index), called by the `set_rel_pathlist_hook`
//!   (src/hooks.rs);
//! * [`gin`]: reading a similarity index directly: the rows sharing an LSH band value with a
//!   text, and how many each shares;
//! * [`config`]: the dedup trigger's arguments, columns and error;
//! * [`trigger`]: the dedup trigger `simdup_similar_dedup_trigger` of
//!   `simdup_enable_similar(..., on_duplicate => ...)`.

pub(crate) mod config;
pub(crate) mod gin;
pub(crate) mod minhash;
pub(crate) mod planner;
pub(crate) mod search;
pub(crate) mod trigger;
