//! The forms that change an existing incident from its page: transitions, severity, roles,
//! notes and the edit form. Each carries the version it was rendered from; a stale one answers
//! 409 with what other responders changed since.

use askama::Template;
use askama_web::WebTemplate;
use axum::extract::Path;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Deserialize;

use super::actions::{self, Change, Patch};
use super::db::{self, Incident};
use super::domain::{IncidentKey, Severity, Transition};
use super::handlers::parse_key;
use super::pages::{
    IncidentForm, TimelineRow, field_errors, refused, saved, saved_at, service_names, timeline_rows,
};
use crate::error::{AppError, FieldError};
use crate::http::access::Responder;
use crate::http::extract::{PageForm, form_time, parse_form_time};
use crate::http::page::Chrome;
use crate::http::page::PageResult;
use crate::http::request::{ApiRequest, PageRequest};
use crate::roles::domain::Role;
use crate::state::AppState;
use crate::timeline;

#[derive(Template, WebTemplate)]
#[template(path = "incidents/stale.html")]
pub struct StalePage {
    chrome: Chrome,
    key: String,
    i: Incident,
    attempted: String,
    changes: Vec<TimelineRow>,
}

/// "Are you sure?" without JavaScript: the step, why it deserves a second look, and the same
/// form again with `confirm=yes`.
#[derive(Template, WebTemplate)]
#[template(path = "incidents/confirm.html")]
pub struct ConfirmPage {
    chrome: Chrome,
    key: String,
    question: String,
    why: String,
    action: String,
    yes: String,
    fields: Vec<(&'static str, String)>,
}

impl ConfirmPage {
    fn response(self) -> Response {
        (StatusCode::OK, self).into_response()
    }
}

/// A form of the incident page as sent: where it sits, what was typed, what saving it says,
/// and (for a versioned form) what the person saw.
struct Sent {
    key: IncidentKey,
    /// What the page says once it is saved (a key of `pages::SAVED`)
    saved: &'static str,
    /// The part of the page it sits in, and its fields, for a refusal that keeps them
    part: &'static str,
    values: Vec<(&'static str, String)>,
    /// The version it was rendered from and what the person tried, for the 409 page
    seen: Option<(i32, String)>,
}

impl Sent {
    /// Refused before anything was tried (a field that does not parse).
    async fn refuse(self, state: &AppState, chrome: Chrome, err: AppError) -> PageResult<Response> {
        refused(state, chrome, self.key, err, self.part, self.values).await
    }
}

/// Runs one change from a form in a transaction of its own (run again if PostgreSQL broke it
/// off). Saved, the page opens at the part it changed, saying so; a stale version answers 409
/// with what changed since; refused, the page comes again with the reason beside the form and
/// what was typed still in it.
async fn apply_form<'a, T, F>(
    state: &AppState,
    chrome: Chrome,
    sent: Sent,
    change: F,
) -> PageResult<Response>
where
    F: for<'t> FnMut(
        &'t mut sqlx::PgConnection,
        crate::transaction::Within<'t, 'a>,
    ) -> crate::transaction::Attempt<'t, T>,
{
    match (
        crate::transaction::write(&state.pool, change).await,
        sent.seen,
    ) {
        (Ok(_), _) => Ok(saved(sent.key, sent.saved)),
        (Err(AppError::Stale { .. }), Some((version, attempted))) => {
            stale_response(state, chrome, sent.key, version, attempted).await
        }
        (Err(err), _) => refused(state, chrome, sent.key, err, sent.part, sent.values).await,
    }
}

/// 409: what other responders changed since the person loaded the form at `seen_version`.
async fn stale_response(
    state: &AppState,
    chrome: Chrome,
    key: IncidentKey,
    seen_version: i32,
    attempted: String,
) -> PageResult<Response> {
    let i = db::get(&state.pool, key).await?;
    let events = timeline::db::changes_since(&state.pool, i.id, seen_version).await?;
    let page = StalePage {
        chrome,
        key: key.to_string(),
        changes: timeline_rows(&events, i.detected_at),
        attempted,
        i,
    };
    Ok((StatusCode::CONFLICT, page).into_response())
}

