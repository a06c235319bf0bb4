//! `/incidents/{key}/merge`: merge the incident into one it duplicates, or move a line of its
//! alerts out into a new incident. Refused forms come back with what was typed and why.

use askama::Template;
use askama_web::WebTemplate;
use axum::extract::Path;
use axum::response::Response;
use serde::Deserialize;

use super::actions::{self, SplitDraft};
use super::db::Candidate;
use super::handlers::path_key;
use crate::alert_store::db::AlertGroupLine;
use crate::error::FieldError;
use crate::http::access::Responder;
use crate::http::extract::PageForm;
use crate::http::page::{Chrome, PageResult, submitted};
use crate::http::request::PageRequest;
use crate::incident_ref::db::IncidentRef;
use crate::incident_ref::domain::SeenBy;
use crate::state::AppState;

/// What was typed in the page's forms, shown again when refused.
#[derive(Deserialize, Clone, Default)]
pub struct MergeForm {
    version: Option<i32>,
    #[serde(default)]
    into: String,
}

#[derive(Deserialize, Clone, Default)]
pub struct SplitForm {
    version: Option<i32>,
    #[serde(default)]
    line: String,
    #[serde(default)]
    title: String,
    #[serde(default)]
    severity: String,
}

#[derive(Template, WebTemplate)]
#[template(path = "merging/page.html")]
pub struct MergePage {
    chrome: Chrome,
    incident: IncidentRef,
    version: i32,
    candidates: Vec<Candidate>,
    lines: Vec<AlertGroupLine>,
    merge: MergeForm,
    split: SplitForm,
    /// Which form the errors are of: `merge` or `split`
    refused: &'static str,
    errors: Vec<FieldError>,
}

impl MergePage {
    fn errors_of(&self, form: &str) -> &[FieldError] {
        if self.refused == form {
            &self.errors
        } else {
            &[]
        }
    }
}

struct Refused {
    merge: MergeForm,
    split: SplitForm,
    refused: &'static str,
    errors: Vec<FieldError>,
}

async fn page(
    state: &AppState,
    (chrome, sees): (Chrome, SeenBy),
    incident: IncidentRef,
    refused: Refused,
) -> PageResult<MergePage> {
    let version = crate::incidents::db::get(&state.pool, incident.key)
        .await?
        .version;
    let candidates =
        super::db::candidates(&state.pool, incident.id, incident.service_id, sees, 50).await?;
    let lines = crate::alert_store::db::lines_for_incident(&state.pool, incident.id).await?;
    Ok(MergePage {
        chrome,
        incident,
        version,
        candidates,
        lines,
        merge: refused.merge,
        split: refused.split,
        refused: refused.refused,
        errors: refused.errors,
    })
}

pub async fn show(
    PageRequest(state, chrome, auth): PageRequest<Responder>,
    Path(key): Path<String>,
) -> PageResult<MergePage> {
    let sees = SeenBy::of(&auth.user);
    let incident = crate::related::actions::incident(&state.pool, path_key(&key)?, sees).await?;
    let nothing = Refused {
        merge: MergeForm::default(),
        split: SplitForm::default(),
        refused: "",
        errors: vec![],
    };
    page(&state, (chrome, sees), incident, nothing).await
}

pub async fn merge(
    PageRequest(state, chrome, auth): PageRequest<Responder>,
    Path(key): Path<String>,
    PageForm(f): PageForm<MergeForm>,
) -> PageResult<Response> {
    let sees = SeenBy::of(&auth.user);
    let from = crate::related::actions::incident(&state.pool, path_key(&key)?, sees).await?;
    let tried = crate::transaction::write(&state.pool, |tx, _| {
        Box::pin(actions::merge(
            tx,
            &from,
            &f.into,
            f.version,
            (&auth.actor, sees),
        ))
    })
    .await;
    submitted(
        tried,
        |m| format!("/incidents/{}#timeline", m.into),
        async |errors| {
            let refused = Refused {
                merge: f.clone(),
                split: SplitForm::default(),
                refused: "merge",
                errors,
            };
            page(&state, (chrome, sees), from.clone(), refused).await
        },
    )
    .await
}

pub async fn split(
    PageRequest(state, chrome, auth): PageRequest<Responder>,
    Path(key): Path<String>,
    PageForm(f): PageForm<SplitForm>,
) -> PageResult<Response> {
    let sees = SeenBy::of(&auth.user);
    let from = crate::related::actions::incident(&state.pool, path_key(&key)?, sees).await?;
    let draft = SplitDraft {
        alerts: vec![],
        // A form sends the line's breaks as CRLF; the alert stored LF.
        lines: if f.line.is_empty() {
            vec![]
        } else {
            vec![f.line.replace("\r\n", "\n")]
        },
        title: f.title.clone(),
        severity: f.severity.clone(),
    };
    let tried = crate::transaction::write(&state.pool, |tx, _| {
        Box::pin(actions::split(tx, &from, &draft, f.version, &auth.actor))
    })
    .await;
    submitted(
        tried,
        |s| format!("/incidents/{}", s.new),
        async |errors| {
            let refused = Refused {
                merge: MergeForm::default(),
                split: f.clone(),
                refused: "split",
                errors,
            };
            page(&state, (chrome, sees), from.clone(), refused).await
        },
    )
    .await
}
