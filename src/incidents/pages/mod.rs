//! The incident pages: the list, one incident with its timeline and actions, and the forms to
//! open and edit one. They work without JavaScript; every state-changing form carries the
//! version it was rendered from, and a stale one gets a 409 page showing what changed.

mod ack;
mod list;
mod shared;
mod show;

pub use ack::{AckPage, ack_by_link, ack_link};
pub use list::{IncidentForm, ListPage, NewPage, create, list, new_form};
pub(super) use shared::{field_errors, saved, saved_at, service_names};
pub use show::{ShowPage, ShowQuery, TimelineRow, show};
pub(super) use show::{refused, timeline_rows};
