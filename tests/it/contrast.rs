//! Every text colour of the stylesheet against the backgrounds it is drawn on, in light and dark
//! mode: at least 4.5:1, WCAG AA for normal text. The colours are read from static/quell.css
//! itself (its custom properties, and rules that set a literal colour and background together),
//! and every `color: var(--x)` the stylesheet uses must be one this test checks.

use std::collections::BTreeMap;

const CSS: &str = include_str!("../../static/quell.css");

/// The CSS without its comments.
fn uncommented(css: &str) -> String {
    let mut out = String::new();
    let mut rest = css;
    while let Some(open) = rest.find("/*") {
        out.push_str(&rest[..open]);
        rest = rest[open..]
            .find("*/")
            .map_or("", |end| &rest[open + end + 2..]);
    }
    out.push_str(rest);
    out
}

/// `--name: #rrggbb` declarations in a block of CSS.
fn variables(block: &str) -> BTreeMap<String, String> {
    let mut vars = BTreeMap::new();
    for decl in uncommented(block).split([';', '{', '}']) {
        if let Some((name, value)) = decl.trim().split_once(':')
            && let Some(name) = name.trim().strip_prefix("--")
            && value.trim().starts_with('#')
        {
            vars.insert(name.to_owned(), value.trim().to_owned());
        }
    }
    vars
}

/// The light palette (`:root`) and the dark one (`:root` overridden under
/// `prefers-color-scheme: dark`).
fn palettes() -> [(&'static str, BTreeMap<String, String>); 2] {
    let root = CSS.find(":root {").expect(":root");
    let light = variables(&CSS[root..root + CSS[root..].find('}').unwrap()]);
    let dark_at = CSS.find("prefers-color-scheme: dark").expect("a dark mode");
    let inner = dark_at + CSS[dark_at..].find(":root {").unwrap();
    let mut dark = light.clone();
    dark.extend(variables(
        &CSS[inner..inner + CSS[inner..].find('}').unwrap()],
    ));
    [("light", light), ("dark", dark)]
}

fn luminance(hex: &str) -> f64 {
    let h = hex.trim_start_matches('#');
    let h = if h.len() == 3 {
        h.chars().flat_map(|c| [c, c]).collect::<String>()
    } else {
        h.to_owned()
    };
    let channel = |i: usize| {
        let c = f64::from(u8::from_str_radix(&h[i..i + 2], 16).unwrap()) / 255.0;
        if c <= 0.03928 {
            c / 12.92
        } else {
            ((c + 0.055) / 1.055).powf(2.4)
        }
    };
    0.2126 * channel(0) + 0.7152 * channel(2) + 0.0722 * channel(4)
}

fn contrast(a: &str, b: &str) -> f64 {
    let (la, lb) = (luminance(a), luminance(b));
    (la.max(lb) + 0.05) / (la.min(lb) + 0.05)
}

/// Text colours drawn on the page and on panels.
const TEXT: &[&str] = &[
    "ink", "muted", "accent", "sev1", "sev2", "sev3", "sev4", "ok", "warn",
];
/// (text, background) pairs drawn on a coloured fill.
const ON_FILL: &[(&str, &str)] = &[
    ("badge-ink", "badge-sev1"),
    ("badge-ink", "badge-sev2"),
    ("badge-ink", "badge-sev3"),
    ("badge-ink", "badge-sev4"),
    ("accent-ink", "accent"),
];

#[test]
fn every_text_colour_reaches_4_5_to_1_in_both_modes() {
    let mut failures = Vec::new();
    for (mode, vars) in palettes() {
        let get = |name: &str| {
            vars.get(name)
                .unwrap_or_else(|| panic!("--{name} is not defined"))
                .clone()
        };
        let mut pairs: Vec<(String, String)> = Vec::new();
        for fg in TEXT {
            for bg in ["panel", "bg"] {
                pairs.push((fg.to_string(), bg.to_string()));
            }
        }
        pairs.extend(ON_FILL.iter().map(|(a, b)| (a.to_string(), b.to_string())));
        for (fg, bg) in pairs {
            let ratio = contrast(&get(&fg), &get(&bg));
            if ratio < 4.5 {
                failures.push(format!("{mode}: --{fg} on --{bg} is {ratio:.2}:1"));
            }
        }
    }
    // Rules that set a literal text colour on a literal background (the diff's colours).
    for rule in CSS.split('}') {
        let (mut fg, mut bg) = (None, None);
        for decl in rule.split(['{', ';']) {
            match decl.trim().split_once(':') {
                Some(("color", v)) if v.trim().starts_with('#') => fg = Some(v.trim().to_owned()),
                Some(("background", v)) if v.trim().starts_with('#') => {
                    bg = Some(v.trim().to_owned())
                }
                _ => {}
            }
        }
        if let (Some(fg), Some(bg)) = (fg, bg)
            && contrast(&fg, &bg) < 4.5
        {
            failures.push(format!(
                "{} sets {fg} on {bg}",
                rule.trim().lines().last().unwrap_or("")
            ));
        }
    }
    assert!(failures.is_empty(), "below 4.5:1:\n{}", failures.join("\n"));
}

#[test]
fn every_colour_the_stylesheet_uses_for_text_is_checked() {
    let checked: Vec<&str> = TEXT
        .iter()
        .copied()
        .chain(ON_FILL.iter().map(|(fg, _)| *fg))
        .collect();
    for (at, _) in CSS.match_indices("color: var(--") {
        // `border-left-color: var(--x)` draws no text.
        if CSS[..at].ends_with('-') {
            continue;
        }
        let name = CSS[at + "color: var(--".len()..].split(')').next().unwrap();
        assert!(
            checked.contains(&name),
            "text drawn in --{name}, which the contrast test does not check"
        );
    }
}