#[derive(Deserialize)]
pub struct TransitionForm {
    version: i32,
    action: String,
    #[serde(default)]
    note: String,
    #[serde(default)]
    at: String,
    /// `yes` once the person confirmed a step that asks first
    #[serde(default)]
    confirm: String,
}

pub async fn transition(
    PageRequest(state, chrome, auth): PageRequest<Responder>,
    Path(key): Path<String>,
    PageForm(f): PageForm<TransitionForm>,
) -> PageResult<Response> {
    let key = parse_key(&key)?;
    let t = Transition::parse(&f.action)
        .ok_or_else(|| AppError::invalid("action", format!("{:?} is not an action", f.action)))?;
    let sent = Sent {
        key,
        saved: t.as_str(),
        part: "live-head",
        values: vec![
            ("version", f.version.to_string()),
            ("note", f.note.clone()),
            ("at", f.at.clone()),
        ],
        seen: Some((f.version, t.label().to_owned())),
    };
    if f.confirm != "yes" {
        let i = db::get(&state.pool, key).await?;
        // A stale form is answered as stale first: what changed may settle the question.
        if let Some(why) = super::domain::confirmation(i.status, t)
            && i.version == f.version
        {
            return Ok(ConfirmPage {
                chrome,
                key: key.to_string(),
                question: format!("{} {key} while it is still {}?", t.label(), i.status),
                why: why.to_owned(),
                action: format!("/incidents/{key}/transition"),
                yes: format!("Yes, {}", t.label().to_lowercase()),
                fields: [("action", f.action.clone())]
                    .into_iter()
                    .chain(sent.values)
                    .collect(),
            }
            .response());
        }
    }
    let at = match parse_form_time("at", &f.at) {
        Ok(at) => at,
        Err(err) => return sent.refuse(&state, chrome, err).await,
    };
    let change = Change::now(key, &auth.actor)
        .expecting(Some(f.version))
        .dated(at);
    apply_form(&state, chrome, sent, |tx, _| {
        Box::pin(actions::transition(tx, &change, t, &f.note))
    })
    .await
}

#[derive(Deserialize)]
pub struct SnoozeForm {
    version: i32,
    /// Minutes, as the form's choice sends them
    minutes: String,
    #[serde(default)]
    note: String,
}

/// Snoozes an acknowledged incident for the minutes chosen.
pub async fn snooze(
    PageRequest(state, chrome, auth): PageRequest<Responder>,
    Path(key): Path<String>,
    PageForm(f): PageForm<SnoozeForm>,
) -> PageResult<Response> {
    let key = parse_key(&key)?;
    let sent = Sent {
        key,
        saved: "snooze",
        part: "live-head",
        values: vec![("version", f.version.to_string()), ("note", f.note.clone())],
        seen: Some((f.version, "snooze it".to_owned())),
    };
    let minutes = match f.minutes.trim().parse::<i64>() {
        Ok(m) => m,
        Err(_) => {
            let err = AppError::invalid("minutes", "a whole number of minutes");
            return sent.refuse(&state, chrome, err).await;
        }
    };
    let change = Change::now(key, &auth.actor).expecting(Some(f.version));
    apply_form(&state, chrome, sent, |tx, _| {
        Box::pin(actions::snooze(tx, &change, minutes, &f.note))
    })
    .await
}

#[derive(Deserialize)]
pub struct VersionForm {
    version: i32,
}

