//! Single sign-on against a small identity provider run inside the test: discovery, JWKS, an
//! authorization endpoint that approves at once, and a token endpoint that checks the PKCE
//! verifier and signs ID tokens with a test-only RSA key (tests/fixtures).

use crate::common;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::extract::{Form, Query, State};
use axum::http::{Method, StatusCode};
use axum::response::{IntoResponse, Redirect};
use axum::routing::{get, post};
use axum::{Json, Router};
use base64::Engine;
use chrono::{Duration, Utc};
use common::{Creds, TestApp};
use openidconnect::core::{
    CoreGenderClaim, CoreJsonWebKeySet, CoreJweContentEncryptionAlgorithm, CoreJwsSigningAlgorithm,
    CoreRsaPrivateSigningKey,
};
use openidconnect::{
    AccessToken, AdditionalClaims, Audience, AuthorizationCode, EndUserEmail, EndUserName, IdToken,
    IdTokenClaims, IssuerUrl, JsonWebKeyId, LocalizedClaim, Nonce, PrivateSigningKey,
    StandardClaims, SubjectIdentifier,
};
use serde::{Deserialize, Serialize};
use serde_json::json;
use sha2::{Digest, Sha256};
use sqlx::PgPool;

const KEY_PEM: &str = include_str!("../fixtures/oidc-test-idp-key.pem");
const CLIENT_ID: &str = "quell-test";

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Groups {
    groups: Vec<String>,
}
impl AdditionalClaims for Groups {}

/// Who the provider signs in next, and how it misbehaves.
#[derive(Clone, Default)]
struct Next {
    email: String,
    name: String,
    groups: Vec<String>,
    wrong_nonce: bool,
}

/// What an authorization code stands for: the PKCE challenge, the nonce, and who.
type Grant = (String, String, Next);

#[derive(Clone)]
struct Idp {
    issuer: String,
    next: Arc<Mutex<Next>>,
    /// code → (PKCE challenge, nonce, who)
    codes: Arc<Mutex<HashMap<String, Grant>>>,
}

async fn discovery(State(idp): State<Idp>) -> Json<serde_json::Value> {
    let i = &idp.issuer;
    Json(json!({
        "issuer": i,
        "authorization_endpoint": format!("{i}/authorize"),
        "token_endpoint": format!("{i}/token"),
        "jwks_uri": format!("{i}/jwks"),
        "response_types_supported": ["code"],
        "subject_types_supported": ["public"],
        "id_token_signing_alg_values_supported": ["RS256"],
    }))
}

fn key() -> CoreRsaPrivateSigningKey {
    CoreRsaPrivateSigningKey::from_pem(KEY_PEM, Some(JsonWebKeyId::new("test".into()))).unwrap()
}

async fn jwks() -> Json<CoreJsonWebKeySet> {
    Json(CoreJsonWebKeySet::new(vec![key().as_verification_key()]))
}

async fn authorize(
    State(idp): State<Idp>,
    Query(q): Query<HashMap<String, String>>,
) -> impl IntoResponse {
    assert_eq!(q["client_id"], CLIENT_ID);
    assert_eq!(q["response_type"], "code");
    assert_eq!(q["code_challenge_method"], "S256", "Quell must use PKCE");
    assert!(q["scope"].split(' ').any(|s| s == "openid"));
    let code = format!("code-{}", idp.codes.lock().unwrap().len());
    let who = idp.next.lock().unwrap().clone();
    idp.codes.lock().unwrap().insert(
        code.clone(),
        (q["code_challenge"].clone(), q["nonce"].clone(), who),
    );
    let back = format!("{}?code={code}&state={}", q["redirect_uri"], q["state"]);
    Redirect::to(&back)
}

