//! Investigation challenges: grading agrees with the labelled hypotheses; the API never shows
//! the answer or the rubric before an attempt ends; hints are charged once, never below zero;
//! giving up shows the answer.

use axum::http::StatusCode;
use serde_json::{Value, json};
use sqlx::PgPool;

use crate::common::TestApp;
use quell::challenges::domain::grade;

/// Whether a score agrees with a teacher's label: a right answer solves the challenge; a partial
/// one earns something short of solving; a vague or wrong one earns less than 0.2 (a clue the
/// evidence shows anyway, no more).
fn agrees(label: &str, score: f64) -> bool {
    use quell::challenges::domain::SOLVED_AT;
    match label {
        "right" => score >= SOLVED_AT,
        "partial" => score > 0.0 && score < SOLVED_AT,
        _ => score < 0.2,
    }
}

/// A labelled set, graded with its rubric: (label, hypothesis, score).
fn graded(set: &str, rubric: &[quell::challenges::domain::Concept]) -> Vec<(String, String, f64)> {
    set.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let (label, text) = l.split_once('\t').expect("label<TAB>hypothesis");
            (label.to_owned(), text.to_owned(), grade(text, rubric).score)
        })
        .collect()
}

/// The labelled sets of each demo challenge: the ones written beside the rubrics
/// (tests/fixtures/grading), the ones written blind to them by someone who only read the
/// reference documents (tests/fixtures/grading/blind-*), and, where this checkout sits beside
/// them, the outside sets a teacher labelled (`QUELL_GRADING_SETS`, by default
/// `../shared/grading`), which measure the grader and are never copied into a rubric.
fn labelled_sets() -> Vec<(String, String, Vec<quell::challenges::domain::Concept>)> {
    let root = env!("CARGO_MANIFEST_DIR");
    let outside =
        std::env::var("QUELL_GRADING_SETS").unwrap_or_else(|_| format!("{root}/../shared/grading"));
    let mut sets = Vec::new();
    for (name, rubric) in [
        ("orbitpay", quell::demo::challenges::orbitpay_rubric()),
        ("inc-1187", quell::demo::challenges::inc_1187_rubric()),
    ] {
        for (kind, path) in [
            ("own", format!("{root}/tests/fixtures/grading/{name}.tsv")),
            (
                "blind",
                format!("{root}/tests/fixtures/grading/blind-{name}.tsv"),
            ),
            (
                "hostile",
                format!("{root}/tests/fixtures/grading/hostile-{name}.tsv"),
            ),
            (
                "fresh",
                format!("{root}/tests/fixtures/grading/fresh-{name}.tsv"),
            ),
            ("outside", format!("{outside}/{name}.tsv")),
        ] {
            match std::fs::read_to_string(&path) {
                Ok(text) => sets.push((format!("{kind} {name}"), text, rubric.clone())),
                Err(_) if kind == "outside" => println!("(no outside set at {path})"),
                Err(_) if kind == "hostile" || kind == "fresh" => {}
                Err(e) => panic!("{path}: {e}"),
            }
        }
    }
    // Sets exported from a challenge's review queue carry their rubric.
    for path in std::env::var("QUELL_GRADING_FILES")
        .unwrap_or_default()
        .split(':')
        .filter(|p| !p.is_empty())
    {
        let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
        let rubric = rubric_of(&text).unwrap_or_else(|| panic!("{path}: no `# rubric` line"));
        sets.push((format!("exported {path}"), text, rubric));
    }
    sets
}

/// The rubric an exported labelled set carries on its `# rubric<TAB>[…]` line.
fn rubric_of(tsv: &str) -> Option<Vec<quell::challenges::domain::Concept>> {
    tsv.lines()
        .find_map(|l| l.strip_prefix("# rubric\t"))
        .and_then(|json| serde_json::from_str(json).ok())
}

/// Agreement of the grader with the labels, set by set: every line labelled right solves in the
/// outside sets; no line labelled wrong or vague reaches 0.4 in any; agreement is at least 0.96
/// (48 of 50) on the outside sets and 0.9 on the others. `scripts/bench-grading`
/// prints them line by line.
#[test]
fn grading_agrees_with_the_labelled_hypotheses() {
    for (name, set, rubric) in labelled_sets() {
        let graded = graded(&set, &rubric);
        assert!(
            graded.len() >= 15,
            "{name}: at least 15 labelled hypotheses"
        );
        let mut agree = 0;
        for (label, text, score) in &graded {
            let ok = agrees(label, *score);
            agree += usize::from(ok);
            println!(
                "{} {name:17} {label:8} {score:.2}  {text}",
                if ok { " " } else { "✗" }
            );
        }
        let agreement = agree as f64 / graded.len() as f64;
        println!(
            "agreement {name}: {agree}/{} = {agreement:.2}",
            graded.len()
        );
        // The hostile set was written to fool this grader with the rubric in hand: its bar is
        // lower, and two of its wrong lines still reach 0.4 (README, "Limits").
        let (bar, fooled) = match name.split(' ').next() {
            Some("outside") => (0.96, 0),
            Some("hostile") => (0.75, 2),
            // Written blind to everything here and only measured since: one wrong line (the
            // change named as raising the limit) still reaches 0.4 (README, "Limits").
            Some("fresh") => (0.85, 1),
            _ => (0.9, 0),
        };
        assert!(agreement >= bar, "{name}: agreement {agreement:.2} < {bar}");
        let over: Vec<&String> = graded
            .iter()
            .filter(|(label, _, score)| (label == "wrong" || label == "vague") && *score >= 0.4)
            .map(|(_, text, _)| text)
            .collect();
        assert!(
            over.len() <= fooled,
            "{name}: vague or wrong lines at 0.4 or more: {over:#?}"
        );
        for (label, text, score) in &graded {
            match label.as_str() {
                "right" if name.starts_with("outside") => assert!(
                    *score >= quell::challenges::domain::SOLVED_AT,
                    "{name}: a right answer solves: {text} ({score})"
                ),
                _ => {}
            }
        }
    }
}

async fn orbitpay(app: &TestApp) -> i64 {
    quell::demo::load(&app.pool).await.unwrap();
    let list = app.get("/api/v1/challenges").await;
    assert_eq!(list.status, StatusCode::OK, "{}", list.text);
    list.json()["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["title"] == quell::demo::challenges::ORBITPAY_TITLE)
        .expect("the OrbitPay challenge is published")["id"]
        .as_i64()
        .unwrap()
}

/// What only an ended attempt may show.
fn leaks(text: &str) -> Vec<&'static str> {
    [
        "jitter",
        "thundering",
        "rubric",
        "synchronised retry",
        "INC-184",
        "answer_cause",
        "\"cause\"",
    ]
    .into_iter()
    .filter(|s| text.contains(s))
    .collect()
}

