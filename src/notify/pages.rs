//! `/admin/channels`: where notifications go — list, add (a webhook's signing secret shown
//! once), subscribe, remove (after a page that asks). Admins only.

use askama::Template;
use askama_web::WebTemplate;
use axum::extract::Path;
use axum::response::{IntoResponse, Redirect, Response};
use serde::Deserialize;

use super::actions;
use super::db::{self, Channel};
use crate::error::{AppError, FieldError};
use crate::http::access::{Admin, Viewer};
use crate::http::extract::{PageForm, parse_id};
use crate::http::page::{Chrome, PageResult, form_again, submitted};
use crate::http::request::{ApiRequest, PageRequest};
use crate::state::AppState;

#[derive(Deserialize, Default)]
pub struct ChannelForm {
    #[serde(default)]
    name: String,
    #[serde(default)]
    kind: String,
    #[serde(default)]
    url: String,
}

#[derive(Template, WebTemplate)]
#[template(path = "admin/channels.html")]
pub struct ChannelsPage {
    chrome: Chrome,
    channels: Vec<Channel>,
    subscriptions: Vec<db::Subscription>,
    events: [super::domain::Event; 8],
    /// The channel just added and its signing secret, shown this once
    issued: Option<(Channel, Option<String>)>,
    form: ChannelForm,
    errors: Vec<FieldError>,
}

impl ChannelsPage {
    /// How many subscriptions channel `id` has (none: it hears nothing).
    fn subscription_count(&self, id: i64) -> usize {
        self.subscriptions
            .iter()
            .filter(|s| s.channel_id == id)
            .count()
    }
}

async fn page(
    state: &AppState,
    chrome: Chrome,
    issued: Option<(Channel, Option<String>)>,
    form: ChannelForm,
    errors: Vec<FieldError>,
) -> PageResult<ChannelsPage> {
    Ok(ChannelsPage {
        chrome,
        channels: db::channels(&state.pool).await?,
        subscriptions: db::subscriptions(&state.pool).await?,
        events: super::domain::Event::ALL,
        issued,
        form,
        errors,
    })
}

pub async fn show(PageRequest(state, chrome, _): PageRequest<Admin>) -> PageResult<ChannelsPage> {
    page(&state, chrome, None, ChannelForm::default(), vec![]).await
}

pub async fn create(
    PageRequest(state, chrome, auth): PageRequest<Admin>,
    PageForm(form): PageForm<ChannelForm>,
) -> PageResult<Response> {
    let mut tx = crate::transaction::begin(&state.pool).await?;
    let asked = actions::ChannelRequest {
        name: &form.name,
        kind: &form.kind,
        url: &form.url,
        events: None,
        team_id: None,
    };
    match actions::create_channel(&mut tx, &auth.actor, asked, &state.config.webhook_allow).await {
        Ok(issued) => {
            tx.commit().await?;
            Ok(
                page(&state, chrome, Some(issued), ChannelForm::default(), vec![])
                    .await?
                    .into_response(),
            )
        }
        Err(e) => {
            form_again(e, async |errors| {
                page(&state, chrome, None, form, errors).await
            })
            .await
        }
    }
}

/// The question a removal asks first: the channel, and the subscriptions that go with it.
#[derive(Template, WebTemplate)]
#[template(path = "admin/channel_remove.html")]
pub struct RemovePage {
    chrome: Chrome,
    channel: Channel,
    subscriptions: Vec<db::Subscription>,
}

/// `GET /admin/channels/{id}/delete`: asks before removing (works without JavaScript); its
/// button posts to the same address.
pub async fn confirm_delete(
    PageRequest(state, chrome, _): PageRequest<Admin>,
    Path(id): Path<String>,
) -> PageResult<RemovePage> {
    let id = parse_id(&id, "channel")?;
    let mut conn = state.pool.acquire().await?;
    let channel = actions::channel(&mut conn, id)
        .await?
        .ok_or_else(|| AppError::NotFound(format!("There is no channel {id}.")))?;
    let subscriptions = actions::subscriptions_of(&mut conn, id).await?;
    Ok(RemovePage {
        chrome,
        channel,
        subscriptions,
    })
}

/// `POST /admin/channels/{id}/delete`: the confirmation page's button.
pub async fn delete(
    ApiRequest(state, auth): ApiRequest<Admin>,
    Path(id): Path<String>,
    PageForm(_): PageForm<serde::de::IgnoredAny>,
) -> PageResult<Response> {
    let id = parse_id(&id, "channel")?;
    crate::transaction::write(&state.pool, |tx, _| {
        Box::pin(actions::delete_channel(tx, &auth.actor, id))
    })
    .await?;
    Ok(Redirect::to("/admin/channels").into_response())
}

/// `/account/paging`: how the signed-in person is reached — contact methods (a failing one
/// says why), rules (which method after how many minutes), and forms to change both.
#[derive(Template, WebTemplate)]
#[template(path = "auth/paging.html")]
pub struct PagingPage {
    chrome: Chrome,
    methods: Vec<db::ContactMethod>,
    rules: Vec<db::Rule>,
    /// A webhook method just added and its signing secret, shown this once
    issued: Option<(String, String)>,
    errors: Vec<FieldError>,
}

