//! A responder works an incident in a real browser: Debian's chromium, headless, driven through
//! chromedriver (both installed by scripts/test). The pages use no JavaScript for any of this.

use std::net::TcpListener as StdListener;
use std::time::Duration;

use fantoccini::{Client, ClientBuilder, Locator};
use hyper_util::client::legacy::connect::HttpConnector;
use serde_json::json;
use sqlx::PgPool;
use tokio::process::{Child, Command};

use quell::services::{db as services_db, domain::ServiceDraft};
use quell::state::{AppConfig, AppState};

fn free_port() -> u16 {
    StdListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

pub(crate) async fn serve(pool: PgPool) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let state = AppState::new(
        pool,
        AppConfig {
            base_url: format!("http://{addr}"),
            trust_forwarded_for: false,
            oidc: None,
            git_roots: vec![],
            webhook_allow: Default::default(),
            live: Default::default(),
            request_timeout: std::time::Duration::from_secs(30),
            bodies: Default::default(),
            uploads: Default::default(),
            metrics_token: None,
        },
    );
    tokio::spawn(async move { axum::serve(listener, quell::app(state)).await.unwrap() });
    format!("http://{addr}")
}

pub(crate) async fn chromedriver() -> (Child, String) {
    chromedriver_in("UTC").await
}

