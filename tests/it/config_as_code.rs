//! Configuration as code, through the real binary: the demo's teams, schedules, escalation
//! policies and services exported, then applied as they are (a plan of nothing, and applying
//! twice writes nothing, not even to the audit log); a one-line edit plans exactly that change
//! and applying it makes it; refusals name the file's line and change nothing; pruning deletes
//! only what a listed kind leaves out. Routing rules in the file's order, runbooks naming
//! their rule by name, channels and integrations with their secrets read from the
//! environment, never written.

use sqlx::PgPool;

use crate::common::{TempDir, name_of, quell, quell_with, url_of};

async fn count(pool: &PgPool, sql: &str) -> i64 {
    sqlx::query_scalar(sql).fetch_one(pool).await.unwrap()
}

/// The plan's change lines (after its summary line).
fn changes(said: &str) -> Vec<&str> {
    said.lines()
        .skip(1)
        .filter(|l| !l.starts_with("Nothing was changed"))
        .collect()
}

/// Where the list item starting at `start` ends: at the next item or the next list.
fn block_end(text: &str, start: usize) -> usize {
    let mut at = start
        + text[start..]
            .find('\n')
            .map_or(text.len() - start, |n| n + 1);
    while at < text.len() && text[at..].starts_with("    ") {
        at += text[at..].find('\n').map_or(text.len() - at, |n| n + 1);
    }
    at
}