async fn token(
    State(idp): State<Idp>,
    Form(f): Form<HashMap<String, String>>,
) -> axum::response::Response {
    let Some((challenge, nonce, who)) = idp.codes.lock().unwrap().remove(&f["code"]) else {
        return (
            StatusCode::BAD_REQUEST,
            Json(json!({"error": "invalid_grant"})),
        )
            .into_response();
    };
    let verifier = f.get("code_verifier").cloned().unwrap_or_default();
    let computed = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .encode(Sha256::digest(verifier.as_bytes()));
    if computed != challenge {
        return (
            StatusCode::BAD_REQUEST,
            Json(json!({"error": "invalid_grant", "error_description": "PKCE"})),
        )
            .into_response();
    }
    let access = AccessToken::new("access-token".into());
    let nonce = if who.wrong_nonce {
        "not-the-nonce".to_owned()
    } else {
        nonce
    };
    let claims = IdTokenClaims::new(
        IssuerUrl::new(idp.issuer.clone()).unwrap(),
        vec![Audience::new(CLIENT_ID.into())],
        Utc::now() + Duration::minutes(5),
        Utc::now(),
        StandardClaims::<CoreGenderClaim>::new(SubjectIdentifier::new(who.email.clone()))
            .set_email(Some(EndUserEmail::new(who.email.clone())))
            .set_email_verified(Some(true))
            .set_name(Some(LocalizedClaim::from(EndUserName::new(
                who.name.clone(),
            )))),
        Groups {
            groups: who.groups.clone(),
        },
    )
    .set_nonce(Some(Nonce::new(nonce)));
    let id_token = IdToken::<
        Groups,
        CoreGenderClaim,
        CoreJweContentEncryptionAlgorithm,
        CoreJwsSigningAlgorithm,
    >::new(
        claims,
        &key(),
        CoreJwsSigningAlgorithm::RsaSsaPkcs1V15Sha256,
        Some(&access),
        Some(&AuthorizationCode::new(f["code"].clone())),
    )
    .unwrap();
    Json(json!({
        "access_token": access.secret(),
        "token_type": "Bearer",
        "expires_in": 300,
        "id_token": id_token.to_string(),
    }))
    .into_response()
}

async fn start_idp() -> Idp {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let idp = Idp {
        issuer: format!("http://{}", listener.local_addr().unwrap()),
        next: Default::default(),
        codes: Default::default(),
    };
    let router = Router::new()
        .route("/.well-known/openid-configuration", get(discovery))
        .route("/jwks", get(jwks))
        .route("/authorize", get(authorize))
        .route("/token", post(token))
        .with_state(idp.clone());
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    idp
}

async fn app_with_sso(pool: PgPool, idp: &Idp, default_role: Option<&str>) -> TestApp {
    TestApp::with_oidc(
        pool,
        Some(quell::state::OidcSettings {
            issuer: idp.issuer.clone(),
            client_id: CLIENT_ID.into(),
            client_secret: Some("test-secret".into()),
            scopes: vec!["openid".into(), "email".into(), "profile".into()],
            role_claim: "groups".into(),
            role_map: "sre-admins=admin,oncall=responder".into(),
            team_map: "search-eng=search".into(),
            default_role: default_role.map(str::to_owned),
        }),
    )
    .await
}