/// Ends a snooze early; the incident stays acknowledged.
pub async fn end_snooze(
    PageRequest(state, chrome, auth): PageRequest<Responder>,
    Path(key): Path<String>,
    PageForm(f): PageForm<VersionForm>,
) -> PageResult<Response> {
    let key = parse_key(&key)?;
    let sent = Sent {
        key,
        saved: "snooze_end",
        part: "live-head",
        values: vec![("version", f.version.to_string())],
        seen: Some((f.version, "end its snooze".to_owned())),
    };
    let change = Change::now(key, &auth.actor).expecting(Some(f.version));
    apply_form(&state, chrome, sent, |tx, _| {
        Box::pin(actions::end_snooze(tx, &change))
    })
    .await
}

#[derive(Deserialize)]
pub struct EscalateForm {
    version: i32,
    /// The next step the page showed, and its round
    step: Option<i32>,
    round: Option<i32>,
}

/// Escalates now: the next step of the incident's escalation pages at once.
pub async fn escalate(
    PageRequest(state, chrome, auth): PageRequest<Responder>,
    Path(key): Path<String>,
    PageForm(f): PageForm<EscalateForm>,
) -> PageResult<Response> {
    let key = parse_key(&key)?;
    let sent = Sent {
        key,
        saved: "escalate",
        part: "paging",
        values: vec![("version", f.version.to_string())],
        seen: Some((f.version, "escalate it".to_owned())),
    };
    let change = Change::now(key, &auth.actor).expecting(Some(f.version));
    apply_form(&state, chrome, sent, |tx, _| {
        Box::pin(actions::escalate_now(
            tx,
            &change,
            f.step.map(|s| (s, f.round)),
        ))
    })
    .await
}

#[derive(Deserialize)]
pub struct AskForm {
    /// The version the page showed (reassigning only)
    version: Option<i32>,
    /// person, schedule or policy
    #[serde(default)]
    kind: String,
    #[serde(default)]
    name: String,
    #[serde(default)]
    message: String,
}

impl AskForm {
    fn values(&self) -> Vec<(&'static str, String)> {
        vec![
            ("kind", self.kind.clone()),
            ("name", self.name.clone()),
            ("message", self.message.clone()),
        ]
    }

    fn draft(&self) -> Result<crate::responders::domain::AskDraft, AppError> {
        let asked = crate::responders::domain::Asked::from_choice(&self.kind, &self.name)?;
        let named = |k: &str| (asked.kind() == k).then(|| asked.name().to_owned());
        Ok(crate::responders::domain::AskDraft {
            person: named("person"),
            schedule: named("schedule"),
            policy: named("policy"),
            message: self.message.clone(),
        })
    }
}

/// Adds a responder: pages a person, a schedule's on-call person or a policy to help.
pub async fn add_responder(
    PageRequest(state, chrome, auth): PageRequest<Responder>,
    Path(key): Path<String>,
    PageForm(f): PageForm<AskForm>,
) -> PageResult<Response> {
    let key = parse_key(&key)?;
    let sent = Sent {
        key,
        saved: "responder",
        part: "responders",
        values: f.values(),
        seen: None,
    };
    let draft = match f.draft() {
        Ok(d) => d,
        Err(e) => return sent.refuse(&state, chrome, e).await,
    };
    let sees = crate::incident_ref::domain::SeenBy::of(&auth.user);
    let Some(incident) = crate::incident_ref::db::by_key(&state.pool, key, sees).await? else {
        return Err(AppError::NotFound(format!("There is no incident {key}.")).into());
    };
    apply_form(&state, chrome, sent, |tx, _| {
        Box::pin(crate::responders::actions::add(
            tx,
            &incident,
            &draft,
            &auth.actor,
        ))
    })
    .await
}

