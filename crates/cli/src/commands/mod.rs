//! One module per subcommand: its arguments, help texts and the call into
//! the library crates that do the work.

pub mod analytic;
pub mod bench;
pub mod calibrate;
pub mod compare;
pub mod fingerprint;
pub mod headline;
pub mod heavy_thread;
pub mod list;
pub mod mixes;
pub mod model_check;
pub mod native;
pub mod reproduce;
pub mod sim;
pub mod topology;
pub mod trace;
pub mod trace_probe;
pub mod trace_stats;
pub mod train;
pub mod validate;
