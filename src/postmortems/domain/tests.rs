use super::*;

fn line(kind: Kind, details: serde_json::Value, body: &str, minutes: i64) -> String {
    let detected = DateTime::parse_from_rfc3339("2026-09-17T16:07:00Z")
        .unwrap()
        .to_utc();
    event_line(&EventLine {
        kind,
        details: &details,
        body,
        occurred_at: detected + chrono::Duration::minutes(minutes),
        detected_at: detected,
        update_number: 1,
        headline: "headline".into(),
    })
}

#[test]
fn events_are_worded_as_the_reference_timeline_with_their_figures_computed() {
    use serde_json::json;
    assert_eq!(
        line(
            Kind::Opened,
            json!({"severity": "Sev2"}),
            "Alert fires; INC-1187 opened automatically",
            0
        ),
        "Alert fires; INC-1187 opened automatically as Sev2"
    );
    assert_eq!(
        line(
            Kind::Acknowledged,
            json!({}),
            "Primary on call acknowledges",
            9
        ),
        "Primary on call acknowledges (9 min)"
    );
    assert_eq!(
        line(Kind::Acknowledged, json!({}), "", 9),
        "Acknowledged (9 min)"
    );
    assert_eq!(
        line(
            Kind::SeverityChanged,
            json!({"from": "Sev2", "to": "Sev1"}),
            "checkout failing",
            13
        ),
        "Raised to Sev1 (checkout failing)"
    );
    assert_eq!(
        line(
            Kind::SeverityChanged,
            json!({"from": "Sev1", "to": "Sev3"}),
            "",
            13
        ),
        "Lowered to Sev3"
    );
    assert_eq!(
        line(Kind::Mitigated, json!({}), "Error rate under 0.5%", 45),
        "Error rate under 0.5%; incident marked Mitigated"
    );
    assert_eq!(
        line(Kind::Resolved, json!({}), "Root cause recorded", 213),
        "Root cause recorded; incident Resolved"
    );
    assert_eq!(
        line(
            Kind::StakeholderUpdate,
            json!({"audience": "executives"}),
            "Card payments…",
            17
        ),
        "First stakeholder update sent"
    );
    assert_eq!(
        line(Kind::Note, json!({}), "Bridge opened", 13),
        "Bridge opened"
    );
    assert_eq!(line(Kind::Edited, json!({}), "", 13), "headline");
    assert_eq!(ordinal(2), "Second");
    assert_eq!(
        (ordinal(11), ordinal(22), ordinal(103)),
        ("11th".into(), "22nd".into(), "103rd".into())
    );
}

#[test]
fn events_of_one_minute_make_one_line_with_roles_said_once() {
    let ev = |t: &str, text: &str, role: Option<&str>| {
        (t.to_owned(), text.to_owned(), role.map(str::to_owned))
    };
    let lines = merge_minutes(vec![
        ev("16:16", "Primary on call acknowledges (9 min)", None),
        ev(
            "16:20",
            "Raised to Sev1 (checkout failing for > 25% of requests)",
            None,
        ),
        ev("16:20", "", Some("IC Ana Ribeiro")),
        ev("16:20", "", Some("comms lead")),
        ev("16:20", "", Some("scribe")),
        ev("16:20", "Bridge opened", None),
        ev("16:24", "First stakeholder update sent", None),
    ]);
    assert_eq!(
        lines,
        vec![
            ("16:16".to_owned(), "Primary on call acknowledges (9 min)".to_owned()),
            (
                "16:20".to_owned(),
                "Raised to Sev1 (checkout failing for > 25% of requests); IC Ana Ribeiro, comms lead and scribe assigned; bridge opened".to_owned()
            ),
            ("16:24".to_owned(), "First stakeholder update sent".to_owned()),
        ]
    );
    assert_eq!(and_list(&["a".into(), "b".into()]), "a and b");
    assert_eq!(clause("Ana Ribeiro took over"), "Ana Ribeiro took over");
    assert_eq!(clause("DNS failed"), "DNS failed");
    assert_eq!(clause("Rollback"), "rollback");
}

