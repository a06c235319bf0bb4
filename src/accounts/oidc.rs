//! Optional single sign-on: the OpenID Connect authorization code flow with PKCE, `state` and
//! `nonce` (the `openidconnect` crate), against the provider in `QUELL_OIDC_ISSUER`. The
//! provider's claims decide the Quell role through `QUELL_OIDC_ROLE_MAP` at every sign-in.
//! Everything the flow remembers between the two legs lives in the session (so any replica can
//! finish it); the provider's metadata is fetched when needed.

use axum::extract::{Query, State};
use axum::response::{IntoResponse, Redirect, Response};
use base64::Engine;
use openidconnect::core::{CoreAuthenticationFlow, CoreClient, CoreProviderMetadata};
use openidconnect::{
    AuthorizationCode, ClientId, ClientSecret, CsrfToken, IssuerUrl, Nonce, PkceCodeChallenge,
    PkceCodeVerifier, RedirectUrl, Scope, TokenResponse,
};
use serde::{Deserialize, Serialize};
use tower_sessions::Session;

use super::bootstrap::{Account, ensure_account};
use crate::audit::{self, Actor};
use crate::auth::domain::{RoleMap, UserRole, claim_values};
use crate::auth::{db, session};
use crate::error::{AppError, AppResult};
use crate::http::access::RequestActor;
use crate::http::page::{PageError, PageResult};
use crate::state::{AppState, OidcSettings};

const FLOW: &str = "oidc_flow";

/// Refuses settings that cannot work, at start rather than at the first sign-in.
pub fn check(s: &OidcSettings) -> AppResult<()> {
    IssuerUrl::new(s.issuer.clone())
        .map_err(|e| AppError::invalid("QUELL_OIDC_ISSUER", e.to_string()))?;
    if s.client_id.is_empty() {
        return Err(AppError::invalid(
            "QUELL_OIDC_CLIENT_ID",
            "required with QUELL_OIDC_ISSUER",
        ));
    }
    RoleMap::parse(&s.role_map)?;
    crate::teams::domain::TeamMap::parse(&s.team_map)?;
    if let Some(r) = &s.default_role {
        UserRole::parse("QUELL_OIDC_DEFAULT_ROLE", r)?;
    }
    Ok(())
}

/// What the first leg leaves for the second, in the session.
#[derive(Serialize, Deserialize)]
struct Flow {
    state: String,
    nonce: String,
    verifier: String,
    next: String,
}

fn http_client() -> AppResult<openidconnect::reqwest::Client> {
    openidconnect::reqwest::ClientBuilder::new()
        // Following redirects would let a provider steer the server's requests (SSRF).
        .redirect(openidconnect::reqwest::redirect::Policy::none())
        .timeout(std::time::Duration::from_secs(10))
        .build()
        .map_err(|e| AppError::Internal(format!("http client: {e}")))
}

fn sso_failed(what: impl std::fmt::Display) -> AppError {
    tracing::warn!(error = %what, "single sign-on failed");
    AppError::Forbidden(format!(
        "Single sign-on failed: {what}. Try again, or sign in with a password."
    ))
}

fn settings(state: &AppState) -> AppResult<&OidcSettings> {
    state
        .config
        .oidc
        .as_ref()
        .ok_or_else(|| AppError::NotFound("Single sign-on is not configured.".into()))
}

async fn metadata(
    s: &OidcSettings,
    http: &openidconnect::reqwest::Client,
) -> AppResult<CoreProviderMetadata> {
    let issuer = IssuerUrl::new(s.issuer.clone()).map_err(sso_failed)?;
    CoreProviderMetadata::discover_async(issuer, http)
        .await
        .map_err(|e| sso_failed(format!("the provider's discovery document: {e}")))
}

fn redirect_url(state: &AppState) -> AppResult<RedirectUrl> {
    RedirectUrl::new(format!(
        "{}/auth/oidc/callback",
        state.config.base_url.trim_end_matches('/')
    ))
    .map_err(|e| AppError::Internal(format!("QUELL_BASE_URL: {e}")))
}