/// The signed-in person accepts a page a responder request sent them.
pub async fn accept_responder(
    PageRequest(state, chrome, auth): PageRequest<Responder>,
    Path((key, id)): Path<(String, String)>,
) -> PageResult<Response> {
    let key = parse_key(&key)?;
    let id = crate::http::extract::parse_id(&id, "responder request")?;
    let sees = crate::incident_ref::domain::SeenBy::of(&auth.user);
    let Some(incident) = crate::incident_ref::db::by_key(&state.pool, key, sees).await? else {
        return Err(AppError::NotFound(format!("There is no incident {key}.")).into());
    };
    let sent = Sent {
        key,
        saved: "responder_accepted",
        part: "responders",
        values: vec![],
        seen: None,
    };
    let me = (auth.user.id, auth.user.name.as_str());
    apply_form(&state, chrome, sent, |tx, _| {
        Box::pin(crate::responders::actions::accept(
            tx,
            &incident,
            id,
            me,
            &auth.actor,
        ))
    })
    .await
}

/// Reassigns the incident to a person, a schedule's on-call person or a policy.
pub async fn reassign(
    PageRequest(state, chrome, auth): PageRequest<Responder>,
    Path(key): Path<String>,
    PageForm(f): PageForm<AskForm>,
) -> PageResult<Response> {
    let key = parse_key(&key)?;
    let version = f.version.unwrap_or_default();
    let mut values = f.values();
    values.push(("version", version.to_string()));
    let sent = Sent {
        key,
        saved: "reassigned",
        part: "reassign",
        values,
        seen: Some((version, "reassign it".to_owned())),
    };
    let asked = match crate::responders::domain::Asked::from_choice(&f.kind, &f.name) {
        Ok(a) => a,
        Err(e) => return sent.refuse(&state, chrome, e.into()).await,
    };
    let change = Change::now(key, &auth.actor).expecting(Some(version));
    apply_form(&state, chrome, sent, |tx, _| {
        Box::pin(actions::reassign(tx, &change, &asked, &f.message))
    })
    .await
}

#[derive(Deserialize)]
pub struct SeverityForm {
    version: i32,
    severity: String,
    #[serde(default)]
    reason: String,
    #[serde(default)]
    at: String,
    #[serde(default)]
    confirm: String,
    /// The bridge, asked for beside a raise to Sev1 or Sev2
    #[serde(default)]
    call_url: String,
    #[serde(default)]
    chat_url: String,
}

pub async fn change_severity(
    PageRequest(state, chrome, auth): PageRequest<Responder>,
    Path(key): Path<String>,
    PageForm(f): PageForm<SeverityForm>,
) -> PageResult<Response> {
    let key = parse_key(&key)?;
    let sent = Sent {
        key,
        saved: "severity",
        part: "severity",
        values: vec![
            ("version", f.version.to_string()),
            ("severity", f.severity.clone()),
            ("reason", f.reason.clone()),
            ("at", f.at.clone()),
            ("call_url", f.call_url.clone()),
            ("chat_url", f.chat_url.clone()),
        ],
        seen: Some((
            f.version,
            format!("change the severity to {}", f.severity.trim()),
        )),
    };
    let parsed = (|| {
        Ok::<_, AppError>((
            Severity::parse("severity", &f.severity)?,
            parse_form_time("at", &f.at)?,
            crate::bridge::domain::Bridge::parse(Some(&f.call_url), Some(&f.chat_url))?,
        ))
    })();
    let (to, at, bridge) = match parsed {
        Ok(p) => p,
        Err(err) => return sent.refuse(&state, chrome, err).await,
    };
    if f.confirm != "yes" {
        let i = db::get(&state.pool, key).await?;
        if let Some(why) = super::domain::severity_confirmation(i.severity, to)
            && i.version == f.version
        {
            return Ok(ConfirmPage {
                chrome,
                key: key.to_string(),
                question: format!("Lower {key} from {} to {to}?", i.severity),
                why: why.to_owned(),
                action: format!("/incidents/{key}/severity"),
                yes: format!("Yes, make it {to}"),
                fields: sent.values,
            }
            .response());
        }
    }
    let change = Change::now(key, &auth.actor)
        .expecting(Some(f.version))
        .dated(at);
    let (bridge, change, reason) = (&bridge, &change, &f.reason);
    apply_form(&state, chrome, sent, |tx, _| {
        Box::pin(async move {
            // Set first, so the severity change's notifications carry it.
            if !bridge.is_empty() {
                actions::set_bridge(tx, change, bridge).await?;
            }
            actions::change_severity(tx, change, to, reason).await
        })
    })
    .await
}

