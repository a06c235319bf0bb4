use super::*;

fn utc(s: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
}

fn local(s: &str) -> NaiveDateTime {
    NaiveDateTime::parse_from_str(s, "%Y-%m-%d %H:%M").unwrap()
}

fn weekly_berlin() -> Rotation {
    Rotation {
        length: ShiftLength::Week,
        // A Monday, 09:00 in Berlin.
        start: local("2026-01-05 09:00"),
        zone: chrono_tz::Europe::Berlin,
        people: vec!["ana".into(), "dev".into(), "priya".into()],
        restriction: None,
    }
}

/// (instant, who) across both of 2026's daylight-saving changes in Berlin (29 March and
/// 25 October): the Monday 09:00 handoff is 08:00 UTC in winter and 07:00 UTC in summer.
#[test]
fn a_berlin_rotation_hands_off_at_nine_local_in_summer_and_winter() {
    let r = weekly_berlin();
    let cases = [
        ("2026-01-05T07:59:00Z", None),
        ("2026-01-05T08:00:00Z", Some("ana")),
        ("2026-01-12T07:59:00Z", Some("ana")),
        ("2026-01-12T08:00:00Z", Some("dev")),
        // Monday 23 March (shift 11), still winter: 08:00 UTC.
        ("2026-03-23T07:59:00Z", Some("dev")),
        ("2026-03-23T08:00:00Z", Some("priya")),
        // Monday 30 March (shift 12), the day after clocks went forward: 07:00 UTC.
        ("2026-03-30T06:59:00Z", Some("priya")),
        ("2026-03-30T07:00:00Z", Some("ana")),
        // Monday 19 October (shift 41), summer: 07:00 UTC; Monday 26 October (shift 42),
        // winter again: 08:00 UTC.
        ("2026-10-19T06:59:00Z", Some("dev")),
        ("2026-10-19T07:00:00Z", Some("priya")),
        ("2026-10-26T07:59:00Z", Some("priya")),
        ("2026-10-26T08:00:00Z", Some("ana")),
    ];
    for (at, who) in cases {
        assert_eq!(
            r.at(utc(at)).map(|s| s.person),
            who.map(str::to_owned),
            "{at}"
        );
    }
    // The shift across the October change is an hour longer (169 h).
    let s = r.at(utc("2026-10-20T12:00:00Z")).unwrap();
    assert_eq!(
        (s.from, s.to),
        (utc("2026-10-19T07:00:00Z"), utc("2026-10-26T08:00:00Z"))
    );
    assert_eq!((s.to - s.from).num_hours(), 169);
}

#[test]
fn daily_and_hourly_rotations_and_a_handoff_in_the_spring_gap() {
    let daily = Rotation {
        length: ShiftLength::Day,
        // 02:30 does not exist in Berlin on 29 March: that handoff happens at 03:00.
        start: local("2026-03-27 02:30"),
        zone: chrono_tz::Europe::Berlin,
        people: vec!["a".into(), "b".into()],
        restriction: None,
    };
    let s = daily.at(utc("2026-03-29T01:10:00Z")).unwrap();
    assert_eq!(s.person, "a");
    assert_eq!(s.from, utc("2026-03-29T01:00:00Z"));
    let hourly = Rotation {
        length: ShiftLength::Hours { hours: 12 },
        start: local("2026-03-28 20:00"),
        zone: chrono_tz::UTC,
        people: vec!["x".into(), "y".into(), "z".into()],
        restriction: None,
    };
    assert_eq!(hourly.at(utc("2026-03-29T08:00:00Z")).unwrap().person, "y");
    assert_eq!(hourly.at(utc("2026-03-29T20:00:00Z")).unwrap().person, "z");
    assert_eq!(hourly.at(utc("2026-03-30T08:00:00Z")).unwrap().person, "x");
}

