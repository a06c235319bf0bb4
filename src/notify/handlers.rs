//! `/api/v1/notification-channels` and `/api/v1/subscriptions` for admins;
//! `/api/v1/people/{handle}/contact-methods` and `…/notification-rules` for the person and admins.

use axum::Json;
use axum::extract::Path;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};

use super::db::{self, Channel, ContactMethod};
use super::domain::SubscriptionDraft;
use crate::auth::domain::UserRole;
use crate::error::{AppError, AppResult};
use crate::http::access::{Auth, MinRole, Responder, Viewer};
use crate::http::extract::ApiJson;
use crate::http::extract::parse_id;
use crate::http::request::ApiRequest;
use crate::http::write;
use crate::state::AppState;
use crate::teams;

/// What the team rule calls a channel in a refusal.
const WHAT: &str = "notification channel";

#[derive(Serialize, utoipa::ToSchema)]
pub struct ChannelList {
    pub items: Vec<Channel>,
}

/// The channels the person may manage: every one for an admin, their teams' for a team's lead
/// (a channel's address can be a credential, so no one sees the others').
async fn managed_channels<R: MinRole>(state: &AppState, auth: &Auth<R>) -> AppResult<Vec<Channel>> {
    let judge = teams::actions::Judge::of(state, auth).await?;
    let mut channels = db::channels(&state.pool).await?;
    channels.retain(|c| judge.may(&[c.team_id], UserRole::Admin));
    Ok(channels)
}

/// The channel `id`, if the person may manage it: 404 when there is none, 403 (audited) when
/// it is another team's or the installation's.
async fn managed_channel<R: MinRole>(
    state: &AppState,
    auth: &Auth<R>,
    id: i64,
) -> AppResult<Channel> {
    let c = db::channels(&state.pool)
        .await?
        .into_iter()
        .find(|c| c.id == id)
        .ok_or_else(|| AppError::NotFound(format!("There is no channel {id}.")))?;
    teams::actions::may_configure(state, auth, WHAT, &[c.team_id], UserRole::Admin).await?;
    Ok(c)
}

/// Where breaches are announced: every channel for an admin, a team's lead their teams'.
#[utoipa::path(get, path = "/api/v1/notification-channels", operation_id = "listNotificationChannels", tag = "sla",
    responses((status = 200, description = "OK", body = ChannelList)))]
pub async fn list(ApiRequest(state, auth): ApiRequest<Responder>) -> AppResult<Json<ChannelList>> {
    Ok(Json(ChannelList {
        items: managed_channels(&state, &auth).await?,
    }))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewChannel {
    pub name: String,
    /// webhook or slack
    pub kind: String,
    /// A URL; for email, an address (or `mailto:` address)
    pub url: String,
    /// Events the channel is told of, for every service and severity. Left out, the channel
    /// has no subscription and hears nothing until one is added at /api/v1/subscriptions
    /// (where narrower ones are made too)
    #[serde(default)]
    pub events: Option<Vec<String>>,
    /// The team that owns it (its leads manage it), by slug or name; empty: the installation's
    /// (admins)
    #[serde(default)]
    pub team: String,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct CreatedChannel {
    #[serde(flatten)]
    pub channel: Channel,
    /// A webhook's Standard Webhooks signing secret, shown this once
    pub secret: Option<String>,
}

/// Add a channel; it hears nothing until subscribed (`events`, or /api/v1/subscriptions). A
/// webhook gets a signing secret, returned once.
#[utoipa::path(post, path = "/api/v1/notification-channels", operation_id = "createNotificationChannel", tag = "sla", request_body = NewChannel,
    responses((status = 201, description = "Created", body = CreatedChannel),
              (status = 409, description = "The name is taken", body = crate::error::ErrorBody),
              crate::http::openapi::Invalid, crate::http::openapi::NotYours))]
pub async fn create(
    ApiRequest(state, auth): ApiRequest<Responder>,
    body: ApiJson<NewChannel>,
) -> AppResult<Response> {
    let b = body.value;
    let team_id = teams::actions::named(&state.pool, &b.team).await?;
    teams::actions::may_configure(&state, &auth, WHAT, &[team_id], UserRole::Admin).await?;
    let mut tx = crate::transaction::begin(&state.pool).await?;
    let asked = super::actions::ChannelRequest {
        name: &b.name,
        kind: &b.kind,
        url: &b.url,
        events: b.events,
        team_id,
    };
    let (channel, secret) =
        super::actions::create_channel(&mut tx, &auth.actor, asked, &state.config.webhook_allow)
            .await?;
    tx.commit().await?;
    Ok((
        StatusCode::CREATED,
        Json(CreatedChannel { channel, secret }),
    )
        .into_response())
}

/// Remove a channel (its queued notifications go with it).
#[utoipa::path(delete, path = "/api/v1/notification-channels/{id}", operation_id = "deleteNotificationChannel", tag = "sla",
    params(("id" = i64, Path, description = "Channel id")),
    responses(crate::http::openapi::Deleting, crate::http::openapi::NotYours))]
