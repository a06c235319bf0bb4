//! What makes a valid challenge (`model.rs`), how a hypothesis is graded against its rubric
//! (`language.rs` reads the hypothesis, `lexicon.rs` knows the words, `grading.rs` reads what it
//! claims), and how a first draft is written from a postmortem (`generate.rs`).

pub use crate::evidence::domain::{Evidence, EvidenceKind, Source};

mod generate;
mod grading;
mod language;
mod lexicon;
pub(crate) mod model;
mod thesaurus;

pub use generate::{Material, generate};
pub use grading::{Accepted, Grade, Leak, grade, grade_with, leaks, verdict_score};
pub use model::*;
