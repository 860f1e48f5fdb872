//! The settings a checked write pins: `simdup.checked_write`, and those that decide the text
//! of values crossing to the workers and back.

use std::ffi::{CStr, CString};

use pgrx::pg_sys;
use pgrx::prelude::*;

use crate::errors::OrRaise;

/// Sets a setting until the end of the current GUC nest level (`GUC_ACTION_SAVE`, as a
/// function's SET clause does).
pub(crate) fn set_local(name: &str, value: &str) {
    let (name, value) = (CString::new(name).unwrap_or_default(), CString::new(value).unwrap_or_default());
    // SAFETY: set_config_option with valid C strings, as a function's SET clause does.
    unsafe {
        pg_sys::set_config_option(
            name.as_ptr(),
            value.as_ptr(),
            pg_sys::GucContext::PGC_USERSET,
            pg_sys::GucSource::PGC_S_SESSION,
            pg_sys::GucAction::GUC_ACTION_SAVE,
            true,
            0,
            false,
        );
    }
}

/// `SET LOCAL simdup.checked_write = marker`, propagated to every worker of this transaction.
pub(crate) fn mark(marker: &str) {
    set_on_workers(&[("simdup.checked_write", marker)]);
}

/// `SET LOCAL name = value` for each of `settings`, from inside one DO block, which Citus counts
/// as a transaction block and so propagates to every worker of this transaction (with
/// `citus.propagate_set_commands = 'local'`), to its end; on the coordinator each lasts to the
/// end of the checked write's GUC nest level if the write set it there first ([`set_local`]),
/// else to the end of the transaction too.
pub(crate) fn set_on_workers(settings: &[(&str, &str)]) {
    let sets: String = settings
        .iter()
        .map(|(name, value)| format!("SET LOCAL {name} = {}; ", pgrx::spi::quote_literal(value)))
        .collect();
    // The DO block's body quoted as a literal: no dollar tag a value could contain.
    let body = pgrx::spi::quote_literal(format!("BEGIN {sets}END"));
    Spi::run(&format!("DO {body}")).or_raise("setting a parameter on the workers");
}

/// The settings by which the coordinator writes a value as text, and what the checked write
/// pins them to there ([`pin_transfer`]). Values cross to the workers as text: Citus writes a
/// constant or a parameter with the coordinator's output function (a constant as a literal,
/// quoted by the coordinator's `standard_conforming_strings`) and a worker reads it with its
/// own settings. With these, the text is one every worker reads back as the same value whatever
/// its own DateStyle, IntervalStyle or float and bytea settings: ISO dates and times (with the
/// offset of a `timestamptz`), intervals with a sign on every field, floats with every digit, hex
/// bytea; only `standard_conforming_strings` must agree, and is pinned on the workers too. The
/// workers' rows come back in binary (Citus's binary protocol, on), not as text of the workers'
/// settings.
pub(crate) const TRANSFER: [(&str, &str); 6] = [
    ("standard_conforming_strings", "on"),
    ("DateStyle", "ISO, MDY"),
    ("IntervalStyle", "postgres"),
    ("extra_float_digits", "3"),
    ("bytea_output", "hex"),
    ("citus.enable_binary_protocol", "on"),
];

/// Pins the settings of [`TRANSFER`] on the coordinator, to the end of the current GUC nest
/// level: while a statement whose values Citus sends to the workers is planned (Citus writes
/// most of its shard queries then).
pub(crate) fn pin_coordinator() {
    for (name, value) in TRANSFER {
        set_local(name, value);
    }
}

/// Pins the settings of a value's transfer for the statements of a checked write (or for the
/// query of a checked statement's rows that reads Citus tables): [`TRANSFER`] on the
/// coordinator, to the end of the current GUC nest level, and on the workers of this
/// transaction `standard_conforming_strings = on` (how they read the literals) and `TimeZone` =
/// the writer's (so that what a shard computes from a time, `timestamptz` to `timestamp` or
/// `date` say, is what the writer's session computes), with `SET LOCAL`, which Citus sends them
/// and which lasts there to the end of the transaction: every checked write sets them again
/// before its statements, whatever ran in between. The coordinator keeps the writer's TimeZone.
pub(crate) fn pin_transfer() {
    let time_zone = current_setting(c"TimeZone");
    pin_coordinator();
    // Set at this nest level first, so that on the coordinator the DO block's SET LOCAL of it
    // ends with the nest level (as the pins above), not with the transaction.
    set_local("TimeZone", &time_zone);
    set_local("citus.propagate_set_commands", "local");
    set_on_workers(&[("standard_conforming_strings", "on"), ("TimeZone", time_zone.as_str())]);
}

/// The current value of built-in setting `name`.
pub(crate) fn current_setting(name: &CStr) -> String {
    // SAFETY: reads a built-in setting by name (missing_ok false: it exists).
    unsafe { CStr::from_ptr(pg_sys::GetConfigOption(name.as_ptr(), false, false)).to_string_lossy().into_owned() }
}

/// Runs the query `f` makes over every shard with `enable_seqscan = off` and `jit = off` on the
/// shards, then puts back the caller's values there. The similarity search joins the rows to the
/// table on its index's `&&`: a shard's planner that believes it empty (statistics from before
/// this transaction's own rows, after a TRUNCATE, say) would otherwise scan it and sign every
/// row. Those joins, priced with the index expressions' costs, also pass `jit_above_cost`, and
/// compiling them cost more than running them: a batch's count of shared index values (871
/// values, 4 rows a shard) took 2,885 ms with JIT, 87 ms without.
pub(crate) fn on_index<T>(f: impl FnOnce() -> T) -> T {
    let (seqscan, jit) = (current_setting(c"enable_seqscan"), current_setting(c"jit"));
    set_local("citus.propagate_set_commands", "local");
    set_on_workers(&[("enable_seqscan", "off"), ("jit", "off")]);
    let result = f();
    set_on_workers(&[("enable_seqscan", seqscan.as_str()), ("jit", jit.as_str())]);
    result
}