pub async fn delete(
    ApiRequest(state, auth): ApiRequest<Responder>,
    Path(id): Path<String>,
) -> AppResult<StatusCode> {
    let id = parse_id(&id, "channel")?;
    managed_channel(&state, &auth, id).await?;
    write::removed(&state.pool, |tx, _| {
        Box::pin(super::actions::delete_channel(tx, &auth.actor, id))
    })
    .await
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct SubscriptionList {
    pub items: Vec<db::Subscription>,
}

/// What each channel the person manages is told.
#[utoipa::path(get, path = "/api/v1/subscriptions", operation_id = "listSubscriptions", tag = "paging",
    responses((status = 200, description = "OK", body = SubscriptionList)))]
pub async fn subscriptions(
    ApiRequest(state, auth): ApiRequest<Responder>,
) -> AppResult<Json<SubscriptionList>> {
    let mine: Vec<i64> = managed_channels(&state, &auth)
        .await?
        .iter()
        .map(|c| c.id)
        .collect();
    let mut items = db::subscriptions(&state.pool).await?;
    items.retain(|s| mine.contains(&s.channel_id));
    Ok(Json(SubscriptionList { items }))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewSubscription {
    pub channel_id: i64,
    #[serde(flatten)]
    pub subscription: SubscriptionDraft,
}

/// Subscribe a channel to events, narrowed by service, severity and update audience.
#[utoipa::path(post, path = "/api/v1/subscriptions", operation_id = "createSubscription", tag = "paging", request_body = NewSubscription,
    responses((status = 201, description = "Created", body = db::Subscription),
              crate::http::openapi::Invalid, crate::http::openapi::NotYours))]
pub async fn subscribe(
    ApiRequest(state, auth): ApiRequest<Responder>,
    body: ApiJson<NewSubscription>,
) -> AppResult<Response> {
    let b = body.value;
    if let Some(c) = db::channels(&state.pool)
        .await?
        .into_iter()
        .find(|c| c.id == b.channel_id)
    {
        teams::actions::may_configure(&state, &auth, WHAT, &[c.team_id], UserRole::Admin).await?;
    } else if !auth.user.role.allows(UserRole::Admin) {
        // An unknown channel is refused naming the field by the action, for those who may see.
        return Err(AppError::invalid(
            "channel_id",
            format!("there is no channel {} of yours", b.channel_id),
        ));
    }
    let id = crate::transaction::write(&state.pool, |tx, _| {
        Box::pin(super::actions::subscribe(
            tx,
            &auth.actor,
            b.channel_id,
            &b.subscription,
        ))
    })
    .await?;
    let created = db::subscriptions(&state.pool)
        .await?
        .into_iter()
        .find(|s| s.id == id)
        .ok_or_else(|| AppError::Internal(format!("subscription {id} vanished")))?;
    Ok((StatusCode::CREATED, Json(created)).into_response())
}

/// Remove a subscription.
#[utoipa::path(delete, path = "/api/v1/subscriptions/{id}", operation_id = "deleteSubscription", tag = "paging",
    params(("id" = i64, Path, description = "Subscription id")),
    responses(crate::http::openapi::Deleting, crate::http::openapi::NotYours))]
pub async fn unsubscribe(
    ApiRequest(state, auth): ApiRequest<Responder>,
    Path(id): Path<String>,
) -> AppResult<StatusCode> {
    let id = parse_id(&id, "subscription")?;
    let Some(s) = db::subscriptions(&state.pool)
        .await?
        .into_iter()
        .find(|s| s.id == id)
    else {
        return Err(AppError::NotFound(format!(
            "There is no subscription {id}."
        )));
    };
    managed_channel(&state, &auth, s.channel_id).await?;
    write::removed(&state.pool, |tx, _| {
        Box::pin(super::actions::unsubscribe(tx, &auth.actor, id))
    })
    .await
}

/// The person `handle` names, if the caller is that person or an admin.
pub async fn reachable_person(
    state: &AppState,
    user: &crate::auth::domain::CurrentUser,
    handle: &str,
) -> AppResult<i64> {
    let person = crate::people::db::find(&state.pool, handle)
        .await?
        .filter(|p| p.handle == handle.trim())
        .ok_or_else(|| AppError::NotFound(format!("There is no person {handle:?}.")))?;
    if person.id != user.id && user.role != crate::auth::domain::UserRole::Admin {
        return Err(AppError::Forbidden(
            "Only the person and admins see and change how they are reached.".into(),
        ));
    }
    Ok(person.id)
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct Reachability {
    pub contact_methods: Vec<ContactMethod>,
    pub rules: Vec<db::Rule>,
}

/// How a person is reached: their contact methods (failing ones first) and rules.
#[utoipa::path(get, path = "/api/v1/people/{handle}/contact-methods", operation_id = "listContactMethods", tag = "paging",
    params(("handle" = String, Path, description = "The person's handle")),
    responses((status = 200, description = "OK", body = Reachability), (status = 403, description = "Someone else's", body = crate::error::ErrorBody)))]