#[sqlx::test]
async fn orbitpay_played_through_the_api_shows_the_answer_only_at_the_end(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let id = orbitpay(&app).await;
    let learner = app.account("learner@example.com", "responder").await;
    let call = |method: axum::http::Method, path: String, body: Option<Value>| {
        let app = &app;
        let learner = &learner;
        async move {
            let body = body.map(|b| b.to_string());
            app.call_as(learner, method, &path, &[], body.as_deref())
                .await
        }
    };
    use axum::http::Method;
    let c = call(Method::GET, format!("/api/v1/challenges/{id}"), None).await;
    assert_eq!(c.status, StatusCode::OK);
    assert!(leaks(&c.text).is_empty(), "{:?}", leaks(&c.text));
    assert_eq!(c.json()["hints"].as_array().unwrap().len(), 3);
    // The code, the chat and the metric responders attached, and their two notes before
    // detection.
    let view = c.json();
    let titles: Vec<&str> = view["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["title"].as_str().unwrap())
        .collect();
    println!("{titles:?}");
    assert_eq!(titles.len(), 6, "{titles:?}");
    // Learners cannot read the source.
    let src = call(Method::GET, format!("/api/v1/challenges/{id}/source"), None).await;
    assert_eq!(src.status, StatusCode::FORBIDDEN);
    let started = call(
        Method::POST,
        format!("/api/v1/challenges/{id}/attempts"),
        None,
    )
    .await;
    assert_eq!(started.status, StatusCode::CREATED, "{}", started.text);
    let attempt = started.json()["id"].as_i64().unwrap();
    let again = call(
        Method::POST,
        format!("/api/v1/challenges/{id}/attempts"),
        None,
    )
    .await;
    assert_eq!(
        (again.status, again.json()["id"].as_i64()),
        (StatusCode::OK, Some(attempt))
    );
    let base = format!("/api/v1/challenges/{id}/attempts/{attempt}");
    // Bad hypotheses change nothing.
    for text in ["   ", &"x".repeat(2001)] {
        let r = call(
            Method::POST,
            format!("{base}/hypotheses"),
            Some(json!({"text": text})),
        )
        .await;
        assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
        assert!(r.text.contains("text"));
    }
    let vague = call(
        Method::POST,
        format!("{base}/hypotheses"),
        Some(json!({"text": "Something is wrong with the payment system"})),
    )
    .await;
    assert_eq!(vague.status, StatusCode::CREATED, "{}", vague.text);
    assert!(vague.json()["score"].as_f64().unwrap() <= 0.2);
    assert!(leaks(&vague.text).is_empty(), "{}", vague.text);
    let partial = call(
        Method::POST,
        format!("{base}/hypotheses"),
        Some(json!({"text": "The card processor had a blip at 22:10"})),
    )
    .await;
    let p = partial.json();
    assert_eq!(p["covered"], json!(["the trigger"]));
    assert!(
        p["feedback"]
            .as_str()
            .unwrap()
            .starts_with("You found the trigger. Next, what made it worse")
    );
    assert_eq!(p["solved"], false);
    assert!(leaks(&partial.text).is_empty(), "{}", partial.text);
    // A hint costs its price once.
    let before = call(Method::GET, "/api/v1/me/credits".into(), None)
        .await
        .json()["balance"]
        .as_i64()
        .unwrap();
    let hint = call(Method::POST, format!("{base}/hints"), None).await;
    assert_eq!(hint.status, StatusCode::CREATED, "{}", hint.text);
    assert_eq!(hint.json()["balance"].as_i64().unwrap(), before - 5);
    let view = call(Method::GET, base.clone(), None).await;
    assert!(view.json()["answer"].is_null() && view.json()["times"].is_null());
    assert!(leaks(&view.text).is_empty(), "{}", view.text);
    // A right answer in other words solves it and shows the answer.
    let right = call(
        Method::POST,
        format!("{base}/hypotheses"),
        Some(json!({"text": "After the processor hiccup every failed payment was retried at the same moment because the backoff has no randomness, so the workers got flooded. Add jitter."})),
    )
    .await;
    let r = right.json();
    assert!(r["score"].as_f64().unwrap() >= 0.6, "{r}");
    assert_eq!(r["solved"], true);
    assert!(r["answer"]["fix"].as_str().unwrap().contains("jitter"));
    let view = call(Method::GET, base.clone(), None).await.json();
    assert_eq!(view["outcome"], "solved");
    assert_eq!(view["incident"], "INC-184");
    assert_eq!(view["times"]["team_detect_secs"], 240);
    assert_eq!(view["times"]["team_mitigate_secs"], 1800);
    assert_eq!(view["hints"][0]["position"], 0);
    // Ended: no more hypotheses; the leaderboard lists it.
    let late = call(
        Method::POST,
        format!("{base}/hypotheses"),
        Some(json!({"text": "jitter"})),
    )
    .await;
    assert_eq!(late.status, StatusCode::CONFLICT);
    let board = call(
        Method::GET,
        format!("/api/v1/challenges/{id}/leaderboard"),
        None,
    )
    .await
    .json();
    assert_eq!(board["items"][0]["outcome"], "solved");
    assert_eq!(board["items"][0]["hints_used"], 1);
    // Someone else's attempt is not theirs to read.
    let other = app.account("other@example.com", "responder").await;
    let r = app.call_as(&other, Method::GET, &base, &[], None).await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
    // Viewers do not play.
    let viewer = app.account("viewer@example.com", "viewer").await;
    let r = app
        .call_as(
            &viewer,
            Method::POST,
            &format!("/api/v1/challenges/{id}/attempts"),
            &[],
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);
}

#[sqlx::test]
async fn hints_are_charged_once_under_concurrency_and_never_below_zero(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let id = orbitpay(&app).await;
    // A starting grant of 12 pays for the first hint (5), not the second (10).
    let r = app
        .call(
            axum::http::Method::PUT,
            "/api/v1/credits/settings",
            &[],
            Some(&json!({"starting_grant": 12}).to_string()),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let learner = app.account("learner@example.com", "responder").await;
    use axum::http::Method;
    let started = app
        .call_as(
            &learner,
            Method::POST,
            &format!("/api/v1/challenges/{id}/attempts"),
            &[],
            None,
        )
        .await;
    let attempt = started.json()["id"].as_i64().unwrap();
    let path = format!("/api/v1/challenges/{id}/attempts/{attempt}/hints");
    let requests = (0..6).map(|_| app.call_as(&learner, Method::POST, &path, &[], None));
    let answers = futures_util::future::join_all(requests).await;
    let given: Vec<&axum::http::StatusCode> = answers.iter().map(|r| &r.status).collect();
    assert_eq!(
        given.iter().filter(|s| ***s == StatusCode::CREATED).count(),
        1,
        "one hint paid for: {given:?}"
    );
    assert!(
        given
            .iter()
            .all(|s| **s == StatusCode::CREATED || **s == StatusCode::CONFLICT)
    );
    let credits = app
        .call_as(&learner, Method::GET, "/api/v1/me/credits", &[], None)
        .await
        .json();
    assert_eq!(credits["balance"], 7);
    let amounts: Vec<i64> = credits["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["amount"].as_i64().unwrap())
        .collect();
    assert_eq!(amounts, [-5, 12], "the ledger: the grant, then one charge");
    // The database itself refuses a negative balance.
    let negative = sqlx::query("update credit_balances set balance = -1")
        .execute(&app.pool)
        .await;
    assert!(negative.is_err());
}

#[sqlx::test]
async fn giving_up_shows_jitter_as_the_fix_and_the_editor_can_read_the_source(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let id = orbitpay(&app).await;
    use axum::http::Method;
    // The challenge as it stands, which the editor will try to write back mid-attempt.
    let put_body = app
        .get(&format!("/api/v1/challenges/{id}/source"))
        .await
        .text;
    let started = app
        .post(&format!("/api/v1/challenges/{id}/attempts"), json!({}))
        .await;
    let attempt = started.json()["id"].as_i64().unwrap();
    // An editor playing cannot peek at the source.
    let src = app.get(&format!("/api/v1/challenges/{id}/source")).await;
    assert_eq!(src.status, StatusCode::CONFLICT);
    // Nor through the leak guard's reasons or a refused publish, nor change it, even with
    // `If-Match: *`.
    let leaks = app.get(&format!("/api/v1/challenges/{id}/leaks")).await;
    assert_eq!(leaks.status, StatusCode::CONFLICT, "{}", leaks.text);
    assert!(!leaks.text.contains("made it worse"), "{}", leaks.text);
    let publish = app
        .post(&format!("/api/v1/challenges/{id}/publish"), json!({}))
        .await;
    assert_eq!(publish.status, StatusCode::CONFLICT, "{}", publish.text);
    assert!(!publish.text.contains("made it worse"), "{}", publish.text);
    let put = app
        .call(
            Method::PUT,
            &format!("/api/v1/challenges/{id}"),
            &[("if-match", "*")],
            Some(&put_body),
        )
        .await;
    assert_eq!(put.status, StatusCode::CONFLICT, "{}", put.text);
    let r = app
        .call(
            Method::POST,
            &format!("/api/v1/challenges/{id}/attempts/{attempt}/give-up"),
            &[],
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let v = r.json();
    assert_eq!(v["outcome"], "gave_up");
    assert!(
        v["answer"]["fix"]
            .as_str()
            .unwrap()
            .to_lowercase()
            .contains("full jitter")
    );
    assert!(v["times"]["learner_secs"].as_i64().unwrap() >= 0);
    let src = app.get(&format!("/api/v1/challenges/{id}/source")).await;
    assert_eq!(src.status, StatusCode::OK, "{}", src.text);
    let s = src.json();
    assert_eq!(s["rubric"].as_array().unwrap().len(), 5);
    assert!(
        !s["evidence"]
            .to_string()
            .contains("Full jitter, added after PAY-184"),
        "the leaking comment is not in the evidence"
    );
    // A bad draft is refused naming the field and stores nothing.
    let mut bad = s.clone();
    bad["evidence"][0]["source"]["path"] = Value::Null;
    bad["title"] = json!("Another");
    let r = app.post("/api/v1/challenges", bad).await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text);
    assert!(r.text.contains("evidence[0].source.path"), "{}", r.text);
    let list = app.get("/api/v1/challenges").await.json();
    assert_eq!(
        list["items"].as_array().unwrap().len(),
        2,
        "the demo's two, nothing more"
    );
}

#[sqlx::test]
async fn orbitpay_played_in_the_browser_pages(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let id = orbitpay(&app).await;
    let learner = app.account("learner@example.com", "responder").await;
    let page = |path: String| {
        let app = &app;
        let learner = &learner;
        async move {
            app.call_as(learner, axum::http::Method::GET, &path, &[], None)
                .await
        }
    };
    let list = page("/challenges".into()).await;
    assert!(
        list.text.contains(quell::demo::challenges::ORBITPAY_TITLE)
            && list.text.contains("Your credit: 100")
    );
    let show = page(format!("/challenges/{id}")).await;
    assert_eq!(show.status, StatusCode::OK);
    assert!(show.text.contains("It is 22:14 UTC") && show.text.contains("backoffFor"));
    assert!(leaks(&show.text).is_empty(), "{:?}", leaks(&show.text));
    let r = app
        .form_as(&learner, &format!("/challenges/{id}/attempts"), &[])
        .await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
    let attempt = sqlx::query_scalar::<_, i64>("select id from attempts")
        .fetch_one(&app.pool)
        .await
        .unwrap();
    let base = format!("/challenges/{id}/attempts/{attempt}");
    let r = app
        .form_as(&learner, &format!("{base}/hypotheses"), &[("text", " ")])
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
    let r = app
        .form_as(
            &learner,
            &format!("{base}/hypotheses"),
            &[("text", "The processor blip at 22:10")],
        )
        .await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
    let r = app.form_as(&learner, &format!("{base}/hints"), &[]).await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
    let show = page(format!("/challenges/{id}")).await;
    assert!(show.text.contains("You found the trigger") && show.text.contains("Hint 1"));
    assert!(show.text.contains("<strong id=\"balance\">95</strong>"));
    assert!(leaks(&show.text).is_empty(), "{:?}", leaks(&show.text));
    let r = app.form_as(&learner, &format!("{base}/give-up"), &[]).await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
    let show = page(format!("/challenges/{id}")).await;
    assert!(show.text.contains("The answer") && show.text.contains("full jitter"));
    assert!(
        show.text
            .contains("the team detected it 4 min after it started"),
        "{}",
        show.text
    );
    assert!(show.text.contains("Leaderboard"));
}

/// The reference document's own comment, "Full jitter, added after PAY-184 …", is a leak: the
/// guard flags it (and a chat line written after detection), and publishing refuses.
#[sqlx::test]
async fn the_leak_guard_flags_the_orbitpay_comment_and_publishing_refuses(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let id = orbitpay(&app).await;
    let clean = app.get(&format!("/api/v1/challenges/{id}/leaks")).await;
    assert_eq!(clean.status, StatusCode::OK, "{}", clean.text);
    assert_eq!(
        clean.json()["items"],
        json!([]),
        "the demo's evidence is as it was"
    );
    let mut draft = app
        .get(&format!("/api/v1/challenges/{id}/source"))
        .await
        .json();
    draft["title"] = json!("OrbitPay, as the document shows it");
    draft["evidence"][1]["text"] = json!(
        "const BASE_MS = 250;\nconst MAX_MS = 30_000;\n// Full jitter, added after PAY-184. Before that this returned BASE_MS * 2 ** n\n// with no randomisation, so every attempt in a batch retried in lockstep.\nexport function backoffFor(attemptCount: number) {\n  const ceiling = Math.min(MAX_MS, BASE_MS * 2 ** attemptCount);\n  return Math.random() * ceiling;\n}"
    );
    draft["evidence"][2]["source"]["at"] = json!("2026-08-12T22:20:00Z");
    let r = app.post("/api/v1/challenges", draft).await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let leaky = r.json()["id"].as_i64().unwrap();
    let flags = app
        .get(&format!("/api/v1/challenges/{leaky}/leaks"))
        .await
        .json();
    let reasons: Vec<(i64, String)> = flags["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            (
                l["evidence"].as_i64().unwrap(),
                l["reason"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert!(
        reasons.contains(&(
            1,
            "it says what made it worse, which is part of the answer".into()
        )),
        "{reasons:?}"
    );
    assert!(
        reasons.contains(&(1, "it says the fix, which is part of the answer".into())),
        "{reasons:?}"
    );
    assert!(
        reasons
            .iter()
            .any(|(n, r)| *n == 2 && r.contains("after the incident was detected")),
        "{reasons:?}"
    );
    let r = app
        .post_empty(&format!("/api/v1/challenges/{leaky}/publish"))
        .await;
    assert_eq!(r.status, StatusCode::CONFLICT, "{}", r.text);
    assert!(r.text.contains("evidence[1]"), "{}", r.text);
    // Still a draft: learners do not see it.
    let learner = app.account("learner@example.com", "responder").await;
    let r = app
        .call_as(
            &learner,
            axum::http::Method::GET,
            &format!("/api/v1/challenges/{leaky}"),
            &[],
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
}

/// Prints how far a generated challenge's proposed rubric, unedited, agrees with the labelled
/// sets of a demo challenge (every disagreement with the feedback it gets), and fails under 0.85
/// on any set but the hostile one, which was written to fool the editor's rubric with it in hand.
fn generated_agrees(source: &Value, challenge: &str) {
    let proposed: Vec<quell::challenges::domain::Concept> =
        serde_json::from_value(source["rubric"].clone()).unwrap();
    println!("proposed: {}", serde_json::to_string(&proposed).unwrap());
    for (name, set, _) in labelled_sets()
        .into_iter()
        .filter(|(name, _, _)| name.ends_with(challenge))
    {
        let graded = graded(&set, &proposed);
        let agree = graded
            .iter()
            .filter(|(label, _, score)| agrees(label, *score))
            .count();
        for (label, text, score) in graded.iter().filter(|(l, _, s)| !agrees(l, *s)) {
            let why = grade(text, &proposed).feedback;
            println!("✗ {name:17} {label:8} {score:.2}  {text}\n    ({why})");
        }
        let agreement = agree as f64 / graded.len() as f64;
        println!(
            "generated rubric on {name}: {agree}/{} = {agreement:.2}",
            graded.len(),
        );
        assert!(
            name.starts_with("hostile") || agreement >= 0.85,
            "{name}: {agreement:.2} < 0.85"
        );
    }
}

/// One call drafts a challenge from INC-1187's published postmortem: the scenario stops at
/// detection and never names the incident; the cause, the hints and the rubric stay hidden from
/// learners; an incident without a published postmortem is refused.
#[sqlx::test]
async fn a_challenge_is_generated_from_inc_1187s_published_postmortem(pool: PgPool) {
    let app = TestApp::new(pool).await;
    quell::demo::load(&app.pool).await.unwrap();
    let (id, src) = app.generated_challenge("INC-1187").await;
    let scenario = src["scenario"].as_str().unwrap();
    println!("scenario: {scenario}");
    assert!(
        scenario.starts_with("It is 16:07 UTC on 2026-09-17."),
        "{scenario}"
    );
    assert!(!scenario.contains("INC-1187"), "{scenario}");
    assert!(
        src["answer"]["cause"]
            .as_str()
            .unwrap()
            .contains("copied from another client's settings")
    );
    assert!(
        src["answer"]["fix"]
            .as_str()
            .unwrap()
            .contains("Little's law"),
        "{}",
        src["answer"]["fix"]
    );
    let costs: Vec<i64> = src["hints"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["cost"].as_i64().unwrap())
        .collect();
    assert!(
        costs.len() >= 3 && costs.windows(2).all(|w| w[0] < w[1]),
        "cheapest first: {costs:?}"
    );
    // The hints that said the answer were left out: the leak guard flags none.
    let flags = app
        .get(&format!("/api/v1/challenges/{id}/leaks"))
        .await
        .json();
    assert!(
        flags["items"]
            .as_array()
            .unwrap()
            .iter()
            .all(|l| l["evidence"].is_number()),
        "{flags}"
    );
    assert!(!src["rubric"].as_array().unwrap().is_empty());
    // The proposed rubric, unedited, agrees with INC-1187's labelled sets at 0.85 or more.
    generated_agrees(&src, "inc-1187");
    // What a learner would see: no cause, no incident key.
    let view = app.get(&format!("/api/v1/challenges/{id}")).await;
    for secret in [
        "copied from another",
        "144 concurrent",
        "INC-1187",
        "Little's law",
        "\"rubric\"",
    ] {
        assert!(!view.text.contains(secret), "{secret} shows before the end");
    }
    assert!(
        view.text.contains("consolidate HTTP client settings"),
        "the suspect change is evidence"
    );
    // No published postmortem, no challenge.
    let other = app
        .incident(json!({"title": "Fresh", "severity": "Sev3"}))
        .await;
    let r = app
        .post("/api/v1/challenges/generate", json!({"incident": other}))
        .await;
    assert_eq!(r.status, StatusCode::CONFLICT, "{}", r.text);
    let r = app
        .post(
            "/api/v1/challenges/generate",
            json!({"incident": "PAY-184"}),
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
}

/// The OrbitPay challenge comes from PAY-184 itself, as the reference tells it: generated from
/// its published postmortem and the evidence responders attached, the scenario says what the
/// reference's does (22:14, the merchants, p99 from 240 ms to 9 s, the processor's blip, no
/// deploy that day, the system), and the proposed rubric's agreement with OrbitPay's labelled
/// sets is printed. The demo's published challenge is that draft refined by an editor: its
/// rubric and hints rewritten, saved as an edit.
#[sqlx::test]
async fn the_orbitpay_challenge_is_generated_from_pay_184(pool: PgPool) {
    let app = TestApp::new(pool).await;
    quell::demo::load(&app.pool).await.unwrap();
    let (_, src) = app.generated_challenge("INC-184").await;
    let scenario = src["scenario"].as_str().unwrap();
    println!("scenario: {scenario}");
    for said in [
        "It is 22:14 UTC on 2026-08-12.",
        "three merchants report that checkout hangs and then fails",
        "degradation starting at 22:10 UTC, recovered by 22:11:30",
        "from 240 ms to 9 s",
        "No deploy or configuration change to payments-worker",
        "failed ones are scheduled for retry in a Redis sorted set",
        "checkout-api depends on it",
    ] {
        assert!(scenario.contains(said), "{said}: {scenario}");
    }
    for secret in ["jitter", "lockstep", "deterministic", "INC-184", "PAY-184"] {
        assert!(!scenario.contains(secret), "{secret}: {scenario}");
    }
    assert!(
        src["answer"]["fix"]
            .as_str()
            .unwrap()
            .contains("full jitter")
    );
    generated_agrees(&src, "orbitpay");
    // The demo's challenge: the same generation, then an editor's edit.
    let demo = orbitpay(&app).await;
    let published = app
        .get(&format!("/api/v1/challenges/{demo}/source"))
        .await
        .json();
    assert_eq!(published["incident"], "INC-184");
    assert!(
        published["scenario"]
            .as_str()
            .unwrap()
            .starts_with("It is 22:14 UTC on 2026-08-12.")
    );
    let edits: i64 = sqlx::query_scalar(
        "select count(*) from audit_log where action = 'challenge.update' and target = $1",
    )
    .bind(demo.to_string())
    .fetch_one(&app.pool)
    .await
    .unwrap();
    assert_eq!(edits, 1, "the editor's refinement is an edit");
}

/// The demo's INC-1187 challenge, generated and refined: published, with the connection cap
/// hidden from learners until the end (the leak guard took out the line that set it).
#[sqlx::test]
async fn the_demo_publishes_the_inc_1187_challenge_with_the_cap_hidden(pool: PgPool) {
    let app = TestApp::new(pool).await;
    quell::demo::load(&app.pool).await.unwrap();
    quell::demo::load(&app.pool).await.unwrap();
    let list = app.get("/api/v1/challenges").await.json();
    let items = list["items"].as_array().unwrap();
    assert_eq!(items.len(), 2, "once each: {list}");
    let c = items
        .iter()
        .find(|c| c["title"] == quell::demo::challenges::INC_1187_TITLE)
        .unwrap();
    assert_eq!(c["status"], "published");
    let id = c["id"].as_i64().unwrap();
    let learner = app.account("learner@example.com", "responder").await;
    let view = app
        .call_as(
            &learner,
            axum::http::Method::GET,
            &format!("/api/v1/challenges/{id}"),
            &[],
            None,
        )
        .await;
    for secret in [
        "MaxConnectionsPerServer",
        "copied",
        "144",
        "INC-1187",
        "Little",
    ] {
        assert!(
            !view.text.contains(secret),
            "{secret} shows before the end: {}",
            view.text
        );
    }
    assert_eq!(
        app.get(&format!("/api/v1/challenges/{id}/leaks"))
            .await
            .json()["items"],
        json!([])
    );
    let attempt = app
        .call_as(
            &learner,
            axum::http::Method::POST,
            &format!("/api/v1/challenges/{id}/attempts"),
            &[],
            None,
        )
        .await
        .json()["id"]
        .as_i64()
        .unwrap();
    let r = app
        .call_as(
            &learner,
            axum::http::Method::POST,
            &format!("/api/v1/challenges/{id}/attempts/{attempt}/give-up"),
            &[],
            None,
        )
        .await;
    assert!(
        r.json()["answer"]["cause"]
            .as_str()
            .unwrap()
            .contains("copied from another client's settings")
    );
    assert_eq!(r.json()["times"]["team_detect_secs"], 300);
}

/// An editor in the browser: one click drafts a challenge from INC-1187's published postmortem;
/// the editor shows what the leak guard flags beside each item and refuses to publish while any
/// is; dropping the flagged items and rewording one, then publishing, works; a bad rubric is
/// named; the editor is closed to its editor while they play it.
#[sqlx::test]
async fn an_editor_drafts_refines_and_publishes_a_challenge_in_the_browser(pool: PgPool) {
    let app = TestApp::new(pool).await;
    quell::demo::load(&app.pool).await.unwrap();
    let manager = app.account("manager@example.com", "manager").await;
    // A responder attached the chat from after detection too; the leak guard will flag it.
    let r = app
        .post(
            "/api/v1/incidents/INC-1187/evidence",
            json!({"kind": "chat", "title": "Later that afternoon", "text": "raised the cap to 50",
                   "source": {"channel": "#payments", "author": "ana", "at": "2026-09-17T17:30:00Z"}}),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let pm = app
        .call_as(
            &manager,
            axum::http::Method::GET,
            "/incidents/INC-1187/postmortem",
            &[],
            None,
        )
        .await;
    assert!(pm.text.contains("Build a training challenge"));
    let r = app
        .form_as(
            &manager,
            "/challenges/generate",
            &[("incident", "INC-1187")],
        )
        .await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
    let editor = r.header("location").unwrap().to_owned();
    let id: i64 = editor
        .trim_start_matches("/challenges/")
        .split('/')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let edit = format!("/challenges/{id}/edit");
    let page = app
        .call_as(&manager, axum::http::Method::GET, &edit, &[], None)
        .await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.text);
    let leaks = app
        .get(&format!("/api/v1/challenges/{id}/leaks"))
        .await
        .json();
    let mut flagged: Vec<i64> = leaks["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|l| l["evidence"].as_i64())
        .collect();
    flagged.dedup();
    assert_eq!(flagged, [0], "the late chat is flagged");
    assert!(
        page.text.contains("Flagged: "),
        "flags sit beside their items"
    );
    assert!(
        page.text.contains("copied from another client"),
        "the editor sees the answer"
    );

    // Publishing waits for the flags.
    let r = app
        .form_as(&manager, &format!("/challenges/{id}/publish"), &[])
        .await;
    assert_eq!(r.status, StatusCode::CONFLICT);
    assert!(r.text.contains("The leak guard flags"), "{}", r.text);

    // The form as the page filled it, with the flagged items dropped and one item reworded.
    let src = app
        .get(&format!("/api/v1/challenges/{id}/source"))
        .await
        .json();
    let hints: Vec<String> = src["hints"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| format!("{} | {}", h["cost"], h["text"].as_str().unwrap()))
        .collect();
    let hints = hints.join("\n");
    let rubric = src["rubric"].to_string();
    let version = app.get(&format!("/api/v1/challenges/{id}/source")).await;
    let version = version
        .header("etag")
        .unwrap()
        .trim_matches('"')
        .trim_start_matches('v')
        .to_owned();
    let keep = (0..src["evidence"].as_array().unwrap().len() as i64)
        .find(|n| !flagged.contains(n))
        .unwrap();
    let mut fields: Vec<(String, String)> = vec![
        ("version".into(), version),
        ("title".into(), "Payments slow after lunch".into()),
        ("scenario".into(), src["scenario"].as_str().unwrap().into()),
        (
            "cause".into(),
            src["answer"]["cause"].as_str().unwrap().into(),
        ),
        ("fix".into(), src["answer"]["fix"].as_str().unwrap().into()),
        (
            "explanation".into(),
            src["answer"]["explanation"].as_str().unwrap().into(),
        ),
        ("hints".into(), hints),
        ("rubric".into(), "not json".into()),
        (format!("evidence.{keep}.title"), "Reworded title".into()),
    ];
    fields.extend(flagged.iter().map(|n| (format!("drop.{n}"), "on".into())));
    let post = async |f: &[(String, String)]| {
        let pairs: Vec<(&str, &str)> = f.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        app.form_as(&manager, &edit, &pairs).await
    };
    let r = post(&fields).await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(r.text.contains("<strong>Rubric</strong>"), "{}", r.text);
    fields[7].1 = rubric;
    let r = post(&fields).await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
    let after = app
        .get(&format!("/api/v1/challenges/{id}/source"))
        .await
        .json();
    assert_eq!(after["title"], "Payments slow after lunch");
    assert_eq!(
        after["evidence"].as_array().unwrap().len(),
        src["evidence"].as_array().unwrap().len() - flagged.len()
    );
    assert!(
        after["evidence"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["title"] == "Reworded title")
    );
    assert_eq!(after["hints"], src["hints"]);
    let r = app
        .form_as(&manager, &format!("/challenges/{id}/publish"), &[])
        .await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
    assert_eq!(
        r.header("location"),
        Some(format!("/challenges/{id}").as_str())
    );

    // Playing it closes the editor to this editor until the attempt ends.
    let r = app
        .form_as(&manager, &format!("/challenges/{id}/attempts"), &[])
        .await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
    let r = app
        .call_as(&manager, axum::http::Method::GET, &edit, &[], None)
        .await;
    assert_eq!(r.status, StatusCode::CONFLICT);
    assert!(!r.text.contains("copied from another client"));
}

/// The leaderboard listed every attempt, with its raw `gave_up`. Now it is one row per person,
/// their best finished attempt (best score, then fewer hints, then less time), with the outcome
/// in words and how many attempts they finished.
#[sqlx::test]
async fn the_leaderboard_counts_first_attempts_not_replays_lookups_or_guesses(pool: PgPool) {
    use axum::http::Method;
    let app = TestApp::new(pool).await;
    let id = orbitpay(&app).await;
    let right = "After the processor hiccup every failed payment was retried at the same moment because the backoff has no randomness, so the workers got flooded. Add jitter.";
    let raw = grade(right, &quell::demo::challenges::orbitpay_rubric()).score;
    assert!(raw >= 0.8, "{raw}");
    // Tess solves it at once. Quinn solves it on the fifth hypothesis. Petra gives up, then plays
    // again and pastes the answer she was shown. Rosa reads the incident the challenge was built
    // from before she answers; Sam searches for the related incident's title. Uma opens the list
    // of every action item, the fix among them; Val opens only Ana's, none of them this
    // incident's, and has not answered yet; Wes searches the incident list.
    let plays: [(&str, &[&str]); 8] = [
        ("tess@example.com", &["right"]),
        (
            "quinn@example.com",
            &["wrong", "wrong", "wrong", "wrong", "right"],
        ),
        ("petra@example.com", &["give-up", "again", "answer"]),
        (
            "rosa@example.com",
            &["/api/v1/incidents/INC-184/postmortem", "right"],
        ),
        (
            "sam@example.com",
            &["/search?q=Retry+queue+overload", "right"],
        ),
        ("uma@example.com", &["/action-items?status=any", "right"]),
        ("val@example.com", &["/api/v1/action-items?owner=ana"]),
        (
            "wes@example.com",
            &["/incidents?q=Retry+queue+overload", "right"],
        ),
    ];
    let mut names = Vec::new();
    let mut attempts = Vec::new();
    for (email, steps) in plays {
        let who = app.account(email, "responder").await;
        let me = app
            .call_as(&who, Method::GET, "/api/v1/me", &[], None)
            .await
            .json();
        names.push(me["name"].as_str().unwrap().to_owned());
        let attempts_path = format!("/api/v1/challenges/{id}/attempts");
        let start = || app.call_as(&who, Method::POST, &attempts_path, &[], Some("{}"));
        let mut base = format!(
            "/api/v1/challenges/{id}/attempts/{}",
            start().await.json()["id"].as_i64().unwrap()
        );
        let mut shown = String::new();
        for step in steps {
            let hypothesis = |text: &str| json!({ "text": text }).to_string();
            let path = format!("{base}/hypotheses");
            let r = match *step {
                "right" => {
                    app.call_as(&who, Method::POST, &path, &[], Some(&hypothesis(right)))
                        .await
                }
                "wrong" => {
                    let text = hypothesis("Redis is down, so every retry hangs.");
                    app.call_as(&who, Method::POST, &path, &[], Some(&text))
                        .await
                }
                "answer" => {
                    app.call_as(&who, Method::POST, &path, &[], Some(&hypothesis(&shown)))
                        .await
                }
                "give-up" => {
                    let r = app
                        .call_as(&who, Method::POST, &format!("{base}/give-up"), &[], None)
                        .await;
                    let answer = &r.json()["answer"];
                    shown = format!("{} {}", answer["cause"], answer["fix"]).replace('"', "");
                    r
                }
                "again" => {
                    let r = start().await;
                    assert_eq!(r.json()["practice"], true, "{}", r.text);
                    base = format!(
                        "/api/v1/challenges/{id}/attempts/{}",
                        r.json()["id"].as_i64().unwrap()
                    );
                    r
                }
                read => app.call_as(&who, Method::GET, read, &[], None).await,
            };
            assert!(r.status.is_success(), "{step}: {}", r.text);
        }
        let attempt = app
            .call_as(&who, Method::GET, &base, &[], None)
            .await
            .json();
        attempts.push(attempt);
    }
    // The replay with the pasted answer solves, as practice.
    assert_eq!(attempts[2]["outcome"], "solved");
    assert_eq!(attempts[2]["practice"], true);
    // The attempts that read the answer's sources are marked, with what was read.
    assert_eq!(attempts[3]["looked_up"], "read INC-184", "{}", attempts[3]);
    assert!(
        attempts[4]["looked_up"]
            .as_str()
            .is_some_and(|w| w.starts_with("searched for")),
        "{}",
        attempts[4]
    );
    assert_eq!(
        attempts[5]["looked_up"], "read the action items",
        "{}",
        attempts[5]
    );
    assert_eq!(attempts[6]["looked_up"], Value::Null, "{}", attempts[6]);
    assert_eq!(
        attempts[7]["looked_up"], "searched the incidents",
        "{}",
        attempts[7]
    );
    assert_eq!(attempts[0]["looked_up"], Value::Null);
    let board = app
        .get(&format!("/api/v1/challenges/{id}/leaderboard"))
        .await
        .json();
    let rows: Vec<(String, String, f64, i64)> = board["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| names.iter().any(|n| s["name"] == n.as_str()))
        .map(|s| {
            (
                s["name"].as_str().unwrap().to_owned(),
                s["outcome"].as_str().unwrap().to_owned(),
                s["score"].as_f64().unwrap(),
                s["attempts"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        rows,
        [
            (names[0].clone(), "solved".to_owned(), raw, 1),
            (
                names[1].clone(),
                "solved".to_owned(),
                quell::challenges::domain::ranked_score(raw, 5),
                1
            ),
            (names[2].clone(), "gave_up".to_owned(), 0.0, 2),
        ],
        "first attempts only, guesses counted, lookups left off: {board}"
    );
    let page = app.get(&format!("/challenges/{id}")).await;
    assert_eq!(page.status, StatusCode::OK);
    let at = page
        .text
        .find(r#"id="leaderboard""#)
        .expect("a leaderboard");
    let section = &page.text[at..page.text[at..].find("</section>").unwrap() + at];
    for (n, name) in names.iter().enumerate() {
        assert_eq!(
            section.matches(&format!("<td>{name}</td>")).count(),
            usize::from(n < 3),
            "{name}: {section}"
        );
    }
    assert!(
        section.contains("<td>solved</td>") && section.contains("<td>gave up</td>"),
        "{section}"
    );
    assert!(!section.contains("gave_up"), "{section}");
    // Credit is earned by a ranked solve only: 20 with no hint taken.
    let balances = app.get("/api/v1/credits/balances").await.json();
    let earned = |name: &str| {
        balances["items"]
            .as_array()
            .unwrap()
            .iter()
            .find(|b| b["name"] == name)
            .map(|b| b["earned"].as_i64().unwrap())
    };
    assert_eq!(
        names.iter().map(|n| earned(n)).collect::<Vec<_>>(),
        [
            Some(20),
            Some(20),
            Some(0),
            Some(0),
            Some(0),
            Some(0),
            Some(0),
            Some(0)
        ],
        "{balances}"
    );
}

#[sqlx::test]
async fn an_admin_sets_the_starting_grant_and_sees_every_balance(pool: PgPool) {
    use axum::http::Method;
    let app = TestApp::new(pool).await;
    let id = orbitpay(&app).await;
    // Uma takes the first hint and then solves it: 100 − 5 + (20 − 5).
    let uma = app.account("uma@example.com", "responder").await;
    let started = app
        .call_as(
            &uma,
            Method::POST,
            &format!("/api/v1/challenges/{id}/attempts"),
            &[],
            Some("{}"),
        )
        .await;
    let base = format!(
        "/api/v1/challenges/{id}/attempts/{}",
        started.json()["id"].as_i64().unwrap()
    );
    let hint = app
        .call_as(&uma, Method::POST, &format!("{base}/hints"), &[], None)
        .await;
    assert!(hint.status.is_success(), "{}", hint.text);
    let right = json!({"text": "Every failed payment retries at the same moment since the backoff has no randomness, flooding the workers. Add jitter."}).to_string();
    let solved = app
        .call_as(
            &uma,
            Method::POST,
            &format!("{base}/hypotheses"),
            &[],
            Some(&right),
        )
        .await
        .json();
    assert_eq!(
        (solved["solved"].as_bool(), solved["earned"].as_i64()),
        (Some(true), Some(15))
    );
    let mine = app
        .call_as(&uma, Method::GET, "/api/v1/me/credits", &[], None)
        .await
        .json();
    assert_eq!(mine["balance"], 110, "{mine}");
    assert_eq!(
        mine["entries"][0]["reason"],
        format!("solved challenge {id}")
    );
    // The admin page shows her balance, earned and spent, and sets the grant.
    let page = app.get("/admin/credits").await;
    assert_eq!(page.status, StatusCode::OK);
    let row = page
        .text
        .split("<tr>")
        .find(|r| r.contains("uma@example.com"))
        .expect("Uma's row");
    for figure in [">110<", ">15<", ">5<"] {
        assert!(row.contains(figure), "{figure}: {row}");
    }
    let bad = app
        .form("/admin/credits", &[("starting_grant", "lots")])
        .await;
    assert_eq!(bad.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(
        bad.text.contains("is not a whole number of credits"),
        "{}",
        bad.text
    );
    assert!(bad.text.contains(r#"value="lots""#), "what was typed stays");
    let r = app
        .form("/admin/credits", &[("starting_grant", "50")])
        .await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
    assert_eq!(
        app.get("/api/v1/credits/settings").await.json()["starting_grant"],
        50
    );
    let late = app.account("vic@example.com", "responder").await;
    let credits = app
        .call_as(&late, Method::GET, "/api/v1/me/credits", &[], None)
        .await
        .json();
    assert_eq!(credits["balance"], 50, "{credits}");
}

#[sqlx::test]
async fn the_review_queue_takes_a_teachers_verdict_to_the_learner_and_the_grader(pool: PgPool) {
    use axum::http::Method;
    let app = TestApp::new(pool).await;
    let id = orbitpay(&app).await;
    let learner = app.account("lee@example.com", "responder").await;
    let as_learner = async |method: Method, path: &str, body: Option<Value>| {
        let body = body.map(|b| b.to_string());
        app.call_as(&learner, method, path, &[], body.as_deref())
            .await
    };
    let started = as_learner(
        Method::POST,
        &format!("/api/v1/challenges/{id}/attempts"),
        Some(json!({})),
    )
    .await;
    let base = format!(
        "/api/v1/challenges/{id}/attempts/{}",
        started.json()["id"].as_i64().unwrap()
    );
    // A plain-words answer the grader only half understands goes to the queue by itself.
    let plain = "When the card company wobbled, every payment that failed was booked to try again after the very same pause, so they all came back at once and buried the payment workers.";
    let first = as_learner(
        Method::POST,
        &format!("{base}/hypotheses"),
        Some(json!({ "text": plain })),
    )
    .await
    .json();
    let score = first["score"].as_f64().unwrap();
    assert!((0.3..0.8).contains(&score), "uncertain: {first}");
    assert_eq!(first["in_review"], true, "{first}");
    // A low one the learner thinks is right, asked for by them.
    let low = as_learner(
        Method::POST,
        &format!("{base}/hypotheses"),
        Some(json!({ "text": "The workers are buried under payments coming back." })),
    )
    .await
    .json();
    let low_id = low["id"].as_i64().unwrap();
    assert_eq!(low["in_review"], false, "{low}");
    let asked = as_learner(
        Method::POST,
        &format!("{base}/hypotheses/{low_id}/review"),
        None,
    )
    .await;
    assert_eq!(asked.status, StatusCode::ACCEPTED, "{}", asked.text);
    // The editor's queue: both, the grader's first.
    let queue = app
        .get(&format!("/api/v1/challenges/{id}/reviews"))
        .await
        .json();
    let items = queue["items"].as_array().unwrap();
    assert_eq!(items.len(), 2, "{queue}");
    assert_eq!(
        (items[0]["reason"].as_str(), items[1]["reason"].as_str()),
        (Some("uncertain"), Some("learner"))
    );
    let (plain_review, low_review) = (
        items[0]["id"].as_i64().unwrap(),
        items[1]["id"].as_i64().unwrap(),
    );
    // A bad verdict names its field and changes nothing.
    let bad = app
        .post(
            &format!("/api/v1/challenges/{id}/reviews/{plain_review}"),
            json!({"verdict": "maybe"}),
        )
        .await;
    assert_eq!(bad.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(bad.text.contains("verdict"), "{}", bad.text);
    // Right, with a note: the learner sees it and the attempt is solved.
    let judged = app
        .post(
            &format!("/api/v1/challenges/{id}/reviews/{plain_review}"),
            json!({"verdict": "right", "note": "Yes: one shared pause is the whole story."}),
        )
        .await;
    assert_eq!(judged.status, StatusCode::OK, "{}", judged.text);
    let again = app
        .post(
            &format!("/api/v1/challenges/{id}/reviews/{plain_review}"),
            json!({"verdict": "wrong"}),
        )
        .await;
    assert_eq!(again.status, StatusCode::NOT_FOUND, "judged once");
    let attempt = as_learner(Method::GET, &base, None).await.json();
    assert_eq!(attempt["outcome"], "solved", "{attempt}");
    assert_eq!(attempt["best_score"].as_f64(), Some(1.0));
    let h = &attempt["hypotheses"][0];
    assert_eq!(
        (
            h["verdict"].as_str(),
            h["verdict_note"].as_str(),
            h["score"].as_f64()
        ),
        (
            Some("right"),
            Some("Yes: one shared pause is the whole story."),
            Some(1.0)
        )
    );
    assert_eq!(attempt["hypotheses"][1]["in_review"], true);
    // Solved by the verdict on a first attempt, it earns as a solve does.
    let credits = as_learner(Method::GET, "/api/v1/me/credits", None)
        .await
        .json();
    assert_eq!(credits["balance"], 120, "{credits}");
    assert_eq!(
        credits["entries"][0]["reason"],
        format!("solved challenge {id} (an editor's verdict)")
    );
    // The phrasing is an accepted answer now: another learner who says it solves at once, and
    // nothing a learner reads before the end shows it.
    let other = app.account("mo@example.com", "responder").await;
    let started = app
        .call_as(
            &other,
            Method::POST,
            &format!("/api/v1/challenges/{id}/attempts"),
            &[],
            Some("{}"),
        )
        .await;
    let other_base = format!(
        "/api/v1/challenges/{id}/attempts/{}",
        started.json()["id"].as_i64().unwrap()
    );
    for path in [format!("/api/v1/challenges/{id}"), other_base.clone()] {
        let seen = app.call_as(&other, Method::GET, &path, &[], None).await;
        assert!(
            !seen.text.contains("very same pause"),
            "{path}: {}",
            seen.text
        );
    }
    let paraphrase = "When the card company wobbled every payment that failed was booked to try again after the very same pause; so they all came back at once and buried the payment workers!";
    let body = json!({ "text": paraphrase }).to_string();
    let solved = app
        .call_as(
            &other,
            Method::POST,
            &format!("{other_base}/hypotheses"),
            &[],
            Some(&body),
        )
        .await
        .json();
    assert_eq!(solved["solved"], true, "{solved}");
    assert!(
        solved["feedback"]
            .as_str()
            .unwrap()
            .starts_with("An editor accepted")
    );
    // Wrong, in the browser: the queue page, the verdict form, the labelled set.
    let page = app.get(&format!("/challenges/{id}/reviews")).await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(
        page.text
            .contains("The workers are buried under payments coming back.")
    );
    let r = app
        .form(
            &format!("/challenges/{id}/reviews/{low_review}"),
            &[
                ("verdict", "wrong"),
                ("note", "What brought them back all at once?"),
            ],
        )
        .await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
    let learner_page = app
        .call_as(
            &learner,
            Method::GET,
            &format!("/challenges/{id}"),
            &[],
            None,
        )
        .await;
    assert!(
        learner_page
            .text
            .contains("An editor&#39;s verdict: wrong.")
            || learner_page.text.contains("An editor's verdict: wrong."),
        "{}",
        learner_page.text
    );
    let tsv = app
        .get(&format!("/api/v1/challenges/{id}/labelled.tsv"))
        .await;
    assert_eq!(tsv.status, StatusCode::OK);
    let lines: Vec<&str> = tsv.text.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(
        lines,
        [
            "wrong\tThe workers are buried under payments coming back.".to_owned(),
            format!("right\t{plain}")
        ]
    );
    // The exported set reads back with its rubric, as scripts/bench-grading reads it.
    let rubric = rubric_of(&tsv.text).expect("a rubric line");
    assert_eq!(rubric, quell::demo::challenges::orbitpay_rubric());
    assert_eq!(graded(&tsv.text, &rubric).len(), 2);
}

/// A challenge belongs to a team: the one its draft names, else its incident's service's; the
/// list narrows to a team's (or mine), and an unknown team is refused naming the field.
#[sqlx::test]
async fn a_challenge_belongs_to_a_team_and_the_list_narrows_to_it(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let id = orbitpay(&app).await;
    let mut draft = app
        .get(&format!("/api/v1/challenges/{id}/source"))
        .await
        .json();
    draft["title"] = json!("OrbitPay, for Payments");
    draft["team"] = json!("Payments");
    let r = app.post("/api/v1/challenges", draft.clone()).await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let ours = r.json()["id"].as_i64().unwrap();
    let source = app
        .get(&format!("/api/v1/challenges/{ours}/source"))
        .await
        .json();
    assert_eq!(source["team"], "payments", "{source}");
    let ids = |v: Value| -> Vec<i64> {
        v["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["id"].as_i64().unwrap())
            .collect()
    };
    let listed = ids(app.get("/api/v1/challenges?team=payments").await.json());
    assert!(listed.contains(&ours), "{listed:?}");
    let everyone = ids(app.get("/api/v1/challenges").await.json());
    assert!(everyone.contains(&ours) && everyone.contains(&id));
    // Left out, the team is its incident's service's (PAY-184's payments-worker is Payments').
    let orbit = app
        .get(&format!("/api/v1/challenges/{id}/source"))
        .await
        .json();
    let service = app.incident_json("INC-184").await["service"].clone();
    let service = app
        .get(&format!("/api/v1/services/{}", service.as_str().unwrap()))
        .await
        .json();
    assert_eq!(orbit["team"], service["team_slug"], "{orbit}");
    assert_eq!(orbit["team"], "payments");
    // A team that is not there is refused, naming the field, and nothing is saved.
    draft["team"] = json!("nope");
    let r = app.post("/api/v1/challenges", draft).await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text);
    assert_eq!(r.field(), "team");
    assert_eq!(
        ids(app.get("/api/v1/challenges").await.json()).len(),
        everyone.len()
    );
    let page = app.get("/challenges?team=payments").await;
    assert!(
        page.text.contains("OrbitPay, for Payments"),
        "{}",
        page.text
    );
}
