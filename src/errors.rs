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

/// Raises `object_not_in_prerequisite_state` (55000) with `message` and a hint. Does not return.
pub fn not_in_prerequisite_state(message: impl Into<String>, hint: &'static str) -> ! {
    ErrorReport::new(PgSqlErrorCode::ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE, message.into(), "")
        .set_hint(hint)
        .report(PgLogLevel::ERROR);
    unreachable!("ERROR does not return")
}