/// Berlin repeats 02:00-03:00 on 25 October 2026 (00:00-02:00 UTC). A daily handoff at 02:30
/// happens once, at the first 02:30 (00:30 UTC); during the second 02:00-02:30 (01:00-01:30
/// UTC) the next person is on call, as the spans say.
#[test]
fn a_handoff_in_the_repeated_hour_happens_once() {
    let daily = Rotation {
        length: ShiftLength::Day,
        start: local("2026-10-20 02:30"),
        zone: chrono_tz::Europe::Berlin,
        people: vec!["a".into(), "b".into()],
        restriction: None,
    };
    // 20 Oct is a (shift 0), so 25 Oct is b (shift 5).
    for (at, who) in [
        ("2026-10-25T00:29:59Z", "a"),
        ("2026-10-25T00:30:00Z", "b"),
        ("2026-10-25T01:00:00Z", "b"),
        ("2026-10-25T01:15:00Z", "b"),
        ("2026-10-25T01:29:59Z", "b"),
        ("2026-10-25T01:30:00Z", "b"),
        ("2026-10-26T01:29:59Z", "b"),
        ("2026-10-26T01:30:00Z", "a"),
    ] {
        assert_eq!(daily.at(utc(at)).unwrap().person, who, "{at}");
    }
    let s = daily.at(utc("2026-10-25T01:15:00Z")).unwrap();
    assert_eq!(
        (s.from, s.to),
        (utc("2026-10-25T00:30:00Z"), utc("2026-10-26T01:30:00Z"))
    );
    let schedule = Schedule {
        layers: vec![daily],
        overrides: vec![],
    };
    check_agreement(
        &schedule,
        utc("2026-10-24T00:00:00Z"),
        utc("2026-10-27T00:00:00Z"),
        60,
    )
    .unwrap();
}

/// A wall-clock time in a gap is the instant the clocks jumped, to the second, even for a
/// zone that skipped a whole day (Samoa, 30 December 2011).
#[test]
fn a_time_in_a_gap_is_the_instant_the_clocks_jumped() {
    assert_eq!(
        instant(chrono_tz::Europe::Berlin, local("2026-03-29 02:30")),
        utc("2026-03-29T01:00:00Z")
    );
    assert_eq!(
        instant(chrono_tz::Pacific::Apia, local("2011-12-30 09:00")),
        utc("2011-12-30T10:00:00Z")
    );
    // Lord Howe moves its clocks by half an hour.
    assert_eq!(
        instant(chrono_tz::Australia::Lord_Howe, local("2026-10-04 02:10")),
        utc("2026-10-03T15:30:00Z")
    );
}

/// Checks that who is on call at each instant (every `step` seconds from `from` to `to`, and
/// either side of every span's edges) is who the spans of the period name, and that the
/// spans are in order and do not overlap.
fn check_agreement(
    s: &Schedule,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
    step: i64,
) -> Result<Vec<Span>, String> {
    let spans = s.spans(from, to);
    for w in spans.windows(2) {
        if w[0].to > w[1].from || (w[0].to == w[1].from && w[0].person == w[1].person) {
            return Err(format!("spans out of order or unmerged: {w:?}"));
        }
    }
    let named = |t: DateTime<Utc>| {
        spans
            .iter()
            .find(|sp| sp.from <= t && t < sp.to)
            .map(|sp| sp.person.clone())
    };
    let mut instants: Vec<DateTime<Utc>> = Vec::new();
    let mut t = from;
    while t < to {
        instants.push(t);
        t += Duration::seconds(step);
    }
    for sp in &spans {
        for e in [sp.from, sp.to] {
            for d in [-1, 0, 1] {
                let i = e + Duration::seconds(d);
                if from <= i && i < to {
                    instants.push(i);
                }
            }
        }
    }
    for t in instants {
        if s.on_call(t) != named(t) {
            return Err(format!(
                "at {t}: on call {:?}, the spans name {:?}; spans {spans:?}",
                s.on_call(t),
                named(t)
            ));
        }
    }
    Ok(spans)
}

