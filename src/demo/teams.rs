//! The demo's teams: five of them own its services, each with a lead and members, its own
//! rota and its escalation policy on its services.

use sqlx::PgConnection;

use crate::audit::Actor;
use crate::error::AppResult;
use crate::teams::{self, domain::TeamDraft, domain::TeamRole};

/// (name, slug, what it does, its leads, its members) — by handle.
type TeamRow = (
    &'static str,
    &'static str,
    &'static str,
    &'static [&'static str],
    &'static [&'static str],
);

const TEAMS: &[TeamRow] = &[
    (
        "Payments",
        "payments",
        "Card authorization, the ledger and the payments worker.",
        &["ana"],
        &["daniel", "priya.raman", "dev"],
    ),
    (
        "Checkout",
        "checkout",
        "The checkout API, the merchant dashboard and the mobile backend.",
        &["marcelo"],
        &["priya", "lena"],
    ),
    (
        "Platform",
        "platform",
        "Identity, messaging and what every other team builds on.",
        &["tomas"],
        &["mei", "kwame"],
    ),
    (
        "Fulfilment",
        "fulfilment",
        "Stock, reservations, carriers and tracking.",
        &["sofia"],
        &["omar", "kwame"],
    ),
    (
        "Data",
        "data",
        "Search and the exports to the warehouse and to merchants.",
        &["mei"],
        &["omar", "sofia"],
    ),
];

/// The id of the demo team named `name`, made the first time it is asked for.
pub async fn team_id(tx: &mut PgConnection, name: &str) -> AppResult<Option<i64>> {
    if let Some((id, _)) = teams::db::find(&mut *tx, name).await? {
        return Ok(Some(id));
    }
    let Some((name, slug, description, _, _)) = TEAMS.iter().find(|t| t.0 == name) else {
        return Ok(None);
    };
    let draft = TeamDraft {
        name: (*name).into(),
        slug: (*slug).into(),
        description: (*description).into(),
        ..Default::default()
    };
    let team = teams::actions::create(tx, &Actor::system("demo"), &draft).await?;
    Ok(Some(team.id))
}

/// Puts each demo team's people in it, those not in it yet and known by now.
pub async fn staff(tx: &mut PgConnection) -> AppResult<()> {
    let demo = Actor::system("demo");
    for (name, slug, _, leads, members) in TEAMS {
        if team_id(tx, name).await?.is_none() {
            continue;
        }
        let parts = leads
            .iter()
            .map(|h| (h, TeamRole::Lead))
            .chain(members.iter().map(|h| (h, TeamRole::Member)));
        for (handle, role) in parts {
            let team = teams::db::get(&mut *tx, slug).await?;
            let known = crate::people::db::find(&mut *tx, handle).await?.is_some();
            if known && team.part_of(handle).is_none() {
                teams::actions::set_member(tx, &demo, &team, handle, role).await?;
            }
        }
    }
    Ok(())
}

/// Each team's own rota — a weekly rotation of its people — and escalation policy (the rota,
/// then its lead after 15 minutes) on those of its services that page nobody yet. Payments'
/// rota and policy are INC-1187's own (`demo::paging`). Run after the world's incidents are in,
/// so only incidents opened from now on are paged by them.
pub async fn rotas(tx: &mut PgConnection) -> AppResult<()> {
    use crate::oncall::domain::ScheduleDraft;
    use crate::paging::domain::{PolicyDraft, Step, Target};
    let demo = Actor::system("demo");
    let schedules = crate::oncall::db::list(&mut *tx, None).await?;
    let policies = crate::paging::db::list(&mut *tx, None).await?;
    for (name, slug, _, leads, members) in TEAMS {
        let rota = format!("{name} on call");
        let own = *slug != "payments";
        if own && !schedules.iter().any(|s| s.name == rota) {
            let people: Vec<&str> = leads.iter().chain(members.iter()).copied().collect();
            let draft = ScheduleDraft {
                name: rota.clone(),
                team: (*slug).into(),
                layers: vec![super::paging::weekly(&people)],
                overrides: vec![],
            };
            crate::oncall::actions::create(tx, &demo, &draft).await?;
        }
        if own && !policies.iter().any(|p| p.name == *name) {
            let draft = PolicyDraft {
                name: (*name).into(),
                team: (*slug).into(),
                steps: vec![
                    Step {
                        targets: vec![Target::Schedule(rota.clone())],
                        delay_minutes: 5,
                    },
                    Step {
                        targets: vec![Target::Person(leads[0].into())],
                        delay_minutes: 15,
                    },
                ],
                repeat: 0,
            };
            crate::paging::actions::create(tx, &demo, &draft).await?;
        }
        if !own && !policies.iter().any(|p| p.name == *name) {
            continue;
        }
        let on_call = crate::paging::actions::on_call_now(&mut *tx).await?;
        let owned = crate::services::db::select(
            &mut *tx,
            crate::services::db::Filter {
                team: Some(slug),
                ..Default::default()
            },
        )
        .await?;
        for s in owned {
            let paged = on_call
                .iter()
                .any(|o| o.service == s.name && o.policy.is_some());
            if !paged {
                crate::paging::actions::assign(tx, &demo, &s.name, Some(name)).await?;
            }
        }
    }
    Ok(())
}

/// The demo's restricted incident: a security incident kept to Payments and Tomás (Platform's
/// lead, who runs identity), opened by Ana. Nobody else finds it.
pub const PRIVATE: crate::domain::IncidentKey = crate::domain::IncidentKey(999);

/// Opens the restricted incident, once, with a first note.
pub async fn private_incident(tx: &mut PgConnection) -> AppResult<()> {
    use crate::incidents::actions::{self, AccessDraft, Change, Opening, ServiceChoice};
    if crate::incidents::db::find(&mut *tx, PRIVATE)
        .await?
        .is_some()
    {
        return Ok(());
    }
    let Some(ana) = crate::people::db::find(&mut *tx, "ana").await? else {
        return Ok(());
    };
    let actor = Actor {
        person_id: Some(ana.id),
        name: ana.name.clone(),
        ..Default::default()
    };
    let now = crate::clock::now(&mut *tx).await?;
    let access = AccessDraft {
        restricted: true,
        teams: vec!["payments".into()],
        people: vec!["tomas".into()],
    };
    let opening = Opening {
        number: Some(PRIVATE.0),
        title: "Suspected misuse of a payments-worker service credential",
        severity: crate::domain::Severity::Sev2,
        service: ServiceChoice::Named("payments-worker"),
        summary: "The worker's read-only ledger credential was used from an address outside \
                  the cluster. Rotating it and reviewing what it read; kept to Payments and \
                  identity until we know whose account it came from.",
        impact: "None seen yet: the credential can read settlement records, not change them.",
        started_at: Some(now - chrono::Duration::minutes(50)),
        detected_at: Some(now - chrono::Duration::minutes(35)),
        note: "Ana opened it from the access-log alert and kept it to Payments and Tomás",
        now,
        restricted_to: Some(&access),
        quiet: false,
    };
    actions::open(tx, &opening, &actor).await?;
    // Ana is on it: acknowledged, so nobody else is paged about it.
    let c = Change::now(PRIVATE, &actor);
    let ack = crate::incidents::domain::Transition::Acknowledge;
    actions::transition(tx, &c, ack, "").await?;
    actions::add_note(
        tx,
        &c,
        None,
        "Credential rotated at the vault; old one revoked. Pulling its access log for the last 30 days.",
    )
    .await?;
    Ok(())
}