#[sqlx::test]
async fn the_demo_applies_as_itself_and_a_one_line_edit_plans_exactly_that(pool: PgPool) {
    quell::demo::load(&pool).await.unwrap();
    quell::demo::world::load(&pool).await.unwrap();
    let url = url_of(&name_of(&pool).await);
    let (ok, exported) = quell(&url, &["config", "export"]);
    assert!(ok, "{exported}");
    for kind in [
        "teams:",
        "schedules:",
        "escalation_policies:",
        "services:",
        "routing_rules:",
        "runbooks:",
        "channels:",
        "integrations:",
    ] {
        assert!(exported.contains(kind), "{kind} in\n{exported}");
    }
    let services = count(&pool, "select count(*) from services").await;
    let teams = count(&pool, "select count(*) from teams").await;
    let schedules = count(&pool, "select count(*) from schedules").await;
    let policies = count(&pool, "select count(*) from escalation_policies").await;
    let rules = count(&pool, "select count(*) from routing_rules").await;
    let runbooks = count(&pool, "select count(*) from runbooks").await;
    let channels = count(&pool, "select count(*) from notification_channels").await;
    // The heartbeats' own integration is Quell's, not configuration.
    let integrations = count(
        &pool,
        "select count(*) from integrations i
         where not exists (select 1 from heartbeat_settings h where h.integration_id = i.id)",
    )
    .await;
    assert!(rules >= 2 && runbooks >= 2 && integrations >= 1);
    let objects =
        services + teams + schedules + policies + rules + runbooks + channels + integrations;
    let dir = TempDir::new("config-as-code");
    let file = dir.path().join("quell.yaml");
    let path = file.to_str().unwrap();
    std::fs::write(&file, &exported).unwrap();

    // As exported: nothing to do, and applying writes nothing, twice.
    let (ok, said) = quell(&url, &["config", "apply", "-f", path, "--plan"]);
    assert!(ok, "{said}");
    assert!(
        said.starts_with(&format!(
            "{path}: 0 to create, 0 to update, 0 to delete, {objects} unchanged (plan: nothing changed)"
        )),
        "{said}"
    );
    assert!(changes(&said).is_empty(), "{said}");
    let audited = count(&pool, "select count(*) from audit_log").await;
    for _ in 0..2 {
        let (ok, said) = quell(&url, &["config", "apply", "-f", path]);
        assert!(ok, "{said}");
        assert!(changes(&said).is_empty(), "{said}");
    }
    assert_eq!(
        count(&pool, "select count(*) from audit_log").await,
        audited
    );

    // One line changed: checkout-api's tier. The plan names that service and that field.
    let at = exported
        .find("name: \"checkout-api\"")
        .expect("checkout-api exported");
    let tier_at = at + exported[at..].find("tier: ").unwrap();
    let tier_line = exported[..tier_at].lines().count();
    let was: i64 = exported[tier_at + 6..tier_at + 7].parse().unwrap();
    let now = if was == 3 { 2 } else { 3 };
    let entry_line = exported[..at].lines().count();
    let mut edited = exported.clone();
    edited.replace_range(tier_at + 6..tier_at + 7, &now.to_string());
    std::fs::write(&file, &edited).unwrap();
    let (ok, said) = quell(&url, &["config", "apply", "-f", path, "--plan"]);
    assert!(ok, "{said}");
    assert_eq!(
        changes(&said),
        [format!(
            "update  service            checkout-api (line {entry_line}): tier"
        )],
        "{said}"
    );
    let tier = "select tier::int8 from services where name = 'checkout-api'";
    assert_eq!(count(&pool, tier).await, was);
    let (ok, said) = quell(&url, &["config", "apply", "-f", path]);
    assert!(ok, "{said}");
    assert_eq!(count(&pool, tier).await, now);
    let by_file =
        "select count(*) from audit_log where action = 'service.update' and actor = 'config apply'";
    assert_eq!(count(&pool, by_file).await, 1);
    let (ok, said) = quell(&url, &["config", "apply", "-f", path, "--plan"]);
    assert!(ok && changes(&said).is_empty(), "{said}");

    // Refused, with the line: a tier Quell does not have; a person nobody is. Nothing changes.
    let mut wrong = edited.clone();
    wrong.replace_range(tier_at + 6..tier_at + 7, "9");
    std::fs::write(&file, &wrong).unwrap();
    let (ok, said) = quell(&url, &["config", "apply", "-f", path]);
    assert!(!ok, "{said}");
    assert!(
        said.contains(&format!("{path}:{tier_line}: service: tier: ")),
        "{said}"
    );
    assert!(said.contains("Nothing was changed."), "{said}");
    assert_eq!(count(&pool, tier).await, now);
    let handle_at = edited.find("\"priya\"").expect("a schedule names priya");
    let handle_line = edited[..handle_at].lines().count();
    let nobody = edited.replacen("\"priya\"", "\"nobody-at-all\"", 1);
    std::fs::write(&file, &nobody).unwrap();
    let (ok, said) = quell(&url, &["config", "apply", "-f", path, "--plan"]);
    assert!(!ok, "{said}");
    assert!(said.contains("nobody-at-all"), "{said}");
    let refused_line: usize = said
        .split(&format!("{path}:"))
        .nth(1)
        .and_then(|r| r.split(':').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("a line in {said}"));
    assert!(refused_line > 0 && refused_line <= handle_line, "{said}");

    // A new service at the end of the file is created; left out again, it is kept without
    // --prune and deleted with it; a service with incidents is not deleted, and says why.
    // Two new services, the first depending on the second: made in the order that works.
    let added = "  - name: fraud-check\n    tier: 3\n    depends_on: [fraud-model]\n  - name: fraud-model\n    tier: 3\n";
    let services_end = edited.find("\nrouting_rules:").unwrap() + 1;
    let mut with_two = edited.clone();
    with_two.insert_str(services_end, added);
    std::fs::write(&file, &with_two).unwrap();
    let added_line = edited[..services_end].lines().count() + 1;
    let (ok, said) = quell(&url, &["config", "apply", "-f", path]);
    assert!(ok, "{said}");
    assert_eq!(
        changes(&said),
        [
            format!(
                "create  service            fraud-model (line {})",
                added_line + 3
            ),
            format!("create  service            fraud-check (line {added_line})")
        ],
        "{said}"
    );
    assert_eq!(
        count(&pool, "select count(*) from services").await,
        services + 2
    );
    std::fs::write(&file, &edited).unwrap();
    let (ok, said) = quell(&url, &["config", "apply", "-f", path]);
    assert!(ok && changes(&said).is_empty(), "{said}");
    let (ok, said) = quell(&url, &["config", "apply", "-f", path, "--plan", "--prune"]);
    assert!(ok, "{said}");
    assert_eq!(
        changes(&said),
        [
            "delete  service            fraud-check",
            "delete  service            fraud-model"
        ],
        "{said}"
    );
    let (ok, said) = quell(&url, &["config", "apply", "-f", path, "--prune"]);
    assert!(ok, "{said}");
    assert_eq!(
        count(&pool, "select count(*) from services").await,
        services
    );
    let start = edited.find("  - name: \"checkout-api\"").unwrap();
    let end = block_end(&edited, start);
    let mut without = edited.clone();
    without.replace_range(start..end, "");
    std::fs::write(&file, &without).unwrap();
    let (ok, said) = quell(&url, &["config", "apply", "-f", path, "--prune"]);
    assert!(!ok, "{said}");
    assert!(
        said.contains(&format!("{path}: service \"checkout-api\": "))
            && said.contains("has incidents"),
        "{said}"
    );
    assert_eq!(
        count(&pool, "select count(*) from services").await,
        services
    );

    // A team's people: dev made a lead (named by email), daniel left out. The plan names those
    // two fields alone; applied, memberships follow, and the file plans nothing again.
    let payments = "    leads:\n    - \"ana\"\n    members:\n    - \"daniel\"\n    - \"dev\"\n    - \"priya.raman\"\n";
    let at = edited
        .find(payments)
        .expect("the payments team's people exported");
    let team_line = edited[..at].lines().count() - 1;
    let dev_email: String = sqlx::query_scalar("select email from people where handle = 'dev'")
        .fetch_one(&pool)
        .await
        .unwrap();
    let people_now = format!(
        "    leads:\n    - \"ana\"\n    - \"{}\"\n    members:\n    - \"priya.raman\"\n",
        dev_email.to_uppercase()
    );
    let moved = edited.replacen(payments, &people_now, 1);
    std::fs::write(&file, &moved).unwrap();
    let (ok, said) = quell(&url, &["config", "apply", "-f", path]);
    assert!(ok, "{said}");
    assert_eq!(
        changes(&said),
        [format!(
            "update  team               payments (line {team_line}): leads, members"
        )],
        "{said}"
    );
    let people: Vec<(String, String)> = sqlx::query_as(
        "select p.handle, m.role from team_members m join people p on p.id = m.person_id
         join teams t on t.id = m.team_id where t.slug = 'payments' order by p.handle",
    )
    .fetch_all(&pool)
    .await
    .unwrap();
    let people: Vec<(&str, &str)> = people
        .iter()
        .map(|(h, r)| (h.as_str(), r.as_str()))
        .collect();
    assert_eq!(
        people,
        [("ana", "lead"), ("dev", "lead"), ("priya.raman", "member")]
    );
    let (ok, said) = quell(&url, &["config", "apply", "-f", path, "--plan"]);
    assert!(ok && changes(&said).is_empty(), "{said}");
    // Written without leads and members, a team keeps its people.
    let unnamed = moved.replacen(&people_now, "", 1);
    std::fs::write(&file, &unnamed).unwrap();
    let (ok, said) = quell(&url, &["config", "apply", "-f", path, "--plan"]);
    assert!(ok && changes(&said).is_empty(), "{said}");
    // Someone nobody is: refused at the line that names them.
    let nobody = moved.replacen(
        "    - \"ana\"\n",
        "    - \"ana\"\n    - \"no-such-person\"\n",
        1,
    );
    std::fs::write(&file, &nobody).unwrap();
    let (ok, said) = quell(&url, &["config", "apply", "-f", path, "--plan"]);
    assert!(!ok, "{said}");
    let nobody_line = nobody[..nobody.find("no-such-person").unwrap()]
        .lines()
        .count();
    assert!(
        said.contains(&format!(
            "{path}:{nobody_line}: team \"payments\": leads: there is no person \"no-such-person\""
        )),
        "{nobody_line}: {said}"
    );
    // One person twice (by email among the leads, by handle among the members): refused at
    // the second.
    let twice = moved.replacen(
        "    - \"priya.raman\"\n",
        "    - \"priya.raman\"\n    - \"dev\"\n",
        1,
    );
    std::fs::write(&file, &twice).unwrap();
    let (ok, said) = quell(&url, &["config", "apply", "-f", path, "--plan"]);
    let pair = "    - \"priya.raman\"\n    - \"dev\"";
    let dev_line = twice[..twice.find(pair).unwrap()].lines().count() + 2;
    assert!(
        !ok && said.contains(&format!(
            "{path}:{dev_line}: team \"payments\": members: \"dev\" is \"dev\", named already as {:?}",
            dev_email.to_uppercase()
        )),
        "{said}"
    );
    // A list left out stays as it is: only the leads written, the members are kept.
    let leads_only = moved.replacen("    members:\n    - \"priya.raman\"\n", "", 1);
    std::fs::write(&file, &leads_only).unwrap();
    let (ok, said) = quell(&url, &["config", "apply", "-f", path, "--plan"]);
    assert!(ok && changes(&said).is_empty(), "{said}");
    // A team the installation's map has follow a group: exported without its people, and a
    // file giving it people is refused.
    let map = [("QUELL_OIDC_TEAM_MAP", "payments-eng=payments")];
    let (ok, followed) = quell_with(&url, &["config", "export"], &map);
    assert!(ok, "{followed}");
    let block = &followed[followed.find("  - name: \"Payments\"").unwrap()..];
    let block = &block[..block_end(block, 0)];
    assert!(
        !block.contains("leads") && !block.contains("members"),
        "{block}"
    );
    let (ok, said) = quell_with(&url, &["config", "apply", "-f", path, "--plan"], &map);
    assert!(
        !ok && said.contains("follows an identity provider's group"),
        "{said}"
    );
}