/// The instants a zone's offset changes in `year`, to the second.
fn transitions(zone: Tz, year: i32) -> Vec<DateTime<Utc>> {
    use chrono::Offset;
    let offset = |t: DateTime<Utc>| zone.offset_from_utc_datetime(&t.naive_utc()).fix();
    let mut out = Vec::new();
    let mut t = Utc.with_ymd_and_hms(year, 1, 1, 0, 0, 0).unwrap();
    let end = Utc.with_ymd_and_hms(year + 1, 1, 1, 0, 0, 0).unwrap();
    while t < end {
        let next = t + Duration::hours(12);
        if offset(t) != offset(next) {
            let (mut a, mut b) = (t, next);
            while b - a > Duration::seconds(1) {
                let mid = a + Duration::seconds((b - a).num_seconds() / 2);
                if offset(mid) == offset(a) {
                    a = mid;
                } else {
                    b = mid;
                }
            }
            out.push(b);
        }
        t = next;
    }
    out
}

/// Every zone whose clocks change in 2026 (daylight saving or otherwise), daily and weekly
/// rotations handing off just before, at, inside and after each change: who is on call at
/// every ten minutes of the change's two days agrees with the spans, and the spans name the
/// rotation's people in turn (each handoff once).
#[test]
fn on_call_and_spans_agree_around_every_zones_clock_changes() {
    let mut zones = 0;
    for zone in chrono_tz::TZ_VARIANTS {
        let changes = transitions(zone, 2026);
        if !changes.is_empty() {
            zones += 1;
        }
        for change in changes {
            // The wall-clock time just before the change.
            let before = (change - Duration::seconds(1))
                .with_timezone(&zone)
                .naive_local();
            for minutes in [-61, -30, 0, 1, 15, 30, 45, 59, 60, 61, 90, 120] {
                let handoff = before + Duration::minutes(minutes);
                for length in [ShiftLength::Day, ShiftLength::Week] {
                    let rotation = Rotation {
                        length,
                        start: handoff - Duration::days(21),
                        zone,
                        people: vec!["a".into(), "b".into(), "c".into()],
                        restriction: None,
                    };
                    let s = Schedule {
                        layers: vec![rotation],
                        overrides: vec![],
                    };
                    let spans = check_agreement(
                        &s,
                        change - Duration::days(1),
                        change + Duration::days(1),
                        600,
                    )
                    .unwrap_or_else(|e| panic!("{zone} {handoff} {length:?}: {e}"));
                    in_turn(&spans, &s.layers[0])
                        .unwrap_or_else(|e| panic!("{zone} {handoff} {length:?}: {e}"));
                }
            }
        }
    }
    assert!(
        zones > 100,
        "only {zones} zones change their clocks in 2026"
    );
}