/// chromedriver, and the chromium it starts, in time zone `tz` (a scribe two hours east of UTC).
pub(crate) async fn chromedriver_in(tz: &str) -> (Child, String) {
    let port = free_port();
    let child = Command::new("chromedriver")
        .env("TZ", tz)
        .arg(format!("--port={port}"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect(
            "chromedriver is not installed: scripts/test installs chromium and chromium-driver",
        );
    for _ in 0..100 {
        if tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_ok()
        {
            return (child, format!("http://127.0.0.1:{port}"));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("chromedriver did not start");
}

pub(crate) async fn browser(driver: &str) -> Client {
    browser_sized(driver, 1280, 1000).await
}

/// A headless chromium whose window is `width` × `height` CSS pixels.
pub(crate) async fn browser_sized(driver: &str, width: u32, height: u32) -> Client {
    let mut caps = json!({
        // Chromium's console, read by `console_problems`.
        "goog:loggingPrefs": {"browser": "ALL"},
        "goog:chromeOptions": {
            "binary": "/usr/bin/chromium",
            "args": ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--disable-quic", "--no-first-run", "--disable-background-networking",
                     "--disable-component-update", "--disable-sync",
                     format!("--window-size={},{height}", width.max(500))]
        }
    });
    // A window cannot be narrower than 500 px; a phone's viewport is emulated instead.
    if width < 500 {
        caps["goog:chromeOptions"]["mobileEmulation"] = json!({
            "deviceMetrics": {"width": width, "height": height, "pixelRatio": 1.0, "touch": true}
        });
    }
    let serde_json::Value::Object(caps) = caps else {
        unreachable!()
    };
    ClientBuilder::new(HttpConnector::new())
        .capabilities(caps)
        .connect(driver)
        .await
        .expect("chromium starts under chromedriver")
}

/// The text of the first element matching `css` once it satisfies `ready`; a click's navigation
/// may still be under way, so this polls (for at most 10 s) instead of reading once.
pub(crate) async fn text_when(c: &Client, css: &str, ready: impl Fn(&str) -> bool) -> String {
    let mut last = String::new();
    for _ in 0..100 {
        if let Ok(el) = c.find(Locator::Css(css)).await
            && let Ok(text) = el.text().await
        {
            if ready(&text) {
                return text;
            }
            last = text;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!(
        "{css} never became ready; last text {last:?}; page: {}",
        c.source().await.unwrap_or_default()
    );
}

async fn wait_status(c: &Client, expected: &str) {
    text_when(c, ".incident-head .status", |t| t == expected).await;
}

/// Clicks the submit button of the transition form for `action`.
async fn click_transition(c: &Client, action: &str) {
    let selector = format!(r#"form.steps button[name="action"][value="{action}"]"#);
    c.find(Locator::Css(&selector))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
}

/// An account that can sign in with the password `correct horse battery`.
pub(crate) async fn account(
    pool: &PgPool,
    email: &str,
    name: &str,
    role: quell::auth::domain::UserRole,
) {
    quell::accounts::bootstrap::ensure_account(
        pool,
        &quell::accounts::bootstrap::Account {
            email,
            name: Some(name),
            role,
            password: Some("correct horse battery"),
        },
        &quell::audit::Actor::system("test"),
    )
    .await
    .unwrap();
}

/// Types into the element once it is there: a page still loading after a click (a sign-in's
/// redirect on a loaded machine) is waited for, not failed.
pub(crate) async fn type_into(c: &Client, css: &str, text: &str) {
    c.wait()
        .for_element(Locator::Css(css))
        .await
        .unwrap()
        .send_keys(text)
        .await
        .unwrap();
}

/// Clicks the element once it is there (see [`type_into`]).
pub(crate) async fn click(c: &Client, css: &str) {
    c.wait()
        .for_element(Locator::Css(css))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
}

/// The person of the account `email`, acting (for changes made straight through the actions).
pub(crate) async fn acting_as(pool: &PgPool, email: &str) -> quell::audit::Actor {
    let person = quell::people::db::find(pool, email).await.unwrap().unwrap();
    quell::audit::Actor {
        person_id: Some(person.id),
        name: person.name,
        ..Default::default()
    }
}

/// Asks for `url`, is sent to the sign-in form, signs in, and lands back on `url`.
pub(crate) async fn sign_in_at(c: &Client, url: &str, email: &str) {
    c.goto(url).await.unwrap();
    type_into(c, r#"input[name="email"]"#, email).await;
    type_into(c, r#"input[name="password"]"#, "correct horse battery").await;
    click(c, "main form button.primary").await;
}

#[sqlx::test]
async fn a_responder_opens_acknowledges_mitigates_and_resolves_in_chromium(pool: PgPool) {
    account(
        &pool,
        "ana@example.com",
        "Ana Ribeiro",
        quell::auth::domain::UserRole::Responder,
    )
    .await;
    let draft = ServiceDraft {
        name: "checkout-api".into(),
        tier: 1,
        ..Default::default()
    };
    services_db::insert(&pool, &draft.validated().unwrap(), None)
        .await
        .unwrap();
    let base = serve(pool.clone()).await;
    let (_driver, driver_url) = chromedriver().await;
    let c = browser(&driver_url).await;

    let run = async {
        // Signing in first: the form comes back to the page that was asked for.
        sign_in_at(&c, &format!("{base}/incidents/new"), "ana@example.com").await;
        text_when(&c, "main h1", |t| t == "Open an incident").await;
        c.find(Locator::Css(r#"input[name="title"]"#))
            .await
            .unwrap()
            .send_keys("Checkout <b>hangs</b> for EU merchants")
            .await
            .unwrap();
        c.find(Locator::Css(r#"select[name="severity"]"#))
            .await
            .unwrap()
            .select_by_value("Sev2")
            .await
            .unwrap();
        c.find(Locator::Css(r#"select[name="service"]"#))
            .await
            .unwrap()
            .select_by_value("checkout-api")
            .await
            .unwrap();
        c.find(Locator::Css("main form button.primary"))
            .await
            .unwrap()
            .click()
            .await
            .unwrap();

        let title = text_when(&c, ".incident-head h1", |_| true).await;
        assert_eq!(
            title, "Checkout <b>hangs</b> for EU merchants",
            "typed markup is shown as text"
        );
        let url = c.current_url().await.unwrap();
        assert!(
            url.path().starts_with("/incidents/INC-"),
            "the form leads to the new incident: {url}"
        );
        wait_status(&c, "triggered").await;

        click_transition(&c, "acknowledge").await;
        wait_status(&c, "acknowledged").await;

        c.find(Locator::Css(r#"textarea[name="body"]"#))
            .await
            .unwrap()
            .send_keys("Rolled back the 14:05 config change")
            .await
            .unwrap();
        c.find(Locator::Css(".note-form button[type=submit]"))
            .await
            .unwrap()
            .click()
            .await
            .unwrap();
        text_when(&c, "ol.timeline", |t| {
            t.contains("Rolled back the 14:05 config change")
        })
        .await;

        click_transition(&c, "mitigate").await;
        wait_status(&c, "mitigated").await;
        click_transition(&c, "resolve").await;
        wait_status(&c, "resolved").await;

        let timeline = c
            .find(Locator::Css("ol.timeline"))
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        for line in [
            "Incident opened as Sev2 on checkout-api",
            "Acknowledged, 0 min after detection",
            "Marked mitigated",
            "Resolved",
        ] {
            assert!(timeline.contains(line), "{line:?} in {timeline}");
        }
        let header = c
            .find(Locator::Css(".incident-head"))
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        assert!(
            header.contains("TIME TO RESOLVE") || header.contains("Time to resolve"),
            "{header}"
        );
        // Only reopen is left.
        assert!(
            c.find(Locator::Css(r#"button[name="action"][value="reopen"]"#))
                .await
                .is_ok()
        );
        assert!(
            c.find(Locator::Css(r#"button[name="action"][value="resolve"]"#))
                .await
                .is_err()
        );

        // Someone else changes the severity while this page is open: the stale form is refused.
        let key = c
            .current_url()
            .await
            .unwrap()
            .path()
            .trim_start_matches("/incidents/")
            .to_owned();
        // The form is half filled in when the other change lands (a part being filled in is
        // not refreshed under the person's hands), so it is sent stale.
        c.find(Locator::Css(r#"input[name="reason"]"#))
            .await
            .unwrap()
            .send_keys("looks minor")
            .await
            .unwrap();
        c.find(Locator::Css(
            r#"form[action$="/severity"] select[name="severity"]"#,
        ))
        .await
        .unwrap()
        .select_by_value("Sev3")
        .await
        .unwrap();
        let mut tx = pool.begin().await.unwrap();
        let ana = quell::audit::Actor::system("Ana");
        let change = quell::incidents::actions::Change::now(
            quell::incidents::domain::IncidentKey::parse(&key).unwrap(),
            &ana,
        );
        let sev1 = quell::domain::Severity::Sev1;
        quell::incidents::actions::change_severity(&mut tx, &change, sev1, "checkout failing")
            .await
            .unwrap();
        tx.commit().await.unwrap();
        c.find(Locator::Css(
            r#"form[action$="/severity"] button[type=submit]"#,
        ))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
        let body = text_when(&c, "main", |t| {
            t.contains("changed while you were looking at it")
        })
        .await;
        assert!(body.contains("Severity raised from Sev2 to Sev1"), "{body}");
        assert_console_clean(&c, "this run", &["/severity"]).await;
    };
    let outcome = tokio::time::timeout(Duration::from_secs(120), run).await;
    c.close().await.ok();
    outcome.expect("the browser run finished within two minutes");
}

/// Saves a screenshot when `QUELL_SCREENSHOTS` names a folder (to look at the pages by eye).
async fn snapshot(c: &Client, name: &str) {
    if let Ok(dir) = std::env::var("QUELL_SCREENSHOTS") {
        let png = c.screenshot().await.unwrap();
        std::fs::write(format!("{dir}/{name}.png"), png).unwrap();
    }
}

/// Reads what chromium's console logged since the last read: chromedriver's own command
/// (`POST /session/{id}/se/log`), which `goog:loggingPrefs` turns on.
#[derive(Debug)]
struct ReadConsole;

impl fantoccini::wd::WebDriverCompatibleCommand for ReadConsole {
    fn endpoint(
        &self,
        base: &url::Url,
        session: Option<&str>,
    ) -> Result<url::Url, url::ParseError> {
        base.join(&format!("session/{}/se/log", session.unwrap_or_default()))
    }

    fn method_and_body(&self, _: &url::Url) -> (axum::http::Method, Option<String>) {
        (
            axum::http::Method::POST,
            Some(r#"{"type": "browser"}"#.to_owned()),
        )
    }
}

/// The console's errors and warnings since the last read: a policy violation (an inline style
/// or script the page's CSP refused), a script error, a resource that failed to load. A page
/// answered with an error status on purpose (a refused form, a 404 asked for) is named by the
/// end of its address in `error_pages`, so its own load is not counted.
pub(crate) async fn console_problems(c: &Client, error_pages: &[&str]) -> Vec<String> {
    let logs = c
        .issue_cmd(ReadConsole)
        .await
        .expect("chromedriver reads the browser's console");
    logs.as_array()
        .into_iter()
        .flatten()
        .filter(|e| matches!(e["level"].as_str(), Some("SEVERE" | "WARNING")))
        .filter_map(|e| e["message"].as_str().map(str::to_owned))
        .filter(|m| {
            let failed = m
                .split_once(" - Failed to load resource")
                .map(|(url, _)| url);
            !failed.is_some_and(|url| error_pages.iter().any(|p| url.ends_with(p)))
        })
        .collect()
}

/// Fails the test with what the console logged, if it logged a problem; `error_pages` as for
/// `console_problems`.
pub(crate) async fn assert_console_clean(c: &Client, what: &str, error_pages: &[&str]) {
    let problems = console_problems(c, error_pages).await;
    assert!(
        problems.is_empty(),
        "the console logged problems during {what}:\n{}",
        problems.join("\n")
    );
}

#[sqlx::test]
async fn an_admin_connects_alertmanager_from_the_browser_and_its_alert_opens_an_incident(
    pool: PgPool,
) {
    account(
        &pool,
        "root@example.com",
        "Rui Admin",
        quell::auth::domain::UserRole::Admin,
    )
    .await;
    let base = serve(pool.clone()).await;
    let (_driver, driver_url) = chromedriver().await;
    let c = browser(&driver_url).await;
    let run = async {
        sign_in_at(
            &c,
            &format!("{base}/admin/integrations"),
            "root@example.com",
        )
        .await;
        text_when(&c, "main h1", |t| t == "Integrations").await;
        type_into(&c, r#"input[name="name"]"#, "prod-alertmanager").await;
        c.find(Locator::Css(r#"select[name="format"]"#))
            .await
            .unwrap()
            .select_by_value("alertmanager")
            .await
            .unwrap();
        click(&c, "form.stacked button.primary").await;
        let key = text_when(&c, "code.secret", |t| t.len() == 32).await;
        let endpoint = text_when(&c, "dl.issued dd code", |t| {
            t.contains("/hooks/alertmanager/")
        })
        .await;
        snapshot(&c, "integrations").await;

        // Alertmanager posts with that key: the incident opens, and its page lists the alert.
        let body = json!({
            "version": "4", "groupKey": "{}:{alertname=\"Http5xx\"}", "status": "firing",
            "receiver": "quell", "groupLabels": {"alertname": "Http5xx"},
            "commonLabels": {"alertname": "Http5xx"}, "commonAnnotations": {},
            "externalURL": "http://alertmanager:9093", "truncatedAlerts": 0,
            "alerts": [{"status": "firing", "labels": {"alertname": "Http5xx", "severity": "critical"},
                        "annotations": {"summary": "payments-gateway 5xx > 5% for 5 min"},
                        "startsAt": "2026-11-30T06:00:00Z", "endsAt": "0001-01-01T00:00:00Z",
                        "generatorURL": "http://prometheus:9090/graph", "fingerprint": "f00d"}]
        });
        let res = reqwest::Client::new()
            .post(&endpoint)
            .bearer_auth(&key)
            .body(body.to_string())
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 202);
        c.goto(&format!("{base}/incidents")).await.unwrap();
        // The list is live: follow the link's address rather than click an element the list
        // may replace under the pointer.
        let href = c
            .find(Locator::LinkText("payments-gateway 5xx > 5% for 5 min"))
            .await
            .unwrap()
            .attr("href")
            .await
            .unwrap()
            .expect("the incident's link");
        c.goto(&format!("{base}{href}")).await.unwrap();
        let alerts = text_when(&c, "table.alerts", |t| t.contains("payments-gateway 5xx")).await;
        assert!(alerts.contains("critical"), "{alerts}");
        snapshot(&c, "incident-with-alerts").await;
        c.goto(&format!("{base}/admin/routing")).await.unwrap();
        text_when(&c, "main h1", |t| t == "Routing rules").await;
        snapshot(&c, "routing").await;
        assert_console_clean(&c, "this run", &[]).await;
    };
    let outcome = tokio::time::timeout(Duration::from_secs(60), run).await;
    c.close().await.ok();
    outcome.expect("the browser flow finished in time");
}

#[sqlx::test]
async fn a_manager_reviews_the_inc_1187_postmortem_in_chromium(pool: PgPool) {
    quell::demo::load(&pool).await.unwrap();
    account(
        &pool,
        "lead@example.com",
        "Lena Lead",
        quell::auth::domain::UserRole::Manager,
    )
    .await;
    let base = serve(pool.clone()).await;
    let (_driver, driver_url) = chromedriver().await;
    let c = browser(&driver_url).await;
    let run = async {
        // The managers' list leads to the published postmortem.
        sign_in_at(&c, &format!("{base}/postmortems"), "lead@example.com").await;
        text_when(&c, "main table", |t| {
            t.contains("INC-1187") && t.contains("70%")
        })
        .await;
        click(&c, r#"a[href="/incidents/INC-1187/postmortem"]"#).await;
        text_when(&c, "table.pm-header", |t| t.contains("Published")).await;
        snapshot(&c, "postmortem").await;
        // Published, it reads as a document: no editing controls until "Edit".
        let article = text_when(&c, "article.postmortem", |_| true).await;
        for control in [
            "Edit root cause",
            "Comment on",
            "Choose the timeline lines",
            "Add an action item",
        ] {
            assert!(!article.contains(control), "{control} shows in read mode");
        }
        assert!(article.contains("What went well:"));
        click(&c, r#"a[href="/incidents/INC-1187/postmortem?edit"]"#).await;
        text_when(&c, "article.postmortem", |t| t.contains("Done editing")).await;

        // A review comment on the root cause, typed as written (and shown escaped).
        click(&c, "#comments-root_cause details summary").await;
        type_into(
            &c,
            r#"#comments-root_cause textarea[name="body"]"#,
            "Where did <b>10</b> come from?",
        )
        .await;
        click(
            &c,
            "#comments-root_cause form.stacked button[type=\"submit\"]",
        )
        .await;
        text_when(&c, "#comments-root_cause .comment .body", |t| {
            t == "Where did <b>10</b> come from?"
        })
        .await;
        text_when(&c, "p.open-comments", |t| {
            t.contains("1 open review comment")
        })
        .await;

        // Editing a section after publication says so; the frozen version stays.
        click(&c, "#lessons > details.more > summary").await;
        let area = c
            .find(Locator::Css(r#"#lessons textarea[name="text"]"#))
            .await
            .unwrap();
        area.clear().await.unwrap();
        area.send_keys(
            "Derive concurrency limits from arrival rate × latency at {time_to_detect} notice.",
        )
        .await
        .unwrap();
        click(&c, "#lessons > details.more button[type=\"submit\"]").await;
        text_when(&c, "#lessons", |t| t.contains("at 5 minutes notice.")).await;
        text_when(&c, "main", |t| t.contains("Edited since publication on")).await;
        assert_console_clean(&c, "this run", &[]).await;
    };
    let outcome = tokio::time::timeout(Duration::from_secs(60), run).await;
    c.close().await.ok();
    outcome.expect("the review finished in time");
}

/// A new responder plays the OrbitPay challenge to the end in chromium: nothing shows the answer
/// before the end; a vague hypothesis scores low, a hint costs 5 credits once, giving up shows
/// jitter as the fix.
#[sqlx::test]
async fn a_responder_plays_the_orbitpay_challenge_to_the_end_in_chromium(pool: PgPool) {
    quell::demo::load(&pool).await.unwrap();
    account(
        &pool,
        "new@example.com",
        "Nia New",
        quell::auth::domain::UserRole::Responder,
    )
    .await;
    let base = serve(pool.clone()).await;
    let (_driver, driver_url) = chromedriver().await;
    let c = browser(&driver_url).await;
    let run = async {
        sign_in_at(&c, &format!("{base}/challenges"), "new@example.com").await;
        text_when(&c, "main", |t| t.contains("Your credit: 100")).await;
        click(&c, r#"ul.challenges a[href="/challenges/1"]"#).await;
        text_when(&c, "#scenario", |t| t.contains("It is 22:14 UTC")).await;
        let page = c.source().await.unwrap();
        assert!(!page.contains("jitter"), "the answer shows before the end");
        click(&c, "#attempt button.primary").await;
        text_when(&c, "#attempt", |t| t.contains("Check my hypothesis")).await;
        state_hypothesis(&c, "Something is wrong with payments").await;
        text_when(&c, "ol.hypotheses", |t| {
            t.contains("0%") && t.contains("Not there yet")
        })
        .await;
        click(&c, r#"form[action$="/hints"] button"#).await;
        text_when(&c, "#hints", |t| t.contains("Hint 1")).await;
        text_when(&c, "#balance", |t| t == "95").await;
        let page = c.source().await.unwrap();
        assert!(!page.contains("jitter"), "the answer shows before the end");
        click(&c, r#"form[action$="/give-up"] button"#).await;
        text_when(&c, "#answer", |t| {
            t.contains("full jitter") && t.contains("Your time")
        })
        .await;
        snapshot(&c, "challenge").await;
        assert_console_clean(&c, "this run", &[]).await;
    };
    let outcome = tokio::time::timeout(Duration::from_secs(60), run).await;
    c.close().await.ok();
    outcome.expect("the challenge was played in time");
}

/// The review queue end to end in chromium: a learner's plain-words answer the grader is unsure
/// of waits for an editor, as does one the learner asks about; the manager gives a verdict with
/// a note on the queue page; the learner sees it and the attempt solved.
#[sqlx::test]
async fn a_teacher_judges_a_learners_hypothesis_from_the_review_queue_in_chromium(pool: PgPool) {
    quell::demo::load(&pool).await.unwrap();
    use quell::auth::domain::UserRole;
    account(
        &pool,
        "lena@example.com",
        "Lena Learner",
        UserRole::Responder,
    )
    .await;
    account(&pool, "tom@example.com", "Tom Teacher", UserRole::Manager).await;
    let base = serve(pool.clone()).await;
    let (_driver, driver_url) = chromedriver().await;
    let plain = "Every payment that failed was booked to try again after the very same pause, so they all came back at once and buried the payment workers.";
    crate::seen::in_chromium(&driver_url, 1280, 60, "the learner's part", async |c| {
        sign_in_at(c, &format!("{base}/challenges/1"), "lena@example.com").await;
        click(c, "#attempt button.primary").await;
        text_when(c, "#attempt", |t| t.contains("Check my hypothesis")).await;
        state_hypothesis(c, plain).await;
        text_when(c, "ol.hypotheses", |t| {
            t.contains("Waiting for an editor's verdict")
        })
        .await;
        state_hypothesis(c, "The workers drown in payments coming back.").await;
        text_when(c, "ol.hypotheses", |t| t.contains("ask an editor")).await;
        click(c, r#"form[action$="/review"] button"#).await;
        text_when(c, "ol.hypotheses", |t| {
            t.matches("Waiting for an editor's verdict").count() == 2
        })
        .await;
        assert_console_clean(c, "the learner's run", &[]).await;
    })
    .await;
    crate::seen::in_chromium(&driver_url, 1280, 60, "the teacher's part", async |c| {
        sign_in_at(
            c,
            &format!("{base}/challenges/1/reviews"),
            "tom@example.com",
        )
        .await;
        text_when(c, "#waiting", |t| {
            t.contains("Waiting (2)") && t.contains("the learner thinks it is right")
        })
        .await;
        let first = "#waiting article:first-of-type";
        click(c, &format!(r#"{first} input[value="right"]"#)).await;
        type_into(
            c,
            &format!(r#"{first} textarea[name="note"]"#),
            "Yes: one shared pause brought them all back together.",
        )
        .await;
        click(c, &format!("{first} button.primary")).await;
        text_when(c, "#waiting", |t| t.contains("Waiting (1)")).await;
        text_when(c, "#judged", |t| t.contains("Tom Teacher")).await;
        assert_console_clean(c, "the teacher's run", &[]).await;
    })
    .await;
    crate::seen::in_chromium(
        &driver_url,
        1280,
        60,
        "the learner seeing the verdict",
        async |c| {
            sign_in_at(c, &format!("{base}/challenges/1"), "lena@example.com").await;
            text_when(c, "#attempt", |t| {
                t.contains("An editor's verdict: right.")
                    && t.contains("one shared pause")
                    && t.contains("Solved")
            })
            .await;
        },
    )
    .await;
}

/// Types a hypothesis into the attempt's form and sends it.
async fn state_hypothesis(c: &Client, text: &str) {
    type_into(c, r#"#attempt textarea[name="text"]"#, text).await;
    click(c, "#attempt form.stacked button.primary").await;
}

/// Opens an incident that started and was detected `minutes_ago`; its key.
pub(crate) async fn open_incident(
    pool: &PgPool,
    title: &str,
    severity: quell::domain::Severity,
    service: Option<&str>,
    summary: &str,
    minutes_ago: i64,
) -> String {
    let mut tx = pool.begin().await.unwrap();
    let now = quell::clock::now(&mut *tx).await.unwrap();
    let at = now - chrono::Duration::minutes(minutes_ago);
    let opened = quell::incidents::actions::open(
        &mut tx,
        &quell::incidents::actions::Opening {
            number: None,
            title,
            severity,
            service: service.map_or(
                quell::incidents::actions::ServiceChoice::None,
                quell::incidents::actions::ServiceChoice::Named,
            ),
            summary,
            impact: "",
            started_at: Some(at),
            detected_at: Some(at),
            note: "",
            now,
            restricted_to: None,
            quiet: false,
        },
        &quell::audit::Actor::system("test"),
    )
    .await
    .unwrap();
    tx.commit().await.unwrap();
    opened.key.to_string()
}

/// A scribe whose browser runs two hours ahead of UTC enters a past note: the time typed is UTC,
/// "now (UTC)" fills UTC whatever the browser's zone, and the timeline shows what was typed.
#[sqlx::test]
async fn a_scribe_in_berlin_enters_a_past_note_in_utc(pool: PgPool) {
    account(
        &pool,
        "sam@example.com",
        "Sam Scribe",
        quell::auth::domain::UserRole::Responder,
    )
    .await;
    let key = open_incident(
        &pool,
        "Checkout slow",
        quell::domain::Severity::Sev2,
        None,
        "",
        120,
    )
    .await;
    let now = chrono::Utc::now();
    let base = serve(pool.clone()).await;
    let (_driver, driver_url) = chromedriver_in("Europe/Berlin").await;
    let c = browser(&driver_url).await;
    let run = async {
        sign_in_at(&c, &format!("{base}/incidents/{key}"), "sam@example.com").await;
        text_when(&c, ".incident-head h1", |t| t == "Checkout slow").await;
        // The browser's own clock is not UTC.
        let offset = c
            .execute("return new Date().getTimezoneOffset()", vec![])
            .await
            .unwrap();
        assert_ne!(offset.as_i64(), Some(0), "the browser runs in Berlin time");
        // "now (UTC)" fills the UTC time.
        click(&c, ".note-form .utc-now").await;
        let filled = c
            .find(Locator::Css(r#".note-form input[name="at"]"#))
            .await
            .unwrap()
            .prop("value")
            .await
            .unwrap()
            .unwrap();
        let filled = chrono::NaiveDateTime::parse_from_str(&filled, "%Y-%m-%d %H:%M")
            .unwrap()
            .and_utc();
        assert!(
            (filled - chrono::Utc::now()).num_minutes().abs() <= 2,
            "{filled} is UTC now"
        );
        // A past time typed as UTC lands on the timeline as typed.
        let past = now - chrono::Duration::minutes(47);
        let typed = past.format("%Y-%m-%d %H:%M").to_string();
        let input = c
            .find(Locator::Css(r#".note-form input[name="at"]"#))
            .await
            .unwrap();
        input.clear().await.unwrap();
        input.send_keys(&typed).await.unwrap();
        type_into(
            &c,
            r#".note-form textarea[name="body"]"#,
            "Rolled back the flag",
        )
        .await;
        click(&c, ".note-form button[type=submit]").await;
        let timeline = text_when(&c, "ol.timeline", |t| t.contains("Rolled back the flag")).await;
        let line = timeline
            .lines()
            .collect::<Vec<_>>()
            .windows(2)
            .find(|w| w[1].contains("Rolled back the flag"))
            .map(|w| w[0].to_owned())
            .unwrap_or_default();
        assert_eq!(line, past.format("%H:%M").to_string(), "{timeline}");
        assert_console_clean(&c, "this run", &[]).await;
    };
    let outcome = tokio::time::timeout(Duration::from_secs(60), run).await;
    c.close().await.ok();
    outcome.expect("the note was entered in time");
}

/// Two people on one incident, each in their own browser: what one writes, the other sees
/// without reloading; a claim shows live; a second claim on the same lead is questioned.
#[sqlx::test]
async fn two_browsers_on_one_incident_see_each_other_live(pool: PgPool) {
    use quell::auth::domain::UserRole::Responder;
    account(&pool, "ana@example.com", "Ana Ribeiro", Responder).await;
    account(&pool, "ben@example.com", "Ben Okafor", Responder).await;
    let key = open_incident(
        &pool,
        "Card authorizations time out",
        quell::domain::Severity::Sev2,
        None,
        "",
        5,
    )
    .await;
    let base = serve(pool.clone()).await;
    let (_driver, driver_url) = chromedriver().await;
    let ana = browser(&driver_url).await;
    let ben = browser(&driver_url).await;
    let page = format!("{base}/incidents/{key}");
    let run = async {
        sign_in_at(&ana, &page, "ana@example.com").await;
        sign_in_at(&ben, &page, "ben@example.com").await;
        for c in [&ana, &ben] {
            text_when(c, "#live-status", |t| t.starts_with("Live")).await;
        }
        // Ana writes a note; Ben's page shows it without a reload.
        type_into(
            &ana,
            ".note-form textarea[name=body]",
            "Stripe status page is green",
        )
        .await;
        click(&ana, ".note-form button[type=submit]").await;
        let written = std::time::Instant::now();
        let mut seen = None;
        while written.elapsed() < Duration::from_secs(10) {
            if let Ok(el) = ben.find(Locator::Css("#timeline")).await
                && el
                    .text()
                    .await
                    .unwrap_or_default()
                    .contains("Stripe status page is green")
            {
                seen = Some(written.elapsed());
                break;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        let seen = seen.expect("Ana's note reached Ben's page");
        eprintln!("Ana's note appeared on Ben's page {seen:?} after her click");
        assert!(seen < Duration::from_secs(2), "the note took {seen:?}");
        assert!(
            ben.current_url().await.unwrap().as_str().ends_with(&key),
            "no navigation on Ben's side"
        );

        // Ben claims a lead; Ana sees it under "Who is looking into what".
        type_into(
            &ben,
            ".claim-form input[name=subject]",
            "processor status page",
        )
        .await;
        click(&ben, ".claim-form button[type=submit]").await;
        text_when(&ana, "#claims", |t| {
            t.contains("Ben Okafor") && t.contains("processor status page")
        })
        .await;
        // Ana starts on the same lead in other words: she is told who is on it first.
        type_into(
            &ana,
            ".claim-form input[name=subject]",
            "Checking the processor's status pages",
        )
        .await;
        click(&ana, ".claim-form button[type=submit]").await;
        let asked = text_when(&ana, "main", |t| t.contains("Claim it as well")).await;
        assert!(asked.contains("Ben Okafor"), "{asked}");
        click(&ana, "main form button.primary").await;
        text_when(&ben, "#claims", |t| t.contains("Ana Ribeiro")).await;
        snapshot(&ben, "live-claims").await;
        assert_console_clean(&ana, "this run", &[]).await;
        assert_console_clean(&ben, "this run", &[]).await;
    };
    let outcome = tokio::time::timeout(Duration::from_secs(120), run).await;
    ana.close().await.ok();
    ben.close().await.ok();
    outcome.expect("the two browsers finished within two minutes");
}

/// Presses `key` on the page as a person would (to whatever has focus).
async fn press(c: &Client, key: char) {
    use fantoccini::actions::{InputSource, KeyAction, KeyActions};
    let keys = KeyActions::new("keyboard".into())
        .then(KeyAction::Down { value: key })
        .then(KeyAction::Up { value: key });
    c.perform_actions(keys).await.unwrap();
}

/// The incident page's shortcuts: `?` lists them, `n` goes to the note, `a` acknowledges —
/// and typing an `a` into a field acknowledges nothing.
#[sqlx::test]
async fn keyboard_shortcuts_work_and_never_fire_while_typing(pool: PgPool) {
    use quell::auth::domain::UserRole::Responder;
    account(&pool, "ana@example.com", "Ana Ribeiro", Responder).await;
    let key = open_incident(
        &pool,
        "Card authorizations time out",
        quell::domain::Severity::Sev2,
        None,
        "",
        5,
    )
    .await;
    let base = serve(pool.clone()).await;
    let (_driver, driver_url) = chromedriver().await;
    let c = browser(&driver_url).await;
    let run = async {
        sign_in_at(&c, &format!("{base}/incidents/{key}"), "ana@example.com").await;
        wait_status(&c, "triggered").await;
        text_when(&c, "[data-shortcuts-hint]", |t| {
            t.contains("keyboard shortcuts")
        })
        .await;
        press(&c, '?').await;
        let list = text_when(&c, "#shortcuts", |t| t.contains("Acknowledge")).await;
        assert!(list.contains("Write a note"), "{list}");
        press(&c, '\u{E00C}').await; // Escape closes the list
        assert!(
            !c.find(Locator::Css("#shortcuts"))
                .await
                .unwrap()
                .is_displayed()
                .await
                .unwrap()
        );
        // n: the note field, where an "a" is just a letter.
        press(&c, 'n').await;
        let active = c.active_element().await.unwrap();
        assert_eq!(active.attr("name").await.unwrap().as_deref(), Some("body"));
        for ch in "a plan".chars() {
            press(&c, ch).await;
        }
        let typed = c
            .find(Locator::Css(".note-form textarea"))
            .await
            .unwrap()
            .prop("value")
            .await
            .unwrap();
        assert_eq!(typed.as_deref(), Some("a plan"));
        tokio::time::sleep(Duration::from_millis(300)).await;
        let status = c
            .find(Locator::Css(".incident-head .status"))
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        assert_eq!(status, "triggered", "typing an a acknowledged nothing");
        // Out of the field, a acknowledges.
        press(&c, '\u{E00C}').await;
        press(&c, 'a').await;
        wait_status(&c, "acknowledged").await;
        assert_console_clean(&c, "this run", &[]).await;
    };
    let outcome = tokio::time::timeout(Duration::from_secs(90), run).await;
    c.close().await.ok();
    outcome.expect("the shortcuts run finished");
}

/// axe-core (installed by scripts/test into target/axe) on the pages people stare at during
/// and after an incident, in light mode at a laptop's width: no serious or critical finding.
#[sqlx::test]
async fn axe_finds_nothing_serious_on_the_incident_page_dashboard_and_postmortem(pool: PgPool) {
    let axe_path = std::env::var("QUELL_AXE").unwrap_or_else(|_| {
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/target/axe/node_modules/axe-core/axe.min.js"
        )
        .to_owned()
    });
    let axe = std::fs::read_to_string(&axe_path)
        .unwrap_or_else(|e| panic!("{axe_path}: {e} (scripts/test installs axe-core there)"));
    quell::demo::load(&pool).await.unwrap();
    account(
        &pool,
        "root@example.com",
        "Rui Admin",
        quell::auth::domain::UserRole::Admin,
    )
    .await;
    // An open incident with a claim and a bridge, so the live parts are on the page.
    let key = open_incident(
        &pool,
        "Card authorizations time out",
        quell::domain::Severity::Sev1,
        Some("payments-gateway"),
        "",
        5,
    )
    .await;
    {
        let actor = acting_as(&pool, "root@example.com").await;
        let change = quell::incidents::actions::Change::now(
            quell::incidents::domain::IncidentKey::parse(&key).unwrap(),
            &actor,
        );
        let bridge = quell::bridge::domain::Bridge::parse(
            Some("https://meet.example.com/inc"),
            Some("https://chat.example.com/inc"),
        )
        .unwrap();
        let mut tx = pool.begin().await.unwrap();
        quell::incidents::actions::set_bridge(&mut tx, &change, &bridge)
            .await
            .unwrap();
        quell::incidents::actions::claim(&mut tx, &change, "processor status page", false, 30)
            .await
            .unwrap();
        tx.commit().await.unwrap();
    }
    let base = serve(pool.clone()).await;
    let (_driver, driver_url) = chromedriver().await;
    let c = browser(&driver_url).await;
    let run = async {
        sign_in_at(&c, &format!("{base}/"), "root@example.com").await;
        text_when(&c, "main h1", |t| t == "Dashboard").await;
        // The dashboard shows the open incident and draws its trends.
        text_when(&c, "#dash-open", |t| {
            t.contains(&key) && t.contains("not acknowledged")
        })
        .await;
        let bars = c
            .find_all(Locator::Css("#dash-trends svg.chart rect"))
            .await
            .unwrap();
        assert!(!bars.is_empty(), "the trend charts have bars");
        // The live parts axe is to look at: the claim and the bridge.
        c.goto(&format!("{base}/incidents/{key}")).await.unwrap();
        text_when(&c, "#claims", |t| t.contains("processor status page")).await;
        text_when(&c, "#bridge", |t| t.contains("Join the call")).await;
        let mut findings = Vec::new();
        for page in [
            "/",
            &format!("/incidents/{key}"),
            "/incidents/INC-1187",
            "/incidents/INC-1187/postmortem",
            "/incidents",
        ] {
            c.goto(&format!("{base}{page}")).await.unwrap();
            text_when(&c, "main", |_| true).await;
            c.execute(&axe, vec![]).await.unwrap();
            let result = c
                .execute_async(
                    r#"const done = arguments[arguments.length - 1];
                       axe.run(document, { resultTypes: ["violations"] })
                          .then(r => done(r.violations.map(v => ({ id: v.id, impact: v.impact, help: v.help,
                              nodes: v.nodes.slice(0, 3).map(n => n.target.join(" ")) }))))
                          .catch(e => done([{ id: "axe-error", impact: "critical", help: String(e), nodes: [] }]));"#,
                    vec![],
                )
                .await
                .unwrap();
            for v in result.as_array().unwrap() {
                let impact = v["impact"].as_str().unwrap_or("");
                eprintln!(
                    "axe {page}: {impact} {} — {} {}",
                    v["id"], v["help"], v["nodes"]
                );
                if matches!(impact, "serious" | "critical") {
                    findings.push(format!(
                        "{page}: {impact} {}: {} at {}",
                        v["id"], v["help"], v["nodes"]
                    ));
                }
            }
        }
        assert!(findings.is_empty(), "axe found:\n{}", findings.join("\n"));
        assert_console_clean(&c, "this run", &[]).await;
    };
    let outcome = tokio::time::timeout(Duration::from_secs(120), run).await;
    c.close().await.ok();
    outcome.expect("the accessibility run finished");
}
