//! Working-on claims: "I am looking into the processor's status page", shown to everyone on the
//! incident, so two responders do not chase the same lead unaware of each other. The rules and
//! the table; claims are made, renewed and released by `actions` (called by
//! `incidents::actions`, which writes their timeline entries), and end with their incident
//! (`actions::end_with_incident`, in the resolve's transaction).

pub mod actions;
pub mod db;
pub mod domain;
