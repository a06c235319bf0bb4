use super::*;
use crate::domain::arbitrary::text;
use proptest::prelude::*;

/// Markdown-ish text: headings, links (some hostile), inline HTML, tables, code.
fn markdown() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        3 => text(),
        1 => prop::sample::select(vec![
            "# Heading", "- item", "| a | b |\n|---|---|\n| 1 | 2 |", "```\ncode\n```",
            "[ok](https://example.com)", "[bad](javascript:alert(1))", "<img src=x onerror=alert(1)>",
            "<a href=\"javascript:x\">y</a>", "<script>alert(1)</script>", "<div onclick=x>z</div>",
            "<iframe src=x></iframe>", "**bold** _em_ ~~gone~~", "<svg onload=alert(1)>",
        ])
        .prop_map(str::to_owned),
    ];
    prop::collection::vec(piece, 0..8).prop_map(|p| p.join("\n"))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    /// Whatever is written, the HTML shown carries no script, no event handler, no
    /// `javascript:` link and no frame or image.
    #[test]
    fn rendered_markdown_is_always_safe(md in markdown()) {
        let html = render_markdown(&md).0.to_ascii_lowercase();
        // Text may say anything (escaped); the tags may not.
        let tag = regex::Regex::new(r"<[^>]*>").unwrap();
        let handler = regex::Regex::new(r"\son[a-z]+\s*=").unwrap();
        for t in tag.find_iter(&html).map(|m| m.as_str()) {
            for bad in ["<script", "<iframe", "<img", "<svg", "<object", "<embed", "javascript:"] {
                prop_assert!(!t.contains(bad), "{bad} in {t} of {html}");
            }
            prop_assert!(!handler.is_match(t), "an event handler in {t} of {html}");
        }
    }
}
