//! The dashboard's pages: the organisation's at `/` (`home`), and each team's (`team`).

pub mod home;
pub mod team;

pub use home::show;
