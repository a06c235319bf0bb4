use super::*;
use serde_json::json;

fn now() -> DateTime<Utc> {
    "2026-09-17T16:00:00Z".parse().unwrap()
}

#[test]
fn kinds_parse_as_people_write_them() {
    assert_eq!(
        ChangeKind::parse("kind", "Feature flag").unwrap(),
        ChangeKind::FeatureFlag
    );
    assert_eq!(
        ChangeKind::parse("kind", "configuration").unwrap(),
        ChangeKind::Config
    );
    assert!(ChangeKind::parse("kind", "rollback").is_err());
}

#[test]
fn a_change_needs_a_service_a_summary_and_a_past_time() {
    let draft = ChangeDraft {
        service: " payments-gateway ".into(),
        summary: "chore: consolidate HTTP client settings".into(),
        kind: Some("config".into()),
        occurred_at: Some("2026-09-17T14:05:00Z".parse().unwrap()),
        ..Default::default()
    };
    let c = draft.checked(now()).unwrap();
    assert_eq!(c.service, "payments-gateway");
    assert_eq!(c.environment, "production");
    assert_eq!(c.kind, ChangeKind::Config);
    let field = |d: ChangeDraft| match d.checked(now()) {
        Err(DomainError::Invalid { field, .. }) => field,
        other => panic!("{other:?}"),
    };
    assert_eq!(
        field(ChangeDraft {
            service: " ".into(),
            ..draft.clone()
        }),
        "service"
    );
    assert_eq!(
        field(ChangeDraft {
            summary: "".into(),
            ..draft.clone()
        }),
        "summary"
    );
    assert_eq!(
        field(ChangeDraft {
            occurred_at: Some("2026-09-17T16:00:01Z".parse().unwrap()),
            ..draft.clone()
        }),
        "occurred_at"
    );
    assert_eq!(
        field(ChangeDraft {
            link: Some("javascript:x".into()),
            ..draft.clone()
        }),
        "link"
    );
    assert_eq!(
        field(ChangeDraft {
            kind: Some("oops".into()),
            ..draft.clone()
        }),
        "kind"
    );
    assert_eq!(
        ChangeDraft {
            occurred_at: None,
            ..draft
        }
        .checked(now())
        .unwrap()
        .occurred_at,
        now(),
        "now when left out"
    );
}

#[test]
fn sender_details_name_the_service_kind_and_environment_or_fall_back() {
    let d = json!({"service": "checkout-api", "kind": "feature flag", "environment": "Staging"});
    let s = sender_details(&d);
    assert_eq!(s.service, Some("checkout-api"));
    assert_eq!(s.kind, ChangeKind::FeatureFlag);
    assert_eq!(s.environment, "staging");
    let d = json!({"capacity": {"limit": "pool", "per_replica": 10, "replicas": 6}});
    assert_eq!(sender_details(&d).capacity.map(|c| c.per_replica), Some(10));
    let d = json!({"capacity": {"limit": "pool", "per_replica": 0, "replicas": 6}});
    assert_eq!(
        sender_details(&d).capacity,
        None,
        "invalid figures are dropped"
    );
    let bad = json!({"kind": 3});
    let s = sender_details(&bad);
    assert_eq!(
        (s.service, s.kind, s.environment.as_str()),
        (None, ChangeKind::Deploy, "production")
    );
}

#[test]
fn cursors_round_trip() {
    let c = crate::domain::TimeCursor {
        occurred_at: "2026-09-17T14:05:00.123456Z".parse().unwrap(),
        id: 42,
    };
    assert_eq!(ChangeCursor::decode(&c.encode()), Some(c));
    assert_eq!(ChangeCursor::decode("x.1"), None);
}

