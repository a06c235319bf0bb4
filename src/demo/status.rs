//! The demo's status page: OrbitPay's public components over its services, and INC-1187
//! published under a public title (its customers-audience updates are its public updates).

use sqlx::PgConnection;

use crate::audit::Actor;
use crate::domain::IncidentKey;
use crate::error::AppResult;
use crate::statuspage::domain::{ComponentDraft, ComponentStatus, PublicationDraft};

/// (name, group, position, services, description)
const COMPONENTS: &[(&str, &str, i32, &[&str], &str)] = &[
    (
        "Card payments",
        "Payments",
        10,
        &["payments-gateway", "payments-worker"],
        "Authorising and capturing card payments",
    ),
    (
        "Checkout",
        "Payments",
        20,
        &["checkout-api"],
        "The checkout pages and API",
    ),
];

pub async fn load(conn: &mut PgConnection, inc_1187: IncidentKey) -> AppResult<()> {
    if !crate::statuspage::db::components(&mut *conn)
        .await?
        .is_empty()
    {
        return Ok(());
    }
    let actor = Actor::system("demo");
    crate::statuspage::actions::set_settings(
        conn,
        &actor,
        "OrbitPay Status",
        "Live status of OrbitPay's payment services.",
    )
    .await?;
    let mut card = None;
    for (name, group, position, services, description) in COMPONENTS {
        let draft = ComponentDraft {
            name: (*name).into(),
            description: (*description).into(),
            group: (*group).into(),
            position: *position,
            services: services.iter().map(|s| (*s).to_owned()).collect(),
        };
        let made = crate::statuspage::actions::create_component(conn, &actor, draft).await?;
        card.get_or_insert(made.id);
    }
    let publication = PublicationDraft {
        title: "Card payments failing for some customers".into(),
        closing: "Card payments are working normally again. We are sorry for the disruption."
            .into(),
        components: card
            .map(|id| (id, ComponentStatus::MajorOutage))
            .into_iter()
            .collect(),
    };
    crate::statuspage::actions::publish(conn, &actor, inc_1187, (publication, None)).await?;
    Ok(())
}