async fn paging_page(
    state: &AppState,
    chrome: Chrome,
    person: i64,
    issued: Option<(String, String)>,
    errors: Vec<FieldError>,
) -> PageResult<PagingPage> {
    Ok(PagingPage {
        chrome,
        methods: db::methods(&state.pool, Some(person)).await?,
        rules: db::rules(&state.pool, person).await?,
        issued,
        errors,
    })
}

pub async fn my_paging(
    PageRequest(state, chrome, auth): PageRequest<Viewer>,
) -> PageResult<PagingPage> {
    paging_page(&state, chrome, auth.user.id, None, vec![]).await
}

#[derive(Deserialize, Default)]
pub struct ReachForm {
    /// add_method, remove_method, add_rule, remove_rule
    #[serde(default)]
    action: String,
    #[serde(default)]
    kind: String,
    #[serde(default)]
    label: String,
    #[serde(default)]
    address: String,
    #[serde(default)]
    id: String,
    #[serde(default)]
    after_minutes: String,
}

pub async fn change_paging(
    PageRequest(state, chrome, auth): PageRequest<Viewer>,
    PageForm(form): PageForm<ReachForm>,
) -> PageResult<Response> {
    let me = auth.user.id;
    let mut tx = crate::transaction::begin(&state.pool).await?;
    let done = match form.action.as_str() {
        "add_method" => actions::add_method(
            &mut tx,
            &auth.actor,
            me,
            &actions::MethodDraft {
                kind: &form.kind,
                label: &form.label,
                address: &form.address,
            },
            &state.config.webhook_allow,
        )
        .await
        .map(|(m, secret)| secret.map(|s| (m.label, s))),
        "remove_method" => match parse_id(&form.id, "contact method") {
            Ok(id) => actions::remove_method(&mut tx, &auth.actor, me, id)
                .await
                .map(|_| None),
            Err(e) => Err(e),
        },
        "add_rule" => {
            let minutes = form.after_minutes.trim().parse::<i64>().map_err(|_| {
                AppError::invalid("after_minutes", "a whole number of minutes, 0 to 1440")
            });
            match (parse_id(&form.id, "contact method"), minutes) {
                (Ok(id), Ok(m)) => actions::add_rule(&mut tx, &auth.actor, me, id, m)
                    .await
                    .map(|_| None),
                (Err(e), _) | (_, Err(e)) => Err(e),
            }
        }
        "remove_rule" => match parse_id(&form.id, "rule") {
            Ok(id) => actions::remove_rule(&mut tx, &auth.actor, me, id)
                .await
                .map(|_| None),
            Err(e) => Err(e),
        },
        _ => Err(AppError::invalid("action", "not a change this page makes")),
    };
    match done {
        Ok(issued) => {
            tx.commit().await?;
            if issued.is_some() {
                return Ok(paging_page(&state, chrome, me, issued, vec![])
                    .await?
                    .into_response());
            }
            Ok(Redirect::to("/account/paging").into_response())
        }
        Err(e) => {
            form_again(e, async |errors| {
                paging_page(&state, chrome, me, None, errors).await
            })
            .await
        }
    }
}

/// Adds a subscription from the admin page's form: repeated `events`, `severities` and
/// `audiences` boxes, services as a comma-separated list.
pub async fn subscribe(
    PageRequest(state, chrome, auth): PageRequest<Admin>,
    PageForm(pairs): PageForm<Vec<(String, String)>>,
) -> PageResult<Response> {
    let all = |name: &str| -> Vec<String> {
        pairs
            .iter()
            .filter(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
            .collect()
    };
    let draft = super::domain::SubscriptionDraft {
        events: all("events"),
        services: all("services")
            .iter()
            .flat_map(|s| s.split(','))
            .map(|s| s.trim().to_owned())
            .filter(|s| !s.is_empty())
            .collect(),
        severities: all("severities"),
        audiences: all("audiences"),
    };
    let channel = parse_id(
        all("channel_id").first().map_or("", String::as_str),
        "channel",
    )?;
    let tried = crate::transaction::write(&state.pool, |tx, _| {
        Box::pin(actions::subscribe(tx, &auth.actor, channel, &draft))
    });
    submitted(
        tried.await,
        |_| "/admin/channels#subscriptions".into(),
        async |errors| page(&state, chrome, None, ChannelForm::default(), errors).await,
    )
    .await
}

pub async fn unsubscribe(
    ApiRequest(state, auth): ApiRequest<Admin>,
    Path(id): Path<String>,
) -> PageResult<Response> {
    let id = parse_id(&id, "subscription")?;
    crate::transaction::write(&state.pool, |tx, _| {
        Box::pin(actions::unsubscribe(tx, &auth.actor, id))
    })
    .await?;
    Ok(Redirect::to("/admin/channels#subscriptions").into_response())
}
