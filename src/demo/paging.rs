//! The demo's paging: payments on call (weekly, three people, handing off Mondays 09:00 in
//! Lisbon), a secondary, and the Payments escalation policy on payments-gateway (primary, then
//! the secondary after 5 minutes, then the engineering manager after 15). INC-1187's record
//! shows the page Daniel got at detection and acknowledged 9 minutes later. Once each.

use chrono::{DateTime, NaiveDate, Utc};
use serde_json::json;
use sqlx::PgConnection;

use crate::audit::Actor;
use crate::error::AppResult;
use crate::oncall::domain::{LayerDoc, ScheduleDraft, ShiftLength};
use crate::paging::domain::{PolicyDraft, Step, Target};
use crate::timeline::{db::NewEvent, domain::Kind};

const PRIMARY: &str = "Payments primary";
const SECONDARY: &str = "Payments secondary";
const POLICY: &str = "Payments";

pub(super) fn weekly(people: &[&str]) -> LayerDoc {
    LayerDoc {
        length: ShiftLength::Week,
        // The Monday before INC-1187.
        start: NaiveDate::from_ymd_opt(2026, 9, 14)
            .and_then(|d| d.and_hms_opt(9, 0, 0))
            .expect("a date"),
        time_zone: "Europe/Lisbon".into(),
        people: people.iter().map(|p| p.to_string()).collect(),
        restriction: None,
    }
}

pub async fn load(
    tx: &mut PgConnection,
    incident_id: i64,
    detected_at: DateTime<Utc>,
    acknowledged_at: DateTime<Utc>,
) -> AppResult<()> {
    let actor = Actor::system("demo");
    let schedules = crate::oncall::db::list(&mut *tx, None).await?;
    for (name, people) in [
        (PRIMARY, ["daniel", "dev", "priya.raman"]),
        (SECONDARY, ["dev", "priya.raman", "daniel"]),
    ] {
        if !schedules.iter().any(|s| s.name == name) {
            let draft = ScheduleDraft {
                name: name.into(),
                team: "Payments".into(),
                layers: vec![weekly(&people)],
                overrides: vec![],
            };
            crate::oncall::actions::create(tx, &actor, &draft).await?;
        }
    }
    if crate::paging::db::list(&mut *tx, None)
        .await?
        .iter()
        .any(|p| p.name == POLICY)
    {
        return Ok(());
    }
    let step = |target: Target, delay_minutes| Step {
        targets: vec![target],
        delay_minutes,
    };
    let draft = PolicyDraft {
        name: POLICY.into(),
        team: "Payments".into(),
        steps: vec![
            step(Target::Schedule(PRIMARY.into()), 5),
            step(Target::Schedule(SECONDARY.into()), 10),
            step(Target::Person("ana".into()), 15),
        ],
        repeat: 0,
    };
    let id = crate::paging::actions::create(tx, &actor, &draft).await?;
    crate::paging::actions::assign(tx, &actor, "payments-gateway", Some(POLICY)).await?;
    // Everyone on the rota is reached by work email (delivered when QUELL_SMTP_URL is set).
    let mut daniel = None;
    for handle in ["daniel", "dev", "priya.raman", "ana"] {
        if let Some(p) = crate::people::db::find(&mut *tx, handle).await? {
            let method = crate::notify::actions::MethodDraft {
                kind: "email",
                label: "work email",
                address: &p.email,
            };
            let (m, _) =
                crate::notify::actions::add_method(tx, &actor, p.id, &method, &Default::default())
                    .await?;
            if handle == "daniel" {
                daniel = Some((p, m));
            }
        }
    }
    let Some((person, method)) = daniel else {
        return Ok(());
    };
    // INC-1187's page: step 1 reached Daniel, on call in the primary, at detection.
    let policy = crate::paging::db::get(&mut *tx, id).await?;
    let payload = json!({
        "type": "incident.paged",
        "message": "INC-1187 (Sev2) payments-gateway authorization timeouts after connection pool change: you are paged (step 1 of 3, Payments)",
        "path": "/incidents/INC-1187",
    });
    crate::paging::db::record_past_page(
        tx,
        &crate::paging::db::PastPage {
            incident_id,
            policy: &policy,
            fired_at: detected_at,
            stopped_at: acknowledged_at,
            person_id: person.id,
            method_id: method.id,
            payload: &payload,
        },
    )
    .await?;
    for (at, kind, details) in [
        (
            detected_at,
            Kind::Paged,
            json!({"step": 1, "of": 3, "round": 0, "policy": POLICY,
                   "people": [{"name": person.name, "schedule": PRIMARY,
                               "via": [{"method": "work email", "kind": "email", "after_minutes": 0}]}],
                   "channels": [], "unreachable": [], "empty_schedules": []}),
        ),
        (
            acknowledged_at,
            Kind::Escalation,
            json!({"action": "stopped", "why": format!("acknowledged by {}", person.name),
                   "policy": POLICY, "pages_called_off": 0}),
        ),
    ] {
        let entry = NewEvent::by_quell(incident_id, at, kind, details);
        crate::timeline::actions::record(&mut *tx, entry).await?;
    }
    Ok(())
}

