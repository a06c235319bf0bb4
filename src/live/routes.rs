//! The live room's routes: server-sent events for every incident and for one.

use axum::routing::get;

use super::handlers;
use crate::http::routes::Routes;

pub fn routes() -> Routes {
    Routes::new()
        .page("/incidents/events", get(handlers::all))
        .page("/incidents/{key}/events", get(handlers::incident))
}
