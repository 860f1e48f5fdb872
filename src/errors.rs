//! Errors raised with real SQLSTATEs.

use pgrx::pg_sys::panic::ErrorReport;
use pgrx::{PgLogLevel, PgSqlErrorCode};

/// Raises an ERROR with `code`, `message` and a hint. Does not return.
fn raise(code: PgSqlErrorCode, message: String, hint: &'static str) -> ! {
    ErrorReport::new(code, message, "").set_hint(hint).report(PgLogLevel::ERROR);
    unreachable!("ERROR does not return")
}

/// Raises `invalid_parameter_value` (22023) with `message` and a hint.
pub fn invalid_parameter(message: impl Into<String>, hint: &'static str) -> ! {
    raise(PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE, message.into(), hint)
}

/// Raises `null_value_not_allowed` (22004) with `message` and a hint.
pub fn null_not_allowed(message: impl Into<String>, hint: &'static str) -> ! {
    raise(PgSqlErrorCode::ERRCODE_NULL_VALUE_NOT_ALLOWED, message.into(), hint)
}

/// Raises `object_not_in_prerequisite_state` (55000) with `message` and a hint.
pub fn not_in_prerequisite_state(message: impl Into<String>, hint: &'static str) -> ! {
    raise(PgSqlErrorCode::ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE, message.into(), hint)
}
