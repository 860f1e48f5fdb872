//! The dedup trigger's arguments: one struct writes them (`simdup_enable`, through
//! `_simdup_dedup_trigger_args`) and parses them (the trigger), so they cannot drift apart; and
//! the readers of a table's trigger arguments.

use std::ffi::CStr;

use pgrx::pg_sys;
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
    /// How a candidate within k is confirmed from the two texts; None: every row within k is a
    /// near-duplicate (an adopted fingerprint column, which has no text to read; and a trigger
    /// installed before 0.4.0, which has five arguments).
    pub verify: Option<Verify>,
}

/// The verification of a SimHash candidate: [`simdup_core::similarity::Rule::verification`] with
/// these thresholds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Verify {
    pub threshold: f64,
    pub containment: Option<f64>,
}

impl Eq for Verify {}

impl Verify {
    /// The rule that decides on a candidate.
    pub fn rule(&self) -> simdup_core::similarity::Rule {
        simdup_core::similarity::Rule::verification(self.threshold, self.containment)
    }
}

impl Config {
    /// The `CREATE TRIGGER` argument list, as SQL literals: five, then the verification's
    /// threshold and containment ('' for none) when the trigger verifies.
    pub fn to_args(&self) -> String {
        let mut args = vec![
            self.mode.as_str().to_owned(),
            self.k.to_string(),
            self.text_column.clone().unwrap_or_default(),
            self.fp_column.clone(),
            self.key_column.clone(),
        ];
        if let Some(v) = self.verify {
            args.push(v.threshold.to_string());
            args.push(v.containment.map(|c| c.to_string()).unwrap_or_default());
        }
        args.iter().map(quote_literal).collect::<Vec<_>>().join(", ")
    }

    /// The configuration from the trigger's arguments (five, or seven with the
    /// verification's); 39P01 (trigger protocol violated) for a wrong count or a verification
    /// without a text column, 22023 for a bad mode, k or threshold.
    pub fn parse(args: &[String]) -> Config {
        let protocol = |message: String| -> ! {
            Error::new(Code::ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED, message)
                .hint("simdup_dedup_trigger is installed by simdup_enable(tbl, text_column, on_duplicate => ...).")
                .raise()
        };
        let (mode, k, text, fp, key, verify) = match args {
            [mode, k, text, fp, key] => (mode, k, text, fp, key, None),
            [mode, k, text, fp, key, threshold, containment] => (mode, k, text, fp, key, Some((threshold, containment))),
            _ => protocol(format!(
                "simdup_dedup_trigger needs 5 or 7 arguments (mode, max_distance, text_column, fingerprint_column, key_column[, threshold, containment]), got {}",
                args.len()
            )),
        };
        let number = |s: &str| s.parse::<f64>().unwrap_or(f64::NAN);
        let verify = verify.map(|(t, c)| Verify {
            threshold: args::jaccard_threshold(number(t)),
            containment: (!c.is_empty()).then(|| args::containment_threshold(number(c))),
        });
        if verify.is_some() && text.is_empty() {
            protocol(
                "simdup_dedup_trigger verifies candidates from their texts, but it was given no text column".into(),
            );
        }
        Config {
            mode: Mode::parse(mode),
            k: args::max_distance(k.parse::<i32>().unwrap_or(-1)),
            text_column: (!text.is_empty()).then(|| text.clone()),
            fp_column: fp.clone(),
            key_column: key.clone(),
            verify,
        }
    }
}

/// Checks simdup_enable's dedup arguments and returns the trigger's argument list: 22023 for
/// an unknown mode, a k outside 0..64, or a threshold outside (0, 1]. `threshold` NULL: no
/// verification (every row within k is a near-duplicate); `containment` NULL: no containment
/// rule.
#[pg_extern(sql = "")]
fn _simdup_dedup_trigger_args(
    on_duplicate: &str,
    max_distance: i32,
    text_column: Option<&str>,
    fingerprint_column: &str,
    key_column: &str,
    threshold: Option<f64>,
    containment: Option<f64>,
) -> String {
    let text_column = text_column.filter(|t| !t.is_empty());
    let verify = threshold.map(|t| Verify {
        threshold: args::jaccard_threshold(t),
        containment: containment.map(args::containment_threshold),
    });
    if verify.is_some() && text_column.is_none() {
        crate::errors::invalid_parameter(
            "verify needs a text column",
            "An adopted fingerprint column has no text to verify candidates with: pass verify => false, or enable the table with its text column.",
        );
    }
    Config {
        mode: Mode::parse(on_duplicate),
        k: args::max_distance(max_distance),
        text_column: text_column.map(str::to_owned),
        fp_column: fingerprint_column.to_owned(),
        key_column: key_column.to_owned(),
        verify,
    }
    .to_args()
}

/// The arguments of a trigger.
///
/// # Safety
/// `trigger` is a trigger of an open relation's trigger descriptor.
pub(crate) unsafe fn trigger_args(trigger: &pg_sys::Trigger) -> Vec<String> {
    // SAFETY: tgargs holds tgnargs NUL-terminated strings.
    unsafe {
        (0..trigger.tgnargs as usize)
            .map(|i| CStr::from_ptr(*trigger.tgargs.add(i)).to_string_lossy().into_owned())
            .collect()
    }
}

/// The configuration of `rel`'s simdup_dedup trigger, if it has one.
///
/// # Safety
/// `rel` is an open relation.
pub(crate) unsafe fn dedup_config(rel: pg_sys::Relation) -> Option<Config> {
    // SAFETY: the caller guarantees an open relation.
    unsafe { trigger_args_named(rel, TRIGGER).map(|args| Config::parse(&args)) }
}

/// The arguments of `rel`'s trigger named `name`, if it has one.
///
/// # Safety
/// `rel` is an open relation.
pub(crate) unsafe fn trigger_args_named(rel: pg_sys::Relation, name: &str) -> Option<Vec<String>> {
    // SAFETY: the trigger descriptor of an open relation is valid while it is open.
    unsafe {
        let desc = (*rel).trigdesc;
        if desc.is_null() {
            return None;
        }
        std::slice::from_raw_parts((*desc).triggers, (*desc).numtriggers as usize)
            .iter()
            .find(|t| CStr::from_ptr(t.tgname).to_bytes() == name.as_bytes())
            .map(|t| trigger_args(t))
    }
}

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
            verify: None,
        };
        assert_eq!(c.to_args(), "'mark', '7', 'bo''dy', 'fp', 'id'");
        let args = ["mark", "7", "bo'dy", "fp", "id"].map(String::from);
        assert_eq!(Config::parse(&args), c);
        let v = Config { verify: Some(Verify { threshold: 0.5, containment: Some(0.8) }), ..c.clone() };
        assert_eq!(v.to_args(), "'mark', '7', 'bo''dy', 'fp', 'id', '0.5', '0.8'");
        let args = ["mark", "7", "bo'dy", "fp", "id", "0.5", "0.8"].map(String::from);
        assert_eq!(Config::parse(&args), v);
        let j = Config { verify: Some(Verify { threshold: 0.6, containment: None }), ..c };
        assert_eq!(j.to_args(), "'mark', '7', 'bo''dy', 'fp', 'id', '0.6', ''");
        let args = ["mark", "7", "bo'dy", "fp", "id", "0.6", ""].map(String::from);
        assert_eq!(Config::parse(&args), j);
    }
}
