//! `/oncall`: who each service pages first right now, and every escalation policy in words.

use askama::Template;
use askama_web::WebTemplate;
use axum::extract::State;

use super::actions::{self, ServiceOnCall};
use super::db::{self, StoredPolicy};
use crate::http::access::{Auth, Viewer};
use crate::http::page::{Chrome, PageResult};
use crate::state::AppState;

#[derive(Template, WebTemplate)]
#[template(path = "oncall/now.html")]
pub struct OnCallPage {
    chrome: Chrome,
    services: Vec<ServiceOnCall>,
    policies: Vec<StoredPolicy>,
    /// Contact methods that stopped working, shown to admins.
    failing: Vec<crate::notify::db::FailingMethod>,
}

pub async fn show(
    State(state): State<AppState>,
    chrome: Chrome,
    _auth: Auth<Viewer>,
) -> PageResult<OnCallPage> {
    let mut conn = state.pool.acquire().await?;
    let services = actions::on_call_now(&mut conn).await?;
    let policies = db::list(&mut *conn, None).await?;
    let failing = if chrome.can("admin") {
        crate::notify::db::failing_methods(&mut *conn).await?
    } else {
        vec![]
    };
    Ok(OnCallPage {
        chrome,
        services,
        policies,
        failing,
    })
}
