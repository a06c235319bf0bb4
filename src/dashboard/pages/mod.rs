//! The dashboard's pages: the organisation's at `/` (`home`), each team's (`team`) and each
//! service's (`service`).

pub mod home;
pub mod service;
pub mod team;

pub use home::show;