/// Runs the browser's side of the flow; returns the callback's answer and the session cookie.
async fn sso(app: &TestApp, tamper_state: bool) -> (common::Res, Option<String>) {
    let login = app
        .call_as(
            &Creds::default(),
            Method::GET,
            "/login?next=%2Fincidents%3Fstatus%3Dopen",
            &[],
            None,
        )
        .await;
    assert!(
        login.text.contains("/auth/oidc/login?next="),
        "the sign-in page offers SSO"
    );
    let mut creds = Creds {
        cookie: login.session_cookie(),
        ..Default::default()
    };
    let start = app
        .call_as(
            &creds,
            Method::GET,
            "/auth/oidc/login?next=%2Fincidents%3Fstatus%3Dopen",
            &[],
            None,
        )
        .await;
    assert_eq!(start.status, StatusCode::SEE_OTHER, "{}", start.text);
    creds.cookie = start.session_cookie().or(creds.cookie);
    let to_idp = start.header("location").unwrap().to_owned();
    let browser = openidconnect::reqwest::ClientBuilder::new()
        .redirect(openidconnect::reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let approved = browser.get(&to_idp).send().await.unwrap();
    assert!(approved.status().is_redirection());
    let back = approved.headers()["location"].to_str().unwrap().to_owned();
    let mut path = back
        .strip_prefix("http://quell.test")
        .expect("back to Quell's callback")
        .to_owned();
    if tamper_state {
        path = path.replace("state=", "state=x");
    }
    let r = app.call_as(&creds, Method::GET, &path, &[], None).await;
    let cookie = r.session_cookie().or(creds.cookie);
    (r, cookie)
}

fn sign_in_as(idp: &Idp, email: &str, name: &str, groups: &[&str]) {
    *idp.next.lock().unwrap() = Next {
        email: email.into(),
        name: name.into(),
        groups: groups.iter().map(|g| g.to_string()).collect(),
        wrong_nonce: false,
    };
}

#[sqlx::test]
async fn a_new_person_signs_in_with_sso_and_gets_the_mapped_role(pool: PgPool) {
    let idp = start_idp().await;
    let app = app_with_sso(pool, &idp, None).await;
    sign_in_as(
        &idp,
        "priya@example.com",
        "Priya Nair",
        &["staff", "oncall"],
    );
    let (r, cookie) = sso(&app, false).await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
    assert_eq!(r.header("location"), Some("/incidents?status=open"));
    let me = Creds {
        cookie,
        ..Default::default()
    };
    let page = app.call_as(&me, Method::GET, "/incidents", &[], None).await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(page.text.contains("Priya Nair") && page.text.contains("(responder)"));
    let users = app.get("/api/v1/users").await.json();
    let priya = users["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|u| u["email"] == "priya@example.com")
        .unwrap()
        .clone();
    assert_eq!(priya["role"], "responder");
    assert_eq!(priya["has_password"], false);
    let audit = app.get("/api/v1/audit?action=login.sso").await.json();
    assert_eq!(audit["items"][0]["target"], "priya@example.com");

    // The provider's groups decide the role at every sign-in.
    sign_in_as(&idp, "priya@example.com", "Priya Nair", &["sre-admins"]);
    let (r, _) = sso(&app, false).await;
    assert_eq!(r.status, StatusCode::SEE_OTHER);
    let users = app.get("/api/v1/users").await.json();
    assert_eq!(
        users["items"]
            .as_array()
            .unwrap()
            .iter()
            .find(|u| u["email"] == "priya@example.com")
            .unwrap()["role"],
        "admin"
    );
}

#[sqlx::test]
async fn a_forged_state_a_wrong_nonce_or_no_role_is_refused(pool: PgPool) {
    let idp = start_idp().await;
    let app = app_with_sso(pool, &idp, None).await;

    sign_in_as(&idp, "dev@example.com", "Dev Shah", &["oncall"]);
    let (r, cookie) = sso(&app, true).await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "forged state");
    assert!(r.text.contains("state"));
    assert_eq!(
        app.call_as(
            &Creds {
                cookie,
                ..Default::default()
            },
            Method::GET,
            "/incidents",
            &[],
            None
        )
        .await
        .status,
        StatusCode::SEE_OTHER
    );

    idp.next.lock().unwrap().wrong_nonce = true;
    let (r, _) = sso(&app, false).await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "wrong nonce: {}", r.text);

    sign_in_as(&idp, "guest@example.com", "Guest", &["marketing"]);
    let (r, _) = sso(&app, false).await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);
    assert!(r.text.contains("has no Quell role"));

    let users = app.get("/api/v1/users").await.json();
    assert!(
        users["items"]
            .as_array()
            .unwrap()
            .iter()
            .all(|u| u["email"] != "dev@example.com" && u["email"] != "guest@example.com")
    );
    let refused = app
        .get("/api/v1/audit?action=login.sso_refused")
        .await
        .json();
    assert!(!refused["items"].as_array().unwrap().is_empty());
}

