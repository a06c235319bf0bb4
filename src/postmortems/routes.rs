//! Postmortems' routes: the document, its review and publication, comments and action items.

use axum::routing::{get, post};
use utoipa_axum::routes;

use super::{handlers as api, pages};
use crate::http::routes::Routes;

pub fn routes() -> Routes {
    const PM: &str = "/incidents/{key}/postmortem";
    Routes::new()
        .api(routes!(api::list))
        .api(routes!(api::list_postmortems))
        .api(routes!(api::get))
        .api(routes!(api::comments, api::add_comment))
        .api(routes!(api::resolve_comment))
        .api(routes!(api::patch, api::delete))
        .page(PM, get(pages::show))
        .page(&format!("{PM}.md"), get(pages::export))
        .page(&format!("{PM}/sections"), post(pages::edit_section))
        .page(&format!("{PM}/facts"), post(pages::edit_facts))
        .page(&format!("{PM}/timeline"), post(pages::choose_timeline))
        .page(&format!("{PM}/review"), post(pages::review))
        .page(&format!("{PM}/publish"), post(pages::publish))
        .page(&format!("{PM}/versions/{{number}}"), get(pages::version))
        .page(&format!("{PM}/comments"), post(pages::comment))
        .page(
            &format!("{PM}/comments/{{id}}/resolve"),
            post(pages::resolve_comment),
        )
        .page(&format!("{PM}/action-items"), post(pages::add_item))
        .page(&format!("{PM}/action-items/{{id}}"), post(pages::edit_item))
        .page(
            &format!("{PM}/action-items/{{id}}/delete"),
            post(pages::delete_item),
        )
        .page("/near-misses", get(pages::near_misses))
        .page("/postmortems", get(pages::list))
        .page("/action-items", get(pages::action_items))
        .page("/action-items/{id}", post(pages::item_status))
}