pub async fn methods(
    ApiRequest(state, auth): ApiRequest<Viewer>,
    Path(handle): Path<String>,
) -> AppResult<Json<Reachability>> {
    let person = reachable_person(&state, &auth.user, &handle).await?;
    Ok(Json(Reachability {
        contact_methods: db::methods(&state.pool, Some(person)).await?,
        rules: db::rules(&state.pool, person).await?,
    }))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewMethod {
    /// email, slack or webhook
    pub kind: String,
    pub label: String,
    /// An email address or a webhook URL
    pub address: String,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct CreatedMethod {
    #[serde(flatten)]
    pub method: ContactMethod,
    /// A webhook's signing secret, shown this once
    pub secret: Option<String>,
}

/// Add a contact method. With no rules, a page goes to every method at once.
#[utoipa::path(post, path = "/api/v1/people/{handle}/contact-methods", operation_id = "createContactMethod", tag = "paging",
    params(("handle" = String, Path, description = "The person's handle")), request_body = NewMethod,
    responses((status = 201, description = "Created", body = CreatedMethod),
              crate::http::openapi::Invalid))]
pub async fn add_method(
    ApiRequest(state, auth): ApiRequest<Viewer>,
    Path(handle): Path<String>,
    body: Result<ApiJson<NewMethod>, AppError>,
) -> AppResult<Response> {
    // Whose it is first: someone else's person is refused before their body is read.
    let person = reachable_person(&state, &auth.user, &handle).await?;
    let b = body?.value;
    let mut tx = crate::transaction::begin(&state.pool).await?;
    let draft = super::actions::MethodDraft {
        kind: &b.kind,
        label: &b.label,
        address: &b.address,
    };
    let (method, secret) = super::actions::add_method(
        &mut tx,
        &auth.actor,
        person,
        &draft,
        &state.config.webhook_allow,
    )
    .await?;
    tx.commit().await?;
    Ok((StatusCode::CREATED, Json(CreatedMethod { method, secret })).into_response())
}

/// Remove a contact method (its rules go with it).
#[utoipa::path(delete, path = "/api/v1/people/{handle}/contact-methods/{id}", operation_id = "deleteContactMethod", tag = "paging",
    params(("handle" = String, Path, description = "The person's handle"), ("id" = i64, Path, description = "Contact method id")),
    responses(crate::http::openapi::Deleting))]
pub async fn remove_method(
    ApiRequest(state, auth): ApiRequest<Viewer>,
    Path((handle, id)): Path<(String, String)>,
) -> AppResult<StatusCode> {
    let person = reachable_person(&state, &auth.user, &handle).await?;
    let id = parse_id(&id, "contact method")?;
    write::removed(&state.pool, |tx, _| {
        Box::pin(super::actions::remove_method(tx, &auth.actor, person, id))
    })
    .await
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewRule {
    pub contact_method_id: i64,
    /// Minutes after being paged (0 to 1440)
    pub after_minutes: i64,
}

/// Add a notification rule: use a method so many minutes after being paged.
#[utoipa::path(post, path = "/api/v1/people/{handle}/notification-rules", operation_id = "createNotificationRule", tag = "paging",
    params(("handle" = String, Path, description = "The person's handle")), request_body = NewRule,
    responses((status = 201, description = "Created", body = Reachability),
              crate::http::openapi::Invalid))]
pub async fn add_rule(
    ApiRequest(state, auth): ApiRequest<Viewer>,
    Path(handle): Path<String>,
    body: Result<ApiJson<NewRule>, AppError>,
) -> AppResult<Response> {
    // Whose it is first: someone else's person is refused before their body is read.
    let person = reachable_person(&state, &auth.user, &handle).await?;
    let b = body?.value;
    let mut tx = crate::transaction::begin(&state.pool).await?;
    super::actions::add_rule(
        &mut tx,
        &auth.actor,
        person,
        b.contact_method_id,
        b.after_minutes,
    )
    .await?;
    tx.commit().await?;
    let now = Reachability {
        contact_methods: db::methods(&state.pool, Some(person)).await?,
        rules: db::rules(&state.pool, person).await?,
    };
    Ok((StatusCode::CREATED, Json(now)).into_response())
}

/// Remove a notification rule.
#[utoipa::path(delete, path = "/api/v1/people/{handle}/notification-rules/{id}", operation_id = "deleteNotificationRule", tag = "paging",
    params(("handle" = String, Path, description = "The person's handle"), ("id" = i64, Path, description = "Rule id")),
    responses(crate::http::openapi::Deleting))]
pub async fn remove_rule(
    ApiRequest(state, auth): ApiRequest<Viewer>,
    Path((handle, id)): Path<(String, String)>,
) -> AppResult<StatusCode> {
    let person = reachable_person(&state, &auth.user, &handle).await?;
    let id = parse_id(&id, "rule")?;
    write::removed(&state.pool, |tx, _| {
        Box::pin(super::actions::remove_rule(tx, &auth.actor, person, id))
    })
    .await
}