#[test]
fn suspects_rank_capacity_then_production_then_nearest() {
    let start: DateTime<Utc> = "2026-09-17T16:02:00Z".parse().unwrap();
    let at = |s: &str| -> DateTime<Utc> { s.parse().unwrap() };
    let mut ranks = [
        (
            "near staging",
            SuspectRank::of(false, "staging", at("2026-09-17T15:55:00Z"), start),
        ),
        (
            "far production",
            SuspectRank::of(false, "production", at("2026-09-17T09:00:00Z"), start),
        ),
        (
            "near production",
            SuspectRank::of(false, "production", at("2026-09-17T15:00:00Z"), start),
        ),
        (
            "capacity, oldest",
            SuspectRank::of(true, "staging", at("2026-09-16T17:00:00Z"), start),
        ),
    ];
    ranks.sort_by_key(|(_, r)| *r);
    let order: Vec<&str> = ranks.iter().map(|(n, _)| *n).collect();
    assert_eq!(
        order,
        [
            "capacity, oldest",
            "near production",
            "far production",
            "near staging"
        ]
    );
}

#[test]
fn verdicts_parse() {
    assert_eq!(
        Verdict::parse("verdict", "ruled out").unwrap(),
        Verdict::RuledOut
    );
    assert_eq!(
        Verdict::parse("verdict", "confirmed_trigger").unwrap(),
        Verdict::ConfirmedTrigger
    );
    assert!(Verdict::parse("verdict", "guilty").is_err());
}

fn inc_1187() -> Capacity {
    Capacity {
        limit: "MaxConnectionsPerServer".into(),
        per_replica: 10,
        replicas: 6,
        peak_requests_per_second: Some(120.0),
        peak_latency_seconds: Some(1.2),
    }
}

#[test]
fn inc_1187_is_under_provisioned_by_84_at_peak() {
    let c = check_capacity(Some(&inc_1187()), ServicePeak::default(), "x", &json!({})).unwrap();
    assert_eq!(c.status, CapacityStatus::UnderProvisioned);
    assert!(c.flagged());
    let a = c.arithmetic.as_ref().unwrap();
    assert_eq!(
        (
            a.needed_at_peak,
            a.needed_per_replica_at_peak,
            a.allowed,
            a.short_at_peak
        ),
        (144, 24, 60, 84)
    );
    assert_eq!(
        (
            a.needed_at_double_peak,
            a.needed_per_replica_at_double_peak,
            a.short_at_double_peak
        ),
        (288, 48, 228)
    );
    assert_eq!(
        c.explanation,
        "120 req/s × 1.2 s = 144 concurrent requests needed at peak, 24 per replica across 6 replicas; MaxConnectionsPerServer = 10 per replica allows 60 in all → 84 short. At 2× peak 288 are needed (48 per replica) → 228 short."
    );
}

#[test]
fn the_postmortems_remedy_of_50_per_replica_is_enough_at_twice_the_peak() {
    let fifty = Capacity {
        per_replica: 50,
        ..inc_1187()
    };
    let c = check_capacity(Some(&fifty), ServicePeak::default(), "", &json!({})).unwrap();
    assert_eq!(c.status, CapacityStatus::Sufficient);
    assert!(!c.flagged());
    assert!(
        c.explanation.ends_with("→ 12 to spare."),
        "{}",
        c.explanation
    );
    let thirty = Capacity {
        per_replica: 30,
        ..inc_1187()
    };
    let c = check_capacity(Some(&thirty), ServicePeak::default(), "", &json!({})).unwrap();
    assert_eq!(
        c.status,
        CapacityStatus::NoHeadroom,
        "180 fits 144, not 288"
    );
    assert!(c.flagged());
}