/// Where the demo's people live: their days and nights (on-call load, hand-off notices) are
/// counted there. Set once; a person's own choice is kept.
const ZONES: &[(&str, &str)] = &[
    ("daniel", "Europe/Lisbon"),
    ("dev", "Europe/London"),
    ("priya.raman", "Asia/Kolkata"),
    ("mei", "Asia/Singapore"),
    ("lena", "Europe/Berlin"),
    ("sofia", "Europe/Rome"),
    ("omar", "Asia/Dubai"),
    ("tomas", "America/Sao_Paulo"),
    ("kwame", "Africa/Accra"),
];

/// The demo's last 90 days of pages: each acknowledged incident of payments-gateway that no
/// escalation paged was paged, at detection, to whoever the primary schedule had on call then
/// (by work email, delivered). With the people's zones, on-call load has nights to show.
pub async fn history(tx: &mut PgConnection) -> AppResult<()> {
    let people = crate::people::db::list(&mut *tx).await?;
    let ids: Vec<i64> = people.iter().map(|p| p.id).collect();
    let chosen = crate::people::db::preferences_of(&mut *tx, &ids).await?;
    for (handle, zone) in ZONES {
        if let Some(p) = people.iter().find(|p| p.handle == *handle)
            && !chosen.contains_key(&p.id)
        {
            let prefs = crate::people::domain::Preferences {
                time_zone: (*zone).into(),
                ..Default::default()
            };
            crate::people::db::set_preferences(&mut *tx, p.id, &prefs).await?;
        }
    }
    let Some(policy) = crate::paging::db::list(&mut *tx, None)
        .await?
        .into_iter()
        .find(|p| p.name == POLICY)
    else {
        return Ok(());
    };
    let Some(primary) = crate::oncall::db::list(&mut *tx, None)
        .await?
        .into_iter()
        .find(|s| s.name == PRIMARY)
    else {
        return Ok(());
    };
    let rules = crate::oncall::actions::rules(&primary)?;
    let since = crate::clock::now(&mut *tx).await? - chrono::Duration::days(90);
    let methods = crate::notify::db::methods(&mut *tx, None).await?;
    for i in crate::paging::db::unpaged_since(&mut *tx, "payments-gateway", since).await? {
        let Some(handle) = rules.on_call(i.detected_at) else {
            continue;
        };
        let Some(person) = people.iter().find(|p| p.handle == handle) else {
            continue;
        };
        let Some(method) = methods.iter().find(|m| m.person_id == person.id) else {
            continue;
        };
        let payload = json!({
            "type": "incident.paged",
            "message": format!("{} ({}) {}: you are paged (step 1 of 3, Payments)", i.key, i.severity, i.title),
            "path": format!("/incidents/{}", i.key),
        });
        crate::paging::db::record_past_page(
            tx,
            &crate::paging::db::PastPage {
                incident_id: i.id,
                policy: &policy,
                fired_at: i.detected_at,
                stopped_at: i.acknowledged_at,
                person_id: person.id,
                method_id: method.id,
                payload: &payload,
            },
        )
        .await?;
    }
    Ok(())
}
