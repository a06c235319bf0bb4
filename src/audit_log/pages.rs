//! The audit log page for admins.

use askama::Template;
use askama_web::WebTemplate;

use super::handlers::AuditQuery;
use crate::audit::db::{self, Entry};
use crate::http::access::Admin;
use crate::http::extract::ApiQuery;
use crate::http::page::Chrome;
use crate::http::page::PageResult;
use crate::http::request::PageRequest;

#[derive(Template, WebTemplate)]
#[template(path = "admin/audit.html")]
pub struct AuditPage {
    chrome: Chrome,
    entries: Vec<Entry>,
    action: String,
    actor: String,
    outcome: String,
    older: Option<String>,
}

pub async fn list(
    PageRequest(state, chrome, _): PageRequest<Admin>,
    ApiQuery(query): ApiQuery<AuditQuery>,
) -> PageResult<AuditPage> {
    let (filter, limit) = query.filter()?;
    let entries = db::list(&state.pool, &filter, limit).await?;
    let older = (entries.len() as i64 == limit)
        .then(|| {
            entries.last().map(|e| {
                let mut q = form_urlencoded::Serializer::new(String::new());
                for (k, v) in [
                    ("action", &filter.action),
                    ("actor", &filter.actor),
                    ("outcome", &filter.outcome),
                ] {
                    if let Some(v) = v {
                        q.append_pair(k, v);
                    }
                }
                q.append_pair("before", &e.id.to_string());
                format!("/admin/audit?{}", q.finish())
            })
        })
        .flatten();
    Ok(AuditPage {
        chrome,
        action: filter.action.unwrap_or_default(),
        actor: filter.actor.unwrap_or_default(),
        outcome: filter.outcome.unwrap_or_default(),
        entries,
        older,
    })
}