#[test]
fn prose_cites_figures_by_name() {
    let values = vec![
        ("failed_share", "31%".to_owned()),
        ("impact_duration", format_minutes_long(50 * 60)),
        ("mitigated_at", "16:52".to_owned()),
    ];
    assert_eq!(
        fill_figures(
            "{failed_share} of authorization requests failed for {impact_duration}. Restored at {mitigated_at}.",
            &values
        ),
        "31% of authorization requests failed for 50 minutes. Restored at 16:52."
    );
    assert_eq!(
        fill_figures("{unknown} {\"json\": 1} {failed_share", &values),
        "{unknown} {\"json\": 1} {failed_share"
    );
    assert_eq!(fill_figures("{{failed_share}}", &values), "{31%}");
    assert_eq!(format_minutes_long(60), "1 minute");
    assert_eq!(format_minutes_long(2 * 3600 + 2 * 60), "2 hours 2 minutes");
    assert_eq!(format_minutes_long(86_400 + 3600), "1 day 1 hour");
    assert_eq!(format_minutes_long(0), "0 minutes");
}

#[test]
fn comments_name_a_part_and_say_something() {
    assert_eq!(check_comment_part(" root_cause ").unwrap(), "root_cause");
    assert_eq!(check_comment_part("timeline").unwrap(), "timeline");
    let err = format!("{:?}", check_comment_part("epilogue").unwrap_err());
    assert!(err.contains("summary, impact, figures"), "{err}");
    assert!(check_comment_body("  ").is_err());
    assert!(check_comment_body(&"x".repeat(4001)).is_err());
    assert_eq!(check_comment_body(" a\r\nb ").unwrap(), "a\nb");
}

#[test]
fn shares_are_whole_percent() {
    assert_eq!(share_percent(109_400, 352_800), Some(31));
    assert_eq!(share_percent(1, 0), None);
}

#[test]
fn counts_and_lines_read_like_the_reference() {
    assert_eq!(grouped(109_400), "109 400");
    assert_eq!(grouped(24_870), "24 870");
    assert_eq!(grouped(999), "999");
    assert_eq!(
        failure_line(
            "Authorization requests",
            109_400,
            Some(352_800),
            Some(("16:02", "16:52"))
        ),
        "Authorization requests failed: 109 400 of 352 800 (31%) between 16:02 and 16:52."
    );
    assert_eq!(
        response_line(5 * 60, Some(122 * 60), Some(9 * 60), Some(45 * 60)),
        "Time to detect: 5 min from first error, 2 h 2 min from the change. Time to acknowledge: 9 min. Time to mitigate: 45 min from alert."
    );
    assert_eq!(crate::domain::percent(99.95), "99.95%");
}

#[test]
fn markdown_is_rendered_and_hostile_html_is_removed() {
    let html = render_markdown(
        "**bold** <script>alert(1)</script> <img src=x onerror=alert(2)> [x](javascript:alert(3))",
    )
    .to_string();
    assert!(html.contains("<strong>bold</strong>"));
    assert!(!html.contains("<script"));
    assert!(!html.contains("onerror"));
    assert!(!html.contains("javascript:"));
    assert!(render_markdown("• a\n- b").as_str().contains("<li>b</li>"));
}

#[test]
fn publishing_says_what_is_missing() {
    assert_eq!(
        missing_for_publication("Little's law", 1, Some(5)),
        Vec::<&str>::new()
    );
    assert_eq!(
        missing_for_publication(" ", 0, None),
        vec![
            "a root cause",
            "at least one action item with an owner and a due date",
            "the impact figures (how many requests failed)"
        ]
    );
}

#[test]
fn a_readable_diff_marks_changed_words_and_ignores_links_that_appeared() {
    let before = "## Action items\n\n| # | Action | Work item |\n|---|---|---|\n| 1 | Size the pool | AB#2311 |\n\nLessons are **hard**.";
    let after = "## Action items\n\n| # | Action | Work item |\n|---|---|---|\n| 1 | Size the pool | [AB#2311](https://dev.azure.com/x/2311) |\n\nLessons are easy.";
    let rows = readable_diff(before, after, 0);
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0].kind, "changed");
    assert_eq!(
        rows[0].pieces,
        [
            Piece::Same("Lessons are ".into()),
            Piece::Removed("hard.".into()),
            Piece::Added("easy.".into())
        ]
    );
    assert_eq!(readable("| 1 | a \\| b | c |"), "1 · a | b · c");
}

#[test]
fn diffs_show_changed_lines_with_context() {
    let d = diff("a\nb\nc\nd\ne\nf", "a\nb\nC\nd\ne\nf", 1);
    assert_eq!(
        d,
        vec![
            DiffLine::Same("b".into()),
            DiffLine::Removed("c".into()),
            DiffLine::Added("C".into()),
            DiffLine::Same("d".into())
        ]
    );
    assert!(diff("same", "same", 2).is_empty());
}

#[test]
fn sections_and_types_are_named() {
    assert_eq!(Section::parse("root_cause").unwrap().title(), "Root cause");
    assert!(Section::parse("epilogue").is_err());
}