/// The names of the routing rules, as they are tried.
async fn rules(pool: &PgPool) -> Vec<String> {
    sqlx::query_scalar("select name from routing_rules order by is_default, position")
        .fetch_all(pool)
        .await
        .unwrap()
}

#[sqlx::test]
async fn rules_runbooks_channels_and_integrations_with_secrets_from_the_environment(pool: PgPool) {
    quell::demo::load(&pool).await.unwrap();
    let url = url_of(&name_of(&pool).await);
    let before = rules(&pool).await;
    let [demo_rule, default_rule] = before.as_slice() else {
        panic!("the demo's rules: {before:?}");
    };
    let dir = TempDir::new("config-as-code-secrets");
    let file = dir.path().join("quell.yaml");
    let path = file.to_str().unwrap();
    let slack = "https://hooks.slack.com/services/T000/B000/first-token";
    let grafana_key = "grafana-key-from-the-vault-0001";
    let text = format!(
        r#"routing_rules:
  - name: Checkout pages
    conditions: ["labels.service = checkout-api"]
    service: checkout-api
    severity: Sev2
  - name: Payments critical
    conditions: ["labels.severity = critical", "labels.team = payments"]
    service: payments-gateway
    team: Payments
  - name: {default_rule}
    default: true
runbooks:
  - name: Checkout triage
    rule: Checkout pages
    steps: [Open the checkout dashboard, Name a commander]
channels:
  - name: payments-slack
    kind: slack
    url_env: TEST_PAYMENTS_SLACK_URL
    team: payments
    subscriptions:
      - events: [incident.opened, incident.resolved]
        services: [payments-gateway]
  - name: oncall-mail
    kind: email
    url: oncall@example.com
    subscriptions:
      - events: [sla.breached]
integrations:
  - name: grafana-prod
    format: grafana
    key_env: TEST_GRAFANA_KEY
  - name: webhooks-in
    format: generic
    on_all_resolved: resolve
  - name: signed-in
    format: generic
    key_env: TEST_SIGNED_KEY
"#
    );
    std::fs::write(&file, &text).unwrap();
    let line_of = |needle: &str| text[..text.find(needle).unwrap()].matches('\n').count() + 1;
    let signed_key = "signed-key-from-the-vault-0001";
    let vars = [
        ("TEST_PAYMENTS_SLACK_URL", slack),
        ("TEST_GRAFANA_KEY", grafana_key),
        ("TEST_SIGNED_KEY", signed_key),
    ];

    // A new channel or integration whose variable is not set is refused at that line.
    let (ok, said) = quell(&url, &["config", "apply", "-f", path, "--plan"]);
    assert!(!ok, "{said}");
    for (needle, var) in [
        ("url_env: TEST_PAYMENTS", "TEST_PAYMENTS_SLACK_URL"),
        ("key_env: TEST_GRAFANA", "TEST_GRAFANA_KEY"),
    ] {
        let at = format!("{path}:{}: ", line_of(needle));
        assert!(
            said.lines()
                .any(|l| l.contains(&at) && l.contains(&format!("{var} is not set"))),
            "{at} {var} in\n{said}"
        );
    }
    // An address inside this network is refused unless QUELL_WEBHOOK_ALLOW names it.
    let inside = [
        ("TEST_PAYMENTS_SLACK_URL", "http://127.0.0.1:9/hook"),
        vars[1],
        vars[2],
    ];
    let (ok, said) = quell_with(&url, &["config", "apply", "-f", path, "--plan"], &inside);
    assert!(!ok && said.contains("inside this network"), "{said}");
    let allowed = [
        inside[0],
        inside[1],
        inside[2],
        ("QUELL_WEBHOOK_ALLOW", "127.0.0.1"),
    ];
    let (ok, said) = quell_with(&url, &["config", "apply", "-f", path, "--plan"], &allowed);
    assert!(ok, "{said}");

    // The plan: every object made, then the rules put in the file's order. Nothing changes.
    let (ok, said) = quell_with(&url, &["config", "apply", "-f", path, "--plan"], &vars);
    assert!(ok, "{said}");
    assert_eq!(
        changes(&said),
        [
            format!(
                "create  routing rule       Checkout pages (line {})",
                line_of("- name: Checkout pages")
            ),
            format!(
                "create  routing rule       Payments critical (line {})",
                line_of("- name: Payments critical")
            ),
            format!(
                "create  runbook            Checkout triage (rule Checkout pages) (line {})",
                line_of("- name: Checkout triage")
            ),
            format!(
                "create  channel            payments-slack (line {})",
                line_of("- name: payments-slack")
            ),
            format!(
                "create  channel            oncall-mail (line {})",
                line_of("- name: oncall-mail")
            ),
            format!(
                "create  integration        grafana-prod (line {})",
                line_of("- name: grafana-prod")
            ),
            format!(
                "create  integration        webhooks-in (line {})",
                line_of("- name: webhooks-in")
            ),
            format!(
                "create  integration        signed-in (line {})",
                line_of("- name: signed-in")
            ),
            format!(
                "reorder routing rules, tried in this order (line 2): Checkout pages, Payments critical, {demo_rule}"
            ),
        ],
        "{said}"
    );
    assert!(
        !said.contains("signing secret"),
        "a plan shows no secret: {said}"
    );
    assert_eq!(rules(&pool).await, before);

    // Applied: the secrets Quell made are shown once; the ones the environment gave are not.
    let (ok, said) = quell_with(&url, &["config", "apply", "-f", path], &vars);
    assert!(ok, "{said}");
    assert!(said.contains("integration \"webhooks-in\": key "), "{said}");
    assert!(
        said.contains("integration \"webhooks-in\": signing secret "),
        "{said}"
    );
    assert!(
        !said.contains("channel \"payments-slack\""),
        "a Slack channel has no signing secret: {said}"
    );
    assert!(
        !said.contains(grafana_key) && !said.contains("grafana-prod\": key"),
        "{said}"
    );
    assert_eq!(
        rules(&pool).await,
        [
            "Checkout pages",
            "Payments critical",
            demo_rule,
            default_rule
        ]
    );
    let runbook_rule: String = sqlx::query_scalar(
        "select r.name from runbooks b join routing_rules r on r.id = b.rule_id
         where b.name = 'Checkout triage'",
    )
    .fetch_one(&pool)
    .await
    .unwrap();
    assert_eq!(runbook_rule, "Checkout pages");
    let stored: (String, Option<String>) = sqlx::query_as(
        "select c.url, t.slug from notification_channels c left join teams t on t.id = c.team_id
         where c.name = 'payments-slack'",
    )
    .fetch_one(&pool)
    .await
    .unwrap();
    assert_eq!(stored, (slack.to_owned(), Some("payments".to_owned())));
    let key_is = "select key_hash = sha256(convert_to($1, 'UTF8')) from integrations where name = 'grafana-prod'";
    let holds_key = |key: &'static str| {
        let pool = pool.clone();
        async move {
            sqlx::query_scalar::<_, bool>(key_is)
                .bind(key)
                .fetch_one(&pool)
                .await
                .unwrap()
        }
    };
    assert!(holds_key(grafana_key).await);
    let subscribed = count(
        &pool,
        "select count(*) from subscriptions s join notification_channels c on c.id = s.channel_id
         where c.name in ('payments-slack', 'oncall-mail')",
    )
    .await;
    assert_eq!(subscribed, 2);

    // Again, with the same environment: nothing to do, nothing written.
    let audited = count(&pool, "select count(*) from audit_log").await;
    let (ok, said) = quell_with(&url, &["config", "apply", "-f", path], &vars);
    assert!(ok && changes(&said).is_empty(), "{said}");
    assert_eq!(
        count(&pool, "select count(*) from audit_log").await,
        audited
    );

    // Exported: no secret in the file; the Slack address is a variable to read. Applied with
    // none of the variables set, the file changes nothing (what is not set is kept).
    let (ok, exported) = quell(&url, &["config", "export"]);
    assert!(ok, "{exported}");
    assert!(
        !exported.contains("first-token") && !exported.contains(grafana_key),
        "{exported}"
    );
    assert!(
        exported.contains("url_env: \"QUELL_CHANNEL_PAYMENTS_SLACK_URL\""),
        "{exported}"
    );
    assert!(
        exported.contains("url: \"oncall@example.com\""),
        "{exported}"
    );
    let export_file = dir.path().join("exported.yaml");
    std::fs::write(&export_file, &exported).unwrap();
    let exported_path = export_file.to_str().unwrap();
    let (ok, said) = quell(&url, &["config", "apply", "-f", exported_path, "--plan"]);
    assert!(ok && changes(&said).is_empty(), "{said}");

    // A new key in the vault: the plan names that field alone; applied, the old key stops.
    // A signed integration keeps its signing secret: its senders sign with it.
    let rotated = [
        vars[0],
        ("TEST_GRAFANA_KEY", "grafana-key-from-the-vault-0002"),
        ("TEST_SIGNED_KEY", "signed-key-from-the-vault-0002"),
    ];
    let (ok, said) = quell_with(&url, &["config", "apply", "-f", path, "--plan"], &rotated);
    assert!(ok, "{said}");
    assert_eq!(
        changes(&said),
        [
            format!(
                "update  integration        grafana-prod (line {}): key",
                line_of("- name: grafana-prod")
            ),
            format!(
                "update  integration        signed-in (line {}): key",
                line_of("- name: signed-in")
            )
        ],
        "{said}"
    );
    let secret = "select signing_secret from integrations where name = 'signed-in'";
    let signing: String = sqlx::query_scalar(secret).fetch_one(&pool).await.unwrap();
    let (ok, said) = quell_with(&url, &["config", "apply", "-f", path], &rotated);
    assert!(ok, "{said}");
    assert!(!said.contains("signing secret"), "{said}");
    assert!(!holds_key(grafana_key).await);
    assert!(holds_key("grafana-key-from-the-vault-0002").await);
    let kept: String = sqlx::query_scalar(secret).fetch_one(&pool).await.unwrap();
    assert_eq!(kept, signing);

    // The rules swapped in the file: exactly the order changes.
    let block = |name: &str| {
        let start = text.find(&format!("  - name: {name}\n")).unwrap();
        text[start..block_end(&text, start)].to_owned()
    };
    let (checkout, payments) = (block("Checkout pages"), block("Payments critical"));
    let swapped = text
        .replacen(&checkout, "@", 1)
        .replacen(&payments, &checkout, 1)
        .replacen('@', &payments, 1);
    std::fs::write(&file, &swapped).unwrap();
    let (ok, said) = quell_with(&url, &["config", "apply", "-f", path, "--plan"], &rotated);
    assert!(ok, "{said}");
    assert_eq!(
        changes(&said),
        [format!(
            "reorder routing rules, tried in this order (line 2): Payments critical, Checkout pages, {demo_rule}"
        )],
        "{said}"
    );
    let (ok, said) = quell_with(&url, &["config", "apply", "-f", path], &rotated);
    assert!(ok, "{said}");
    assert_eq!(
        rules(&pool).await,
        [
            "Payments critical",
            "Checkout pages",
            demo_rule,
            default_rule
        ]
    );

    // The default rule is tried last, so the file writes it last.
    let default_first = swapped.replacen(
        "routing_rules:\n",
        &format!("routing_rules:\n{}", block(default_rule)),
        1,
    );
    let last_default = default_first
        .rfind(&format!("  - name: {default_rule}\n"))
        .unwrap();
    let mut default_first = default_first.clone();
    default_first.replace_range(last_default..block_end(&default_first, last_default), "");
    std::fs::write(&file, &default_first).unwrap();
    let (ok, said) = quell_with(&url, &["config", "apply", "-f", path, "--plan"], &rotated);
    assert!(
        !ok && said.contains(&format!("{path}:3: routing rule: default: ")),
        "{said}"
    );

    // Two rules of one name in Quell: the file cannot say which it means, and says so.
    let mut conn = pool.acquire().await.unwrap();
    let twin = quell::routing::actions::RuleDraft {
        name: "Checkout pages".into(),
        conditions: vec!["labels.service = checkout-web".into()],
        service: "checkout-api".into(),
        ..Default::default()
    };
    let actor = quell::audit::Actor::system("test");
    let made = quell::routing::actions::create(&mut conn, &actor, &twin)
        .await
        .unwrap();
    std::fs::write(&file, &swapped).unwrap();
    let (ok, said) = quell_with(&url, &["config", "apply", "-f", path, "--plan"], &rotated);
    assert!(
        !ok && said.contains("more than one routing rule named \"Checkout pages\""),
        "{said}"
    );
    quell::routing::actions::delete(&mut conn, &actor, made.id)
        .await
        .unwrap();
    drop(conn);

    // Pruned: what the lists leave out goes; the default rule and the integrations stay.
    let pruned = format!(
        "{}runbooks: []\nchannels:\n{}integrations: []\n",
        &swapped[..swapped.find("runbooks:").unwrap()],
        block("oncall-mail")
    )
    .replace(&block("Checkout pages"), "");
    std::fs::write(&file, &pruned).unwrap();
    let (ok, said) = quell(&url, &["config", "apply", "-f", path, "--prune"]);
    assert!(ok, "{said}");
    let lines = changes(&said);
    for expected in [
        "delete  channel            payments-slack".to_owned(),
        "delete  runbook            Checkout triage (rule Checkout pages)".to_owned(),
        "delete  routing rule       Checkout pages".to_owned(),
        format!("delete  routing rule       {demo_rule}"),
        "keep    integration        grafana-prod: not in the file, but Quell does not delete integrations (their alerts name them); write it with disabled: true".to_owned(),
    ] {
        assert!(lines.contains(&expected.as_str()), "{expected} in\n{said}");
    }
    assert_eq!(rules(&pool).await, ["Payments critical", default_rule]);
    assert_eq!(count(&pool, "select count(*) from runbooks").await, 0);
    assert_eq!(
        count(
            &pool,
            "select count(*) from integrations where name in ('grafana-prod', 'webhooks-in')"
        )
        .await,
        2
    );

    // The default rule renamed in the file: the same rule, renamed, and its runbook follows it
    // (updated, not made again).
    let rule_and_runbook = |rule: &str| {
        format!(
            "routing_rules:\n{}  - name: {rule}\n    default: true\nrunbooks:\n  - name: Catch-all triage\n    rule: {rule}\n",
            block("Payments critical")
        )
    };
    std::fs::write(&file, rule_and_runbook(default_rule)).unwrap();
    let (ok, said) = quell(&url, &["config", "apply", "-f", path]);
    assert!(ok, "{said}");
    let runbook = "select b.id, r.name from runbooks b join routing_rules r on r.id = b.rule_id
                   where b.name = 'Catch-all triage'";
    let (made, _): (i64, String) = sqlx::query_as(runbook).fetch_one(&pool).await.unwrap();
    let renamed = rule_and_runbook("Everything else");
    std::fs::write(&file, &renamed).unwrap();
    let (ok, said) = quell(&url, &["config", "apply", "-f", path]);
    assert!(ok, "{said}");
    assert_eq!(
        changes(&said),
        [
            "update  routing rule       Everything else (line 6): name",
            "update  runbook            Catch-all triage (rule Everything else) (line 9): rule"
        ],
        "{said}"
    );
    assert_eq!(
        sqlx::query_as::<_, (i64, String)>(runbook)
            .fetch_one(&pool)
            .await
            .unwrap(),
        (made, "Everything else".to_owned())
    );
    assert_eq!(rules(&pool).await, ["Payments critical", "Everything else"]);
}
