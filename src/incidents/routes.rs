//! The incident's own routes: the API for an incident and what hangs off it, its pages and the
//! forms they send, and the signed acknowledge link.

use axum::routing::{get, post};
use utoipa_axum::routes;

use super::handlers as api;
use super::{forms as form, pages};
use crate::http::routes::Routes;

pub fn routes() -> Routes {
    Routes::new()
        .api(routes!(api::list, api::create))
        .api(routes!(api::get, api::patch))
        .api(routes!(api::acknowledge))
        .api(routes!(api::mitigate))
        .api(routes!(api::resolve))
        .api(routes!(api::reopen))
        .api(routes!(api::snooze, api::end_snooze))
        .api(routes!(api::escalate))
        .api(routes!(api::reassign))
        .api(routes!(api::change_severity))
        .api(routes!(api::assign_role, api::unassign_role))
        .api(routes!(api::timeline, api::add_note))
        .api(routes!(api::updates, api::add_update))
        .api(routes!(api::claims, api::claim))
        .api(routes!(api::renew_claim))
        .api(routes!(api::release_claim))
        .api(routes!(api::bridge, api::set_bridge))
        .api(routes!(api::notifications))
        .api(routes!(api::suspect_changes))
        .api(routes!(api::judge_suspect_change))
        .api(routes!(api::checklist, api::tick_checklist))
        .api(routes!(api::paging))
        .api(routes!(api::access, api::set_access))
        .page("/incidents", get(pages::list).post(pages::create))
        .page("/incidents/new", get(pages::new_form))
        .page("/incidents/{key}", get(pages::show))
        .page(
            "/incidents/{key}/edit",
            get(form::edit_form).post(form::edit),
        )
        .page("/incidents/{key}/transition", post(form::transition))
        .page("/incidents/{key}/snooze", post(form::snooze))
        .page("/incidents/{key}/snooze/end", post(form::end_snooze))
        .page("/incidents/{key}/escalate", post(form::escalate))
        .page("/incidents/{key}/reassign", post(form::reassign))
        .page("/incidents/{key}/responders", post(form::add_responder))
        .page(
            "/incidents/{key}/responders/{id}/accept",
            post(form::accept_responder),
        )
        .page("/incidents/{key}/severity", post(form::change_severity))
        .page("/incidents/{key}/roles", post(form::set_role))
        .page("/incidents/{key}/notes", post(form::add_note))
        .page("/incidents/{key}/claims", post(form::claim))
        .page("/incidents/{key}/claims/{id}", post(form::claim_action))
        .page("/incidents/{key}/bridge", post(form::set_bridge))
        .page("/incidents/{key}/access", post(form::set_access))
        .page("/incidents/{key}/updates", post(form::add_update))
        .page(
            "/incidents/{key}/suspects/{change_id}",
            post(form::judge_suspect),
        )
        .page("/incidents/{key}/checklist", post(form::tick_checklist))
        // An acknowledge link is its own credential (signed, single-use, expiring).
        .open(
            "/incidents/{key}/ack/{token}",
            get(pages::ack_link).post(pages::ack_by_link),
        )
}
