//! Action items: what a postmortem commits people to, with an owner, a due date, a type and a
//! status. Written on the postmortem page and the `/action-items` list (their handlers live with
//! postmortems); read here by anyone who shows them, such as each owner's list on `/incidents`.

pub mod db;
pub mod domain;
