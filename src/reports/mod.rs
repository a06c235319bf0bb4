//! Reports for managers: mean and median time to acknowledge, mitigate and resolve, by service,
//! severity and month, with server-rendered SVG charts.

pub mod db;
pub mod domain;
pub mod handlers;
pub mod pages;