#[derive(Deserialize)]
pub struct RoleForm {
    version: i32,
    role: String,
    #[serde(default)]
    person: String,
    #[serde(default)]
    at: String,
}

pub async fn set_role(
    PageRequest(state, chrome, auth): PageRequest<Responder>,
    Path(key): Path<String>,
    PageForm(f): PageForm<RoleForm>,
) -> PageResult<Response> {
    let key = parse_key(&key)?;
    let mut sent = Sent {
        key,
        saved: "role",
        part: "roles",
        values: vec![
            ("version", f.version.to_string()),
            ("role", f.role.clone()),
            ("person", f.person.clone()),
        ],
        seen: None,
    };
    let parsed = (|| Ok::<_, AppError>((Role::parse(&f.role)?, parse_form_time("at", &f.at)?)))();
    let (role, at) = match parsed {
        Ok(p) => p,
        Err(err) => return sent.refuse(&state, chrome, err).await,
    };
    let change = Change::now(key, &auth.actor)
        .expecting(Some(f.version))
        .dated(at);
    let attempted = match f.person.trim() {
        "" => format!("unassign the {}", role.label().to_lowercase()),
        who => format!("make {who} the {}", role.label().to_lowercase()),
    };
    let person = Some(f.person.as_str()).filter(|p| !p.trim().is_empty());
    sent.seen = Some((f.version, attempted));
    apply_form(&state, chrome, sent, |tx, _| {
        Box::pin(actions::set_role(tx, &change, role, person))
    })
    .await
}

#[derive(Deserialize)]
pub struct NoteForm {
    body: String,
    #[serde(default)]
    kind: Option<String>,
    #[serde(default)]
    at: String,
}

pub async fn add_note(
    PageRequest(state, chrome, auth): PageRequest<Responder>,
    Path(key): Path<String>,
    PageForm(f): PageForm<NoteForm>,
) -> PageResult<Response> {
    let key = parse_key(&key)?;
    let sent = Sent {
        key,
        saved: "note",
        part: "timeline-panel",
        values: vec![
            ("body", f.body.clone()),
            ("kind", f.kind.clone().unwrap_or_default()),
            ("at", f.at.clone()),
        ],
        seen: None,
    };
    let at = match parse_form_time("at", &f.at) {
        Ok(at) => at,
        Err(err) => return sent.refuse(&state, chrome, err).await,
    };
    let change = Change::now(key, &auth.actor).dated(at);
    let (change, kind, body) = (&change, f.kind.as_deref(), &f.body);
    apply_form(&state, chrome, sent, |tx, _| {
        Box::pin(actions::add_note(tx, change, kind, body))
    })
    .await
}

#[derive(Deserialize)]
pub struct UpdateForm {
    #[serde(default)]
    audience: String,
    #[serde(default)]
    body: String,
    #[serde(default)]
    at: String,
}

pub async fn add_update(
    PageRequest(state, chrome, auth): PageRequest<Responder>,
    Path(key): Path<String>,
    PageForm(f): PageForm<UpdateForm>,
) -> PageResult<Response> {
    let key = parse_key(&key)?;
    let sent = Sent {
        key,
        saved: "update",
        part: "updates",
        values: vec![
            ("audience", f.audience.clone()),
            ("body", f.body.clone()),
            ("at", f.at.clone()),
        ],
        seen: None,
    };
    let at = match parse_form_time("at", &f.at) {
        Ok(at) => at,
        Err(err) => return sent.refuse(&state, chrome, err).await,
    };
    let change = Change::now(key, &auth.actor).dated(at);
    let (change, audience, body) = (&change, &f.audience, &f.body);
    apply_form(&state, chrome, sent, |tx, _| {
        Box::pin(actions::add_stakeholder_update(tx, change, audience, body))
    })
    .await
}

