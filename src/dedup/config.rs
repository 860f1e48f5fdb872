//! The dedup trigger's arguments: one struct writes them (`simdup_enable`, through
//! `_simdup_dedup_trigger_args`) and parses them (the trigger), so they cannot drift apart.

use pgrx::prelude::*;
use pgrx::spi::quote_literal;

use crate::args::{self, Mode};
use crate::errors::{Code, Error};

/// The column `simdup_enable(..., on_duplicate => 'mark')` adds.
pub(crate) const DUP_OF: &str = "dup_of";

/// The name of the trigger, and of the constraint a near-duplicate violates.
pub(crate) const TRIGGER: &str = "simdup_dedup";

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Config {
    pub mode: Mode,
    pub k: u32,
    /// None: the fingerprint column is a plain bigint column filled by the application.
    pub text_column: Option<String>,
    pub fp_column: String,
    pub key_column: String,
}

impl Config {
    /// The `CREATE TRIGGER` argument list, as SQL literals.
    pub fn to_args(&self) -> String {
        [
            self.mode.as_str(),
            &self.k.to_string(),
            self.text_column.as_deref().unwrap_or(""),
            &self.fp_column,
            &self.key_column,
        ]
        .map(quote_literal)
        .join(", ")
    }

    /// The configuration from the trigger's arguments; 39P01 (trigger protocol violated) for a
    /// wrong count, 22023 for a bad mode or k.
    pub fn parse(args: &[String]) -> Config {
        let [mode, k, text, fp, key] = args else {
            Error::new(
                Code::ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED,
                format!(
                    "simdup_dedup_trigger needs 5 arguments (mode, max_distance, text_column, fingerprint_column, key_column), got {}",
                    args.len()
                ),
            )
            .hint("simdup_dedup_trigger is installed by simdup_enable(tbl, text_column, on_duplicate => ...).")
            .raise()
        };
        Config {
            mode: Mode::parse(mode),
            k: args::max_distance(k.parse::<i32>().unwrap_or(-1)),
            text_column: (!text.is_empty()).then(|| text.clone()),
            fp_column: fp.clone(),
            key_column: key.clone(),
        }
    }
}

/// Checks simdup_enable's dedup arguments and returns the trigger's argument list: 22023 for
/// an unknown mode or a k outside 0..64.
#[pg_extern(immutable, parallel_safe)]
fn _simdup_dedup_trigger_args(
    on_duplicate: &str,
    max_distance: i32,
    text_column: Option<&str>,
    fingerprint_column: &str,
    key_column: &str,
) -> String {
    Config {
        mode: Mode::parse(on_duplicate),
        k: args::max_distance(max_distance),
        text_column: text_column.map(str::to_owned),
        fp_column: fingerprint_column.to_owned(),
        key_column: key_column.to_owned(),
    }
    .to_args()
}

extension_sql!(
    "COMMENT ON FUNCTION _simdup_dedup_trigger_args(text, integer, text, text, text) IS \
     'simdup (internal): checks simdup_enable''s on_duplicate and max_distance and returns the dedup trigger''s argument list';",
    name = "comment__simdup_dedup_trigger_args",
    requires = [_simdup_dedup_trigger_args]
);

#[cfg(any(test, feature = "pg_test"))]
#[pg_schema]
mod tests {
    use super::*;

    #[pg_test]
    fn config_round_trips() {
        let c = Config {
            mode: Mode::Mark,
            k: 7,
            text_column: Some("bo'dy".into()),
            fp_column: "fp".into(),
            key_column: "id".into(),
        };
        assert_eq!(c.to_args(), "'mark', '7', 'bo''dy', 'fp', 'id'");
        let args = ["mark", "7", "bo'dy", "fp", "id"].map(String::from);
        assert_eq!(Config::parse(&args), c);
    }
}
