//! One way to raise errors: a builder with a real SQLSTATE, DETAIL and HINT.
//!
//! ```ignore
//! Error::new(PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE, "maximum distance 99 is out of range")
//!     .hint("...")
//!     .raise()
//! ```
//!
//! `raise` reports an ERROR, which unwinds to the nearest `#[pg_guard]` boundary and from there
//! to PostgreSQL: no path a user can reach ends in a Rust panic (SQLSTATE XX000).

use pgrx::pg_sys::panic::ErrorReport;
use pgrx::{PgLogLevel, PgSqlErrorCode};

pub use pgrx::PgSqlErrorCode as Code;

/// An ERROR being built.
#[must_use = "an Error does nothing until it is raised"]
pub struct Error {
    code: PgSqlErrorCode,
    message: String,
    detail: Option<String>,
    hint: Option<String>,
}

impl Error {
    pub fn new(code: PgSqlErrorCode, message: impl Into<String>) -> Error {
        Error { code, message: message.into(), detail: None, hint: None }
    }

    pub fn detail(mut self, detail: impl Into<String>) -> Error {
        self.detail = Some(detail.into());
        self
    }

    pub fn hint(mut self, hint: impl Into<String>) -> Error {
        self.hint = Some(hint.into());
        self
    }

    /// Reports the error. Does not return.
    pub fn raise(self) -> ! {
        self.report(PgLogLevel::ERROR);
        unreachable!("ERROR does not return")
    }

    /// Reports it as a WARNING (with its SQLSTATE, DETAIL and HINT), and returns.
    pub fn warn(self) {
        self.report(PgLogLevel::WARNING);
    }

    fn report(self, level: PgLogLevel) {
        let mut report = ErrorReport::new(self.code, self.message, "");
        if let Some(detail) = self.detail {
            report = report.set_detail(detail);
        }
        if let Some(hint) = self.hint {
            report = report.set_hint(hint);
        }
        report.report(level);
    }
}

/// `invalid_parameter_value` (22023) with a hint: the error of every out-of-range argument.
pub fn invalid_parameter(message: impl Into<String>, hint: &str) -> ! {
    Error::new(Code::ERRCODE_INVALID_PARAMETER_VALUE, message).hint(hint).raise()
}

/// `null_value_not_allowed` (22004) with a hint.
pub fn null_not_allowed(message: impl Into<String>, hint: &str) -> ! {
    Error::new(Code::ERRCODE_NULL_VALUE_NOT_ALLOWED, message).hint(hint).raise()
}

/// `object_not_in_prerequisite_state` (55000) with a hint.
pub fn not_in_prerequisite_state(message: impl Into<String>, hint: &str) -> ! {
    Error::new(Code::ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE, message).hint(hint).raise()
}

/// `index_corrupted` (XX002): an index page that is not what the B-tree format says, met by
/// simdup's own page reader (src/search/btree/); the hint is the cure.
pub fn index_corrupted(index: &str, what: &str) -> ! {
    Error::new(Code::ERRCODE_INDEX_CORRUPTED, format!("index \"{index}\" is corrupted: {what}"))
        .hint("REINDEX the index; amcheck's bt_index_check tells more.")
        .raise()
}

/// `internal_error` (XX000) for a failure of PostgreSQL's own machinery (SPI) that no argument
/// can cause; it names what failed instead of panicking.
pub fn internal(what: impl std::fmt::Display) -> ! {
    Error::new(Code::ERRCODE_INTERNAL_ERROR, format!("simdup: {what}")).raise()
}

/// Unwraps a result of PostgreSQL's machinery (SPI), raising [`internal`] on an error.
pub trait OrRaise<T> {
    fn or_raise(self, what: &str) -> T;
}

impl<T, E: std::fmt::Display> OrRaise<T> for Result<T, E> {
    fn or_raise(self, what: &str) -> T {
        self.unwrap_or_else(|e| internal(format_args!("{what}: {e}")))
    }
}

/// An ERROR about a constraint of a table, ready to be raised from a function's outermost frame
/// with the schema, table and constraint name fields that drivers read (`PG_DIAG_SCHEMA_NAME`,
/// `PG_DIAG_TABLE_NAME`, `PG_DIAG_CONSTRAINT_NAME`), as PostgreSQL's own unique violations
/// carry them. pgrx's error path keeps only SQLSTATE, message, DETAIL and HINT, so this one
/// calls `errstart` … `errfinish` itself. Its strings are palloc'd, so nothing Rust owns is
/// alive when `errfinish` jumps out.
pub struct ConstraintError {
    code: i32,
    message: *mut std::ffi::c_char,
    detail: *mut std::ffi::c_char,
    constraint: *mut std::ffi::c_char,
    rel: pgrx::pg_sys::Relation,
}

/// palloc'd copy of `s` (NUL bytes, which SQL text cannot hold anyway, become spaces).
fn pstrdup(s: &str) -> *mut std::ffi::c_char {
    let c = std::ffi::CString::new(s.replace('\0', " ")).unwrap_or_default();
    // SAFETY: pstrdup copies the NUL-terminated string into the current memory context.
    unsafe { pgrx::pg_sys::pstrdup(c.as_ptr()) }
}

impl Error {
    /// This error as one about constraint `constraint` of table `rel`.
    pub fn for_constraint(self, rel: pgrx::pg_sys::Relation, constraint: &str) -> ConstraintError {
        ConstraintError {
            code: self.code as i32,
            message: pstrdup(&self.message),
            detail: self.detail.as_deref().map_or(std::ptr::null_mut(), pstrdup),
            constraint: pstrdup(constraint),
            rel,
        }
    }
}

#[allow(improper_ctypes)]
unsafe extern "C-unwind" {
    fn errstart(elevel: std::ffi::c_int, domain: *const std::ffi::c_char) -> bool;
    fn errcode(sqlerrcode: std::ffi::c_int) -> std::ffi::c_int;
    fn errmsg(fmt: *const std::ffi::c_char, ...) -> std::ffi::c_int;
    fn errdetail(fmt: *const std::ffi::c_char, ...) -> std::ffi::c_int;
    fn errtableconstraint(rel: pgrx::pg_sys::Relation, conname: *const std::ffi::c_char) -> std::ffi::c_int;
    fn errfinish(filename: *const std::ffi::c_char, lineno: std::ffi::c_int, funcname: *const std::ffi::c_char);
}

impl ConstraintError {
    /// Raises the error. Does not return: `errfinish` jumps to PostgreSQL's error handler.
    ///
    /// # Safety
    /// Call it only from the outermost Rust frame of a function called by PostgreSQL (not
    /// inside `#[pg_guard]` code), with no value that needs dropping alive in that frame, and
    /// with `rel` still open.
    #[track_caller]
    pub unsafe fn raise(self) -> ! {
        const PERCENT_S: &std::ffi::CStr = c"%s";
        let caller = std::panic::Location::caller();
        let file = pstrdup(caller.file());
        // SAFETY: the caller guarantees the frame; the strings are palloc'd and NUL-terminated;
        // ERROR makes errstart return true and errfinish not return.
        unsafe {
            if errstart(pgrx::pg_sys::PGERROR as std::ffi::c_int, std::ptr::null()) {
                errcode(self.code);
                errmsg(PERCENT_S.as_ptr(), self.message);
                if !self.detail.is_null() {
                    errdetail(PERCENT_S.as_ptr(), self.detail);
                }
                errtableconstraint(self.rel, self.constraint);
                // The function named is the trigger (the constraint has its name).
                errfinish(file, caller.line() as std::ffi::c_int, self.constraint);
            }
        }
        unreachable!("ERROR does not return")
    }
}
