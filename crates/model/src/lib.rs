//! Counter-based speedup and energy models (colab-tpds 5.1, Fig. 5).
//!
//! - [`events`]: the ARMv8 PMU event vocabulary and perf's spellings of it.
//! - [`table`]: the training table (CSV: program, core type, event counts,
//!   measured speedup and energy ratio), parsed and checked with errors
//!   naming the row and column.
//! - [`train()`]: per core type, PCA selection of the N most informative events,
//!   least-squares models for speedup and energy ratio, leave-one-program-out
//!   cross-validation. The ranking rule is documented in [`train`](mod@train).
//! - [`Model`]: the versioned JSON model file, prediction from counts, and
//!   the built-in `colab-tpds-armv8` model (the paper's Fig. 5b).
//! - [`perf`]: `perf stat -x,` output, and training tables assembled from
//!   perf runs plus measured time and energy, with the measuring recipe.
//!
//! Pure logic: strings and readers in, values and JSON out. Files, reports
//! and charts belong to the `colab-train` crate.

pub mod events;
pub mod model;
pub mod perf;
pub mod table;
pub mod train;

pub use events::CPU_CYCLES;
pub use model::{
    CoreModel, Linear, Model, ModelError, Prediction, Source, ANY_CORE_TYPE, BUILTIN_MODELS,
    FORMAT_VERSION,
};
pub use table::{TableError, TableRow, TableShape, TrainingTable};
pub use train::{train, TrainError, TrainOptions, TrainingSummary};

#[cfg(test)]
mod tests;
