//! On call: schedules of rotations in layers, with overrides; who is on call at any instant is
//! computed from them, never stored. (So far the rules; the API, pages, escalation and paging
//! build on them.)

pub mod domain;