/// The spans of a one-layer schedule name its people in turn: each handoff once, none
/// repeated, and none skipped but a shift of no length (a day a zone skipped).
fn in_turn(spans: &[Span], r: &Rotation) -> Result<(), String> {
    for w in spans.windows(2) {
        let (k1, ..) = r.shift_at(w[1].from - Duration::seconds(1));
        let (k2, ..) = r.shift_at(w[1].from);
        let empty_between = (k1 + 1..k2).all(|j| r.handoff(j) == r.handoff(j + 1));
        if w[0].to != w[1].from || k2 <= k1 || !empty_between {
            return Err(format!("not in turn ({k1} then {k2}): {w:?}"));
        }
    }
    Ok(())
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]
    /// Any zone, any year from 1990 to 2037, any handoff time near one of its clock changes,
    /// any shift length, with an override: on call and spans agree at every instant, and a
    /// one-layer rotation hands off in turn.
    #[test]
    fn on_call_and_spans_never_disagree(
        zone in proptest::sample::select(chrono_tz::TZ_VARIANTS.to_vec()),
        year in 1990i32..2038,
        pick in 0usize..8,
        minutes in -180i64..180,
        seconds in 0i64..60,
        back in 0i64..40,
        kind in 0u8..4,
        people in 1usize..5,
        cover in proptest::option::of((0i64..2880, 1i64..600)),
        window in proptest::option::of((0u32..24, 0u32..24, 0u8..128)),
    ) {
        let changes = transitions(zone, year);
        // A zone that keeps its clocks that year still has to agree, around midsummer.
        let change = changes
            .get(pick % changes.len().max(1))
            .copied()
            .unwrap_or_else(|| Utc.with_ymd_and_hms(year, 6, 21, 0, 0, 0).unwrap());
        let before = (change - Duration::seconds(1)).with_timezone(&zone).naive_local();
        let handoff = before + Duration::minutes(minutes) + Duration::seconds(seconds);
        let length = match kind {
            0 => ShiftLength::Day,
            1 => ShiftLength::Week,
            2 => ShiftLength::Hours { hours: 1 },
            _ => ShiftLength::Hours { hours: 25 },
        };
        let names: Vec<String> = (0..people).map(|n| format!("p{n}")).collect();
        let rotation = Rotation {
            length,
            start: handoff - Duration::days(back),
            zone,
            people: names,
            // Any window, through midnight or not, on any days, across the clock change.
            restriction: window.map(|(from, to, days)| Restriction {
                days: (0u8..7)
                    .filter(|d| days & (1 << d) != 0)
                    .map(|d| Weekday::try_from(d).unwrap())
                    .collect(),
                from: NaiveTime::from_hms_opt(from, 30, 0).unwrap(),
                to: NaiveTime::from_hms_opt(to, 0, 0).unwrap(),
            }),
        };
        let from = change - Duration::hours(36);
        let to = change + Duration::hours(36);
        let alone = Schedule { layers: vec![rotation.clone()], overrides: vec![] };
        let spans = check_agreement(&alone, from, to, 300)
            .map_err(proptest::test_runner::TestCaseError::fail)?;
        // Turns are taken without gaps only when the layer is always on call.
        if people > 1 && window.is_none() {
            in_turn(&spans, &alone.layers[0]).map_err(proptest::test_runner::TestCaseError::fail)?;
        }
        if let Some((at, long)) = cover {
            let o_from = from + Duration::minutes(at);
            let covered = Schedule {
                layers: vec![rotation],
                overrides: vec![Override {
                    from: o_from,
                    to: o_from + Duration::minutes(long),
                    replaces: None,
                    with: "cover".into(),
                }],
            };
            check_agreement(&covered, from, to, 300)
                .map_err(proptest::test_runner::TestCaseError::fail)?;
        }
    }
}

#[test]
fn higher_layers_and_overrides_win_and_spans_merge() {
    let base = weekly_berlin();
    let weekend = Rotation {
        length: ShiftLength::Week,
        start: local("2026-10-24 09:00"),
        zone: chrono_tz::Europe::Berlin,
        people: vec!["sam".into()],
        restriction: None,
    };
    let s = Schedule {
        layers: vec![base, weekend],
        overrides: vec![Override {
            from: utc("2026-10-22T12:00:00Z"),
            to: utc("2026-10-22T18:00:00Z"),
            replaces: Some("priya".into()),
            with: "lena".into(),
        }],
    };
    s.check().unwrap();
    assert_eq!(
        s.on_call(utc("2026-10-22T13:00:00Z")).as_deref(),
        Some("lena")
    );
    assert_eq!(
        s.on_call(utc("2026-10-22T19:00:00Z")).as_deref(),
        Some("priya")
    );
    assert_eq!(
        s.on_call(utc("2026-10-25T12:00:00Z")).as_deref(),
        Some("sam")
    );
    let spans = s.spans(utc("2026-10-22T00:00:00Z"), utc("2026-10-25T00:00:00Z"));
    let who: Vec<(&str, String)> = spans
        .iter()
        .map(|s| (s.person.as_str(), s.from.format("%d %H:%M").to_string()))
        .collect();
    assert_eq!(
        who,
        [
            ("priya", "22 00:00".into()),
            ("lena", "22 12:00".into()),
            ("priya", "22 18:00".into()),
            ("sam", "24 07:00".into())
        ]
    );
}