#[derive(Template, WebTemplate)]
#[template(path = "incidents/edit.html")]
pub struct EditPage {
    chrome: Chrome,
    key: String,
    version: i32,
    form: IncidentForm,
    errors: Vec<FieldError>,
    services: Vec<String>,
}

pub async fn edit_form(
    PageRequest(state, chrome, _): PageRequest<Responder>,
    Path(key): Path<String>,
) -> PageResult<EditPage> {
    let i = db::get(&state.pool, parse_key(&key)?).await?;
    Ok(EditPage {
        chrome,
        key: i.key.to_string(),
        version: i.version,
        form: IncidentForm {
            title: i.title,
            severity: i.severity.to_string(),
            service: i.service.unwrap_or_default(),
            summary: i.summary,
            impact: i.impact,
            started_at: form_time(i.started_at),
            detected_at: form_time(i.detected_at),
            version: Some(i.version),
            ..Default::default()
        },
        errors: vec![],
        services: service_names(&state).await?,
    })
}

pub async fn edit(
    PageRequest(state, chrome, auth): PageRequest<Responder>,
    Path(key): Path<String>,
    PageForm(form): PageForm<IncidentForm>,
) -> PageResult<Response> {
    let key = parse_key(&key)?;
    let Some(version) = form.version else {
        return Err(AppError::invalid(
            "version",
            "the form is missing its version; reload the page",
        )
        .into());
    };
    // The form shows minutes only: an untouched field must not shift the start by its seconds.
    let current = db::get(&state.pool, key).await?;
    let started_at = match parse_form_time("started_at", &form.started_at) {
        Ok(_) if form.started_at.trim() == form_time(current.started_at) => None,
        Ok(t) => t,
        Err(err) => return edit_again(&state, chrome, key, version, form, err).await,
    };
    let patch = Patch {
        title: Some(form.title.clone()),
        summary: Some(form.summary.clone()),
        impact: Some(form.impact.clone()),
        service: Some(Some(form.service.clone()).filter(|s| !s.trim().is_empty())),
        started_at,
    };
    let mut tx = crate::transaction::begin(&state.pool).await?;
    let change = Change::now(key, &auth.actor).expecting(Some(version));
    match actions::edit(&mut tx, &change, patch).await {
        Ok(_) => {
            tx.commit().await?;
            Ok(saved(key, "details"))
        }
        Err(AppError::Stale { .. }) => {
            tx.rollback().await?;
            stale_response(&state, chrome, key, version, "edit the details".into()).await
        }
        Err(err) => {
            tx.rollback().await?;
            edit_again(&state, chrome, key, version, form, err).await
        }
    }
}

async fn edit_again(
    state: &AppState,
    chrome: Chrome,
    key: IncidentKey,
    version: i32,
    form: IncidentForm,
    err: AppError,
) -> PageResult<Response> {
    let errors = field_errors(err)?;
    let page = EditPage {
        chrome,
        key: key.to_string(),
        version,
        form,
        errors,
        services: service_names(state).await?,
    };
    Ok((StatusCode::UNPROCESSABLE_ENTITY, page).into_response())
}

#[derive(Deserialize)]
pub struct VerdictForm {
    verdict: String,
    #[serde(default)]
    at: String,
}

