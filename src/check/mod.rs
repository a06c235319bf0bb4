//! `quell check`: whether a database is one Quell can run on — every migration this binary
//! has applied as it has it, and the invariants the code keeps holding (after a restore, an
//! upgrade, or a hand's repair).

pub mod actions;
pub mod db;
pub mod domain;
