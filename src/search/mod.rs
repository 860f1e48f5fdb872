//! Near-duplicate search served by the block indexes.
//!
//! * [`indexes`]: which block indexes a table has (catalog, not names), and their key
//!   `_simdup_key`;
//! * [`scan`]: the search itself, heap only for matches;
//! * [`btree`]: the page reader the search reads the key indexes with;
//! * [`planner`]: the planner step that serves `hamming(fp, q) <= k` (and `fp <~> q <= k`,
//!   `< k`, `simdup_match`) with a Tid Scan over `_simdup_tids`, and `ORDER BY fp <~> q LIMIT
//!   n` over `_simdup_nearest_tids`;
//! * [`cost`]: the cost model of a search, for the thresholds and for the planner;
//! * [`plan_nodes`]: the plan-node helpers this planner step and the similarity one
//!   (src/similarity/planner.rs) share;
//! * [`functions`]: the SQL functions `_simdup_tids`,
//!   `_simdup_nearest_tids` (the nearest search) and `_simdup_block_indexes`, and the access check of a direct
//!   call.

pub(crate) mod btree;
pub(crate) mod cost;
pub(crate) mod functions;
pub(crate) mod indexes;
pub(crate) mod plan_nodes;
pub(crate) mod planner;
pub(crate) mod scan;