#[test]
fn bad_schedules_name_the_field() {
    let field = |s: &Schedule| match s.check().unwrap_err() {
        DomainError::Invalid { field, .. } => field,
        DomainError::Conflict(m) => m,
    };
    let mut s = Schedule {
        layers: vec![weekly_berlin()],
        overrides: vec![],
    };
    s.layers[0].people.clear();
    assert_eq!(field(&s), "layers[0].people");
    s.layers[0] = weekly_berlin();
    s.layers[0].length = ShiftLength::Hours { hours: 0 };
    assert_eq!(field(&s), "layers[0].length.hours");
    // A first handoff near the calendar's ends would overflow chrono's arithmetic.
    s.layers[0] = weekly_berlin();
    s.layers[0].start = local("2500-01-05 09:00");
    assert_eq!(field(&s), "layers[0].start");
    s.layers[0].start = local("1899-12-31 09:00");
    assert_eq!(field(&s), "layers[0].start");
    s.layers[0] = weekly_berlin();
    let o = |from: &str, to: &str| Override {
        from: utc(from),
        to: utc(to),
        replaces: None,
        with: "lena".into(),
    };
    s.overrides = vec![o("2026-10-22T12:00:00Z", "2026-10-22T11:00:00Z")];
    assert_eq!(field(&s), "overrides[0].to");
    s.overrides = vec![
        o("2026-10-22T12:00:00Z", "2026-10-22T18:00:00Z"),
        o("2026-10-22T17:00:00Z", "2026-10-22T20:00:00Z"),
    ];
    assert_eq!(field(&s), "overrides[1]");
    match parse_zone("time_zone", "Europe/Lisbn").unwrap_err() {
        DomainError::Invalid { field, message } => {
            assert_eq!(field, "time_zone");
            assert!(message.contains("Europe/Lisbn"), "{message}");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        parse_zone("z", "Europe/Lisbon").unwrap(),
        chrono_tz::Europe::Lisbon
    );
}

#[test]
fn a_calendar_feed_lists_shifts_in_utc_and_escapes_text() {
    let t = |h| Utc.with_ymd_and_hms(2026, 10, 26, h, 0, 0).unwrap();
    let feed = ical(
        "ana",
        &[Shift {
            schedule_id: 3,
            schedule: "Payments, primary; EU".into(),
            from: t(9),
            to: t(17),
        }],
        t(8),
    );
    assert!(feed.starts_with("BEGIN:VCALENDAR\r\n"));
    assert!(feed.ends_with("END:VCALENDAR\r\n"));
    assert!(feed.contains("DTSTART:20261026T090000Z\r\nDTEND:20261026T170000Z\r\n"));
    assert!(
        feed.contains("SUMMARY:On call: Payments\\, primary\\; EU\r\n"),
        "{feed}"
    );
    assert_eq!(feed.matches("BEGIN:VEVENT").count(), 1);
}

/// A working-hours layer (Mon–Fri 09:00–17:00 in Berlin) over a round-the-clock one: the
/// working-hours person is on call only inside those windows, across a daylight-saving change,
/// and the spans agree with `on_call` at every minute.
#[test]
fn a_restricted_layer_is_on_call_only_inside_its_windows() {
    let night = Rotation {
        restriction: None,
        ..weekly_berlin()
    };
    let office = Rotation {
        length: ShiftLength::Week,
        start: local("2026-03-23 09:00"),
        zone: chrono_tz::Europe::Berlin,
        people: vec!["lena".into()],
        restriction: Some(Restriction {
            days: vec![
                Weekday::Mon,
                Weekday::Tue,
                Weekday::Wed,
                Weekday::Thu,
                Weekday::Fri,
            ],
            from: NaiveTime::from_hms_opt(9, 0, 0).unwrap(),
            to: NaiveTime::from_hms_opt(17, 0, 0).unwrap(),
        }),
    };
    let s = Schedule {
        layers: vec![night, office],
        overrides: vec![],
    };
    // Friday 27 March 2026, 10:00 Berlin (CET, UTC+1) = 09:00 UTC: Lena.
    assert_eq!(
        s.on_call(utc("2026-03-27T09:00:00Z")).as_deref(),
        Some("lena")
    );
    // Friday 17:00 Berlin = 16:00 UTC: back to the weekly rotation.
    assert_ne!(
        s.on_call(utc("2026-03-27T16:00:00Z")).as_deref(),
        Some("lena")
    );
    // Saturday 10:00: not a working day.
    assert_ne!(
        s.on_call(utc("2026-03-28T09:00:00Z")).as_deref(),
        Some("lena")
    );
    // Monday 30 March (CEST, UTC+2), 09:00 Berlin = 07:00 UTC: Lena, an hour earlier in UTC.
    assert_eq!(
        s.on_call(utc("2026-03-30T07:00:00Z")).as_deref(),
        Some("lena")
    );
    assert_ne!(
        s.on_call(utc("2026-03-30T06:59:00Z")).as_deref(),
        Some("lena")
    );
    let spans = check_agreement(
        &s,
        utc("2026-03-25T00:00:00Z"),
        utc("2026-04-02T00:00:00Z"),
        60,
    )
    .unwrap();
    let lena: Vec<(String, String)> = spans
        .iter()
        .filter(|sp| sp.person == "lena")
        .map(|sp| {
            (
                sp.from.format("%a %H:%M").to_string(),
                sp.to.format("%a %H:%M").to_string(),
            )
        })
        .collect();
    assert_eq!(
        lena,
        [
            ("Wed 08:00", "Wed 16:00"),
            ("Thu 08:00", "Thu 16:00"),
            ("Fri 08:00", "Fri 16:00"),
            ("Mon 07:00", "Mon 15:00"),
            ("Tue 07:00", "Tue 15:00"),
            ("Wed 07:00", "Wed 15:00"),
        ]
        .map(|(a, b)| (a.to_owned(), b.to_owned()))
    );
}

/// A window through midnight (20:00–08:00) opens on its day and closes the next morning; an
/// empty day list is every day; a day named twice is refused naming the field.
#[test]
fn a_window_through_midnight_belongs_to_the_day_it_opens() {
    let nights = Restriction {
        days: vec![Weekday::Fri],
        from: NaiveTime::from_hms_opt(20, 0, 0).unwrap(),
        to: NaiveTime::from_hms_opt(8, 0, 0).unwrap(),
    };
    assert!(nights.covers(local("2026-03-27 21:00")), "Friday night");
    assert!(
        nights.covers(local("2026-03-28 07:59")),
        "Saturday morning, opened Friday"
    );
    assert!(!nights.covers(local("2026-03-28 08:00")));
    assert!(
        !nights.covers(local("2026-03-28 21:00")),
        "Saturday night is not Friday's"
    );
    assert!(
        !nights.covers(local("2026-03-27 07:00")),
        "Friday morning opened Thursday"
    );
    assert_eq!(nights.describe(), "Fri 20:00–08:00");
    let every = Restriction {
        days: vec![],
        from: NaiveTime::from_hms_opt(9, 0, 0).unwrap(),
        to: NaiveTime::from_hms_opt(9, 0, 0).unwrap(),
    };
    assert!(every.covers(local("2026-03-28 03:00")));
    assert_eq!(every.describe(), "every day all day from 09:00");
    let twice = Rotation {
        restriction: Some(Restriction {
            days: vec![Weekday::Mon, Weekday::Mon],
            ..nights
        }),
        ..weekly_berlin()
    };
    match twice.check("layers[1]") {
        Err(DomainError::Invalid { field, .. }) => assert_eq!(field, "layers[1].restriction.days"),
        other => panic!("{other:?}"),
    }
}
