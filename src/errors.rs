//! Errors raised with real SQLSTATEs.

use pgrx::pg_sys::panic::ErrorReport;
use pgrx::{PgLogLevel, PgSqlErrorCode};

/// Raises `invalid_parameter_value` (22023) with `message` and a hint. Does not return.
pub fn invalid_parameter(message: impl Into<String>, hint: &'static str) -> ! {
    ErrorReport::new(PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE, message.into(), "")
        .set_hint(hint)
        .report(PgLogLevel::ERROR);
    unreachable!("ERROR does not return")
}

/// Raises `null_value_not_allowed` (22004) with `message` and a hint. Does not return.
pub fn null_not_allowed(message: impl Into<String>, hint: &'static str) -> ! {
    ErrorReport::new(PgSqlErrorCode::ERRCODE_NULL_VALUE_NOT_ALLOWED, message.into(), "")
        .set_hint(hint)
        .report(PgLogLevel::ERROR);
    unreachable!("ERROR does not return")
}