#[derive(Deserialize, Default)]
pub struct StartQuery {
    next: Option<String>,
}

/// First leg: remember state, nonce and the PKCE verifier, send the browser to the provider.
pub async fn start(
    State(state): State<AppState>,
    session: Session,
    Query(q): Query<StartQuery>,
) -> PageResult<Response> {
    let s = settings(&state)?;
    let http = http_client()?;
    let client = CoreClient::from_provider_metadata(
        metadata(s, &http).await?,
        ClientId::new(s.client_id.clone()),
        s.client_secret.clone().map(ClientSecret::new),
    )
    .set_redirect_uri(redirect_url(&state)?);
    let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
    let mut request = client
        .authorize_url(
            CoreAuthenticationFlow::AuthorizationCode,
            CsrfToken::new_random,
            Nonce::new_random,
        )
        .set_pkce_challenge(challenge);
    for scope in s.scopes.iter().filter(|s| *s != "openid") {
        request = request.add_scope(Scope::new(scope.clone()));
    }
    let (url, csrf, nonce) = request.url();
    let flow = Flow {
        state: csrf.secret().clone(),
        nonce: nonce.secret().clone(),
        verifier: verifier.secret().clone(),
        next: crate::auth::domain::safe_next(q.next.as_deref()),
    };
    session
        .insert(FLOW, flow)
        .await
        .map_err(|e| AppError::Internal(format!("session: {e}")))?;
    Ok(Redirect::to(url.as_str()).into_response())
}

#[derive(Deserialize, Default)]
pub struct CallbackQuery {
    code: Option<String>,
    state: Option<String>,
    error: Option<String>,
    error_description: Option<String>,
}

/// Second leg: check `state`, exchange the code with the PKCE verifier, verify the ID token
/// (signature, issuer, audience, expiry, nonce), map the claims to a role, sign in.
pub async fn callback(
    State(state): State<AppState>,
    session: Session,
    RequestActor(actor): RequestActor,
    Query(q): Query<CallbackQuery>,
) -> PageResult<Response> {
    let result = finish(&state, &session, &q).await;
    match result {
        Ok((user, next)) => {
            session::sign_in(&session, &user).await?;
            let actor = Actor {
                person_id: Some(user.id),
                name: user.name.clone(),
                ..actor
            };
            let mut tx = crate::transaction::begin(&state.pool).await?;
            audit::created(
                &mut tx,
                &actor,
                "login.sso",
                &user.email,
                serde_json::json!({ "role": user.role }),
            )
            .await?;
            tx.commit().await?;
            Ok(Redirect::to(&next).into_response())
        }
        Err(err) => {
            let subject = q
                .state
                .as_deref()
                .unwrap_or("-")
                .chars()
                .take(16)
                .collect::<String>();
            let refusal = audit::db::Refusal {
                action: "login.sso_refused",
                route: "GET /auth/oidc/callback",
                target: &subject,
            };
            audit::db::refusal(&state.pool, &actor, refusal).await?;
            Err(PageError(err))
        }
    }
}