#[test]
fn rate_and_latency_come_from_the_service_record_when_the_change_has_none() {
    let bare = Capacity {
        peak_requests_per_second: None,
        peak_latency_seconds: None,
        ..inc_1187()
    };
    let peak = ServicePeak {
        requests_per_second: Some(120.0),
        latency_seconds: Some(1.2),
    };
    let c = check_capacity(Some(&bare), peak, "", &json!({})).unwrap();
    let a = c.arithmetic.unwrap();
    assert_eq!((a.needed_at_peak, a.short_at_peak), (144, 84));
    assert_eq!(a.figures_from, "service");
    assert!(c.explanation.contains("from the service record"));
    let own_rate = Capacity {
        peak_requests_per_second: Some(60.0),
        ..bare.clone()
    };
    let a = check_capacity(Some(&own_rate), peak, "", &json!({}))
        .unwrap()
        .arithmetic
        .unwrap();
    assert_eq!(
        (a.needed_at_peak, a.figures_from.as_str()),
        (72, "change and service")
    );
    let none = check_capacity(Some(&bare), ServicePeak::default(), "", &json!({})).unwrap();
    assert_eq!(none.status, CapacityStatus::NotChecked);
    assert!(
        none.explanation.contains("arrival rate and latency"),
        "{}",
        none.explanation
    );
}

#[test]
fn changes_that_name_capacity_settings_without_figures_are_not_checked() {
    for (summary, details) in [
        ("Raise DB pool size to 40", json!({})),
        ("bump client timeout", json!({})),
        (
            "chore: consolidate HTTP client settings",
            json!({"MaxConnectionsPerServer": 10}),
        ),
        ("tune", json!({"settings": ["rate-limit: 500/s"]})),
        ("fewer retries on 5xx", json!({})),
    ] {
        let c = check_capacity(None, ServicePeak::default(), summary, &details)
            .unwrap_or_else(|| panic!("{summary} is a capacity change"));
        assert_eq!(c.status, CapacityStatus::NotChecked);
        assert!(c.explanation.contains("carries no figures"));
    }
    for (summary, details) in [
        ("Fix typo in checkout copy", json!({"ticket": "PAY-1"})),
        ("fix: log the processor's request id on timeouts", json!({})),
    ] {
        assert_eq!(
            check_capacity(None, ServicePeak::default(), summary, &details),
            None,
            "{summary}: names no setting, or sets no value"
        );
    }
    assert_eq!(
        capacity_word("max_connections = 10", &json!({})),
        Some("a connection cap")
    );
}

#[test]
fn capacity_figures_are_checked_naming_the_field() {
    let field = |c: Capacity| match c.checked() {
        Err(DomainError::Invalid { field, .. }) => field,
        other => panic!("{other:?}"),
    };
    assert_eq!(
        field(Capacity {
            limit: " ".into(),
            ..inc_1187()
        }),
        "capacity.limit"
    );
    assert_eq!(
        field(Capacity {
            per_replica: 0,
            ..inc_1187()
        }),
        "capacity.per_replica"
    );
    assert_eq!(
        field(Capacity {
            replicas: -1,
            ..inc_1187()
        }),
        "capacity.replicas"
    );
    assert_eq!(
        field(Capacity {
            peak_requests_per_second: Some(f64::NAN),
            ..inc_1187()
        }),
        "capacity.peak_requests_per_second"
    );
    assert_eq!(
        field(Capacity {
            peak_latency_seconds: Some(0.0),
            ..inc_1187()
        }),
        "capacity.peak_latency_seconds"
    );
    assert!(inc_1187().checked().is_ok());
}

#[test]
fn the_change_failure_rate_is_triggers_over_changes() {
    let rows = [FailureRate::new("a", 3, 1), FailureRate::new("b", 1, 0)];
    assert_eq!(rows[0].text(), "1 of 3 changes (33%)");
    let all = FailureRate::overall(&rows);
    assert_eq!((all.changes, all.failed, all.rate), (4, 1, Some(0.25)));
    assert_eq!(all.text(), "1 of 4 changes (25%)");
    assert_eq!(FailureRate::new("none", 0, 0).rate, None);
    assert_eq!(FailureRate::new("one", 1, 1).text(), "1 of 1 change (100%)");
    assert_eq!(FailureGroup::parse("Month").unwrap(), FailureGroup::Month);
    assert!(matches!(
        FailureGroup::parse("severity"),
        Err(DomainError::Invalid { field, .. }) if field == "group_by"
    ));
}