/// One click on a suspect change: suspected, ruled out, or the trigger.
pub async fn judge_suspect(
    ApiRequest(state, auth): ApiRequest<Responder>,
    Path((key, change_id)): Path<(String, String)>,
    PageForm(f): PageForm<VerdictForm>,
) -> PageResult<Response> {
    let key = parse_key(&key)?;
    let change_id = crate::http::extract::parse_id(&change_id, "change")?;
    let verdict = crate::changes::domain::Verdict::parse("verdict", &f.verdict)?;
    let i = db::get(&state.pool, key).await?;
    let mut tx = crate::transaction::begin(&state.pool).await?;
    crate::changes::actions::judge(
        &mut tx,
        &super::views::suspecting(&i),
        &crate::changes::actions::Judgement {
            change_id,
            verdict,
            at: parse_form_time("at", &f.at)?,
            actor: &auth.actor,
        },
    )
    .await?;
    tx.commit().await?;
    Ok(saved_at(key, "verdict", &format!("suspect-{change_id}")))
}

#[derive(Deserialize)]
pub struct TickForm {
    runbook_id: String,
    position: String,
    /// `true` to check, `false` to uncheck
    checked: String,
}

/// One click on a runbook step: checked, or unchecked.
pub async fn tick_checklist(
    ApiRequest(state, auth): ApiRequest<Responder>,
    Path(key): Path<String>,
    PageForm(f): PageForm<TickForm>,
) -> PageResult<Response> {
    let key = parse_key(&key)?;
    let runbook_id = crate::http::extract::parse_id(&f.runbook_id, "runbook")?;
    let position = f
        .position
        .trim()
        .parse()
        .map_err(|_| AppError::invalid("position", "a step's position, a number"))?;
    let i = db::get(&state.pool, key).await?;
    let mut tx = crate::transaction::begin(&state.pool).await?;
    crate::runbooks::actions::tick(
        &mut tx,
        &super::views::checking(&i),
        &crate::runbooks::actions::Tick {
            runbook_id,
            position,
            checked: f.checked != "false",
            actor: &auth.actor,
        },
    )
    .await?;
    tx.commit().await?;
    Ok(saved_at(key, "check", &format!("runbook-{runbook_id}")))
}

#[derive(Deserialize)]
pub struct ClaimForm {
    #[serde(default)]
    subject: String,
    /// `yes` once the person was told who else is on the lead
    #[serde(default)]
    confirm: String,
}

/// `POST /incidents/{key}/claims`: someone already on the same lead is named on a page that
/// asks before the claim is saved.
pub async fn claim(
    PageRequest(state, chrome, auth): PageRequest<Responder>,
    Path(key): Path<String>,
    PageForm(f): PageForm<ClaimForm>,
) -> PageResult<Response> {
    let key = parse_key(&key)?;
    let change = Change::now(key, &auth.actor);
    let minutes = state.config.live.claim_minutes;
    let mut tx = crate::transaction::begin(&state.pool).await?;
    if f.confirm != "yes"
        && let Some(person_id) = auth.actor.person_id
    {
        let i = db::get(&mut *tx, key).await?;
        let others = actions::others_on_lead(&mut tx, i.id, person_id, &f.subject).await?;
        if !others.is_empty() {
            return Ok(ConfirmPage {
                chrome,
                key: key.to_string(),
                question: format!(
                    "Someone is already looking into \u{201c}{}\u{201d}",
                    f.subject.trim()
                ),
                why: format!("{}.", actions::already_on(&others)),
                action: format!("/incidents/{key}/claims"),
                yes: "Claim it as well".into(),
                fields: vec![("subject", f.subject.clone())],
            }
            .response());
        }
    }
    let sent = Sent {
        key,
        saved: "claim",
        part: "claims",
        values: vec![("subject", f.subject.clone())],
        seen: None,
    };
    match actions::claim(&mut tx, &change, &f.subject, true, minutes).await {
        Ok(_) => {
            tx.commit().await?;
            Ok(saved(key, sent.saved))
        }
        Err(err) => {
            tx.rollback().await?;
            sent.refuse(&state, chrome, err).await
        }
    }
}