async fn finish(
    state: &AppState,
    session: &Session,
    q: &CallbackQuery,
) -> AppResult<(db::User, String)> {
    let s = settings(state)?;
    // The flow is used once, whatever happens next.
    let flow: Flow = session
        .remove(FLOW)
        .await
        .map_err(|e| AppError::Internal(format!("session: {e}")))?
        .ok_or_else(|| sso_failed("this sign-in was not started here, or it expired"))?;
    if let Some(err) = &q.error {
        return Err(sso_failed(format!(
            "the provider said {err}{}",
            q.error_description
                .as_deref()
                .map(|d| format!(" ({d})"))
                .unwrap_or_default()
        )));
    }
    let given_state = q.state.as_deref().unwrap_or_default();
    if !crate::auth::domain::constant_time_eq(given_state.as_bytes(), flow.state.as_bytes()) {
        return Err(sso_failed("the state does not match this sign-in"));
    }
    let code = q
        .code
        .clone()
        .ok_or_else(|| sso_failed("no authorization code"))?;

    let http = http_client()?;
    let client = CoreClient::from_provider_metadata(
        metadata(s, &http).await?,
        ClientId::new(s.client_id.clone()),
        s.client_secret.clone().map(ClientSecret::new),
    )
    .set_redirect_uri(redirect_url(state)?);
    let tokens = client
        .exchange_code(AuthorizationCode::new(code))
        .map_err(sso_failed)?
        .set_pkce_verifier(PkceCodeVerifier::new(flow.verifier))
        .request_async(&http)
        .await
        .map_err(|e| sso_failed(format!("the code exchange: {e}")))?;
    let id_token = tokens.id_token().ok_or_else(|| sso_failed("no ID token"))?;
    let claims = id_token
        .claims(&client.id_token_verifier(), &Nonce::new(flow.nonce))
        .map_err(|e| sso_failed(format!("the ID token: {e}")))?;
    let email = claims
        .email()
        .map(|e| e.as_str().to_owned())
        .ok_or_else(|| sso_failed("the provider sent no email"))?;
    if claims.email_verified() == Some(false) {
        return Err(sso_failed("the provider has not verified this email"));
    }
    let name = claims
        .name()
        .and_then(|n| n.get(None))
        .map(|n| n.as_str().to_owned());

    // The token is verified; its payload carries the group claim the typed claims don't model.
    let raw = id_token.to_string();
    let payload = raw
        .split('.')
        .nth(1)
        .and_then(|p| {
            base64::engine::general_purpose::URL_SAFE_NO_PAD
                .decode(p)
                .ok()
        })
        .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
        .unwrap_or_default();
    let values = claim_values(&payload, &s.role_claim);
    let default = s
        .default_role
        .as_deref()
        .map(|r| UserRole::parse("QUELL_OIDC_DEFAULT_ROLE", r))
        .transpose()?;
    let role = RoleMap::parse(&s.role_map)?
        .role_for(&values, default)
        .ok_or_else(|| {
            sso_failed(format!(
                "{email} has no Quell role (no mapped value in the {:?} claim)",
                s.role_claim
            ))
        })?;

    let existing = db::find_by_email(&state.pool, &email).await?;
    if existing.as_ref().is_some_and(|u| u.disabled_at.is_some()) {
        return Err(sso_failed(format!("the account {email} is disabled")));
    }
    let actor = Actor::system("single sign-on");
    let user = match existing {
        Some(u) if u.role == role => u,
        Some(u) => {
            let mut tx = crate::transaction::begin(&state.pool).await?;
            db::set_role(&mut *tx, u.id, role).await?;
            audit::changed(
                &mut tx,
                &actor,
                "user.update",
                &u.email,
                serde_json::json!({ "role": u.role }),
                serde_json::json!({ "role": role }),
            )
            .await?;
            tx.commit().await?;
            db::find_by_id(&state.pool, u.id)
                .await?
                .ok_or_else(|| AppError::Internal("account vanished".into()))?
        }
        None => {
            ensure_account(
                &state.pool,
                &Account {
                    email: &email,
                    name: name.as_deref(),
                    role,
                    password: None,
                },
                &actor,
            )
            .await?
        }
    };
    // Teams that follow the provider's groups gain or lose the person as the claim says.
    let mut tx = crate::transaction::begin(&state.pool).await?;
    let map = crate::teams::domain::TeamMap::parse(&s.team_map)?;
    let who = (user.handle.as_str(), user.id);
    crate::teams::actions::follow_groups(&mut tx, &actor, who, &values, &map).await?;
    tx.commit().await?;
    Ok((user, flow.next))
}
