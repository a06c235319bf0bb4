//! Reports for managers: mean and median time to acknowledge, mitigate and resolve, by service,
//! severity and month, with server-rendered SVG charts. The figures are kept in a materialized
//! view that `refresher` computes again when incidents change.

pub mod db;
pub mod domain;
pub mod handlers;
pub mod pages;
pub mod refresher;
pub mod routes;