#[sqlx::test]
async fn the_default_role_admits_unmapped_people_but_not_disabled_ones(pool: PgPool) {
    let idp = start_idp().await;
    let app = app_with_sso(pool, &idp, Some("viewer")).await;
    sign_in_as(&idp, "guest@example.com", "Guest", &[]);
    let (r, _) = sso(&app, false).await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
    let users = app.get("/api/v1/users").await.json();
    let guest = users["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|u| u["email"] == "guest@example.com")
        .unwrap()
        .clone();
    assert_eq!(guest["role"], "viewer");
    app.call(
        Method::PATCH,
        &format!("/api/v1/users/{}", guest["id"]),
        &[],
        Some(r#"{"disabled": true}"#),
    )
    .await;
    let (r, _) = sso(&app, false).await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);
    assert!(r.text.contains("disabled"));
}

#[sqlx::test]
async fn without_sso_settings_the_sso_routes_are_absent(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let login = app
        .call_as(&Creds::default(), Method::GET, "/login", &[], None)
        .await;
    assert!(!login.text.contains("/auth/oidc/login"));
    let r = app
        .call_as(
            &Creds::default(),
            Method::GET,
            "/auth/oidc/login",
            &[],
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
}

#[sqlx::test]
async fn a_team_that_follows_a_group_gains_and_loses_people_at_sign_in(pool: PgPool) {
    let idp = start_idp().await;
    let app = app_with_sso(pool, &idp, None).await;
    for body in [
        json!({"name": "Payments", "oidc_group": "payments-eng"}),
        json!({"name": "Data"}),
        // Followed through QUELL_OIDC_TEAM_MAP (search-eng=search), not a group of its own.
        json!({"name": "Search"}),
    ] {
        let r = app.post("/api/v1/teams", body).await;
        assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    }
    let members = |team: &'static str| {
        let app = &app;
        async move {
            app.get(&format!("/api/v1/teams/{team}")).await.json()["members"]
                .as_array()
                .unwrap()
                .iter()
                .map(|m| {
                    (
                        m["handle"].as_str().unwrap().to_owned(),
                        m["role"].as_str().unwrap().to_owned(),
                    )
                })
                .collect::<Vec<_>>()
        }
    };
    sign_in_as(
        &idp,
        "priya@example.com",
        "Priya Nair",
        &["oncall", "payments-eng", "search-eng"],
    );
    let (r, _) = sso(&app, false).await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
    assert_eq!(
        members("payments").await,
        [("priya".to_owned(), "member".to_owned())]
    );
    assert_eq!(
        members("search").await,
        [("priya".to_owned(), "member".to_owned())],
        "the team map's group"
    );
    assert!(
        members("data").await.is_empty(),
        "a team without a group is left alone"
    );
    // Made a lead by hand, she stays one while she is in the group.
    let r = app
        .call(
            Method::PUT,
            "/api/v1/teams/payments/members/priya",
            &[],
            Some(r#"{"role": "lead"}"#),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let r = app
        .call(
            Method::PUT,
            "/api/v1/teams/data/members/priya",
            &[],
            Some(r#"{"role": "member"}"#),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let (r, _) = sso(&app, false).await;
    assert_eq!(r.status, StatusCode::SEE_OTHER);
    assert_eq!(
        members("payments").await,
        [("priya".to_owned(), "lead".to_owned())]
    );
    // Out of the groups at the provider: out of their teams at the next sign-in; Data, which
    // follows no group, keeps her.
    sign_in_as(&idp, "priya@example.com", "Priya Nair", &["oncall"]);
    let (r, _) = sso(&app, false).await;
    assert_eq!(r.status, StatusCode::SEE_OTHER);
    assert!(members("payments").await.is_empty());
    assert!(members("search").await.is_empty());
    assert_eq!(
        members("data").await,
        [("priya".to_owned(), "member".to_owned())]
    );
    let audit = app.get("/api/v1/audit?action=team.member").await.json();
    assert!(
        audit["items"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["actor"] == "single sign-on"),
        "{audit}"
    );
}