#[derive(Deserialize)]
pub struct ClaimActionForm {
    /// `renew` or `release`
    #[serde(default)]
    action: String,
}

/// `POST /incidents/{key}/claims/{id}`: renew or release a claim.
pub async fn claim_action(
    ApiRequest(state, auth): ApiRequest<Responder>,
    Path((key, id)): Path<(String, i64)>,
    PageForm(f): PageForm<ClaimActionForm>,
) -> PageResult<Response> {
    let key = parse_key(&key)?;
    let change = Change::now(key, &auth.actor);
    let mut tx = crate::transaction::begin(&state.pool).await?;
    let done = match f.action.as_str() {
        "renew" => {
            let minutes = state.config.live.claim_minutes;
            actions::renew_claim(&mut tx, &change, id, minutes).await?;
            "renew"
        }
        "release" => {
            actions::release_claim(&mut tx, &change, id).await?;
            "release"
        }
        other => {
            return Err(AppError::invalid(
                "action",
                format!("{other:?} is not something to do to a claim; use renew or release"),
            )
            .into());
        }
    };
    tx.commit().await?;
    Ok(saved(key, done))
}

#[derive(Deserialize)]
pub struct BridgeForm {
    #[serde(default)]
    call_url: String,
    #[serde(default)]
    chat_url: String,
}

/// `POST /incidents/{key}/bridge`
pub async fn set_bridge(
    PageRequest(state, chrome, auth): PageRequest<Responder>,
    Path(key): Path<String>,
    PageForm(f): PageForm<BridgeForm>,
) -> PageResult<Response> {
    let key = parse_key(&key)?;
    let sent = Sent {
        key,
        saved: "bridge",
        part: "bridge-form",
        values: vec![
            ("call_url", f.call_url.clone()),
            ("chat_url", f.chat_url.clone()),
        ],
        seen: None,
    };
    let bridge = match crate::bridge::domain::Bridge::parse(Some(&f.call_url), Some(&f.chat_url)) {
        Ok(b) => b,
        Err(err) => return sent.refuse(&state, chrome, err.into()).await,
    };
    let change = Change::now(key, &auth.actor);
    let (change, bridge) = (&change, &bridge);
    apply_form(&state, chrome, sent, |tx, _| {
        Box::pin(actions::set_bridge(tx, change, bridge))
    })
    .await
}

#[derive(Deserialize)]
pub struct AccessForm {
    /// "true" keeps it to those named; absent opens it to everyone
    #[serde(default)]
    restricted: Option<String>,
    /// Team slugs or names, separated by commas
    #[serde(default)]
    teams: String,
    /// Handles, separated by commas
    #[serde(default)]
    people: String,
    version: i32,
}

/// `POST /incidents/{key}/access`: keep the incident to named teams and people, or open it.
pub async fn set_access(
    PageRequest(state, chrome, auth): PageRequest<Responder>,
    Path(key): Path<String>,
    PageForm(f): PageForm<AccessForm>,
) -> PageResult<Response> {
    let key = parse_key(&key)?;
    let restricted = f.restricted.as_deref().is_some_and(|v| !v.is_empty());
    let sent = Sent {
        key,
        saved: "access",
        part: "access",
        values: vec![
            (
                "restricted",
                if restricted { "true" } else { "" }.to_owned(),
            ),
            ("teams", f.teams.clone()),
            ("people", f.people.clone()),
            ("version", f.version.to_string()),
        ],
        seen: Some((f.version, "change who may see it".to_owned())),
    };
    // Opening it to everyone forgets whom it was kept to.
    let draft = actions::AccessDraft::of_form(restricted, &f.teams, &f.people);
    let change = Change::now(key, &auth.actor).expecting(Some(f.version));
    let (change, draft) = (&change, &draft);
    apply_form(&state, chrome, sent, |tx, _| {
        Box::pin(actions::set_access(tx, change, draft))
    })
    .await
}
