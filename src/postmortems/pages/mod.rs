//! `/incidents/{key}/postmortem`: the document as a page, edited section by section (each form
//! carries the version it was rendered from; a stale one is refused with 409), and
//! `/incidents/{key}/postmortem.md`, the same document in Markdown.
//!
//! Also the lists across incidents: `/postmortems`, `/action-items` and `/near-misses`.

mod edits;
mod lists;
mod shared;
mod show;

pub use edits::*;
pub use lists::*;
pub use show::*;
