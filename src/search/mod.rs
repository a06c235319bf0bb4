//! Full-text search over incidents, their timelines and their postmortems: PostgreSQL text
//! search (English stemming, `websearch_to_tsquery` syntax), one result per incident, ranked by
//! the sum of its matches (postmortem and incident text weigh more than timeline lines).

pub mod db;
pub mod handlers;
pub mod pages;

/// Where a snippet's match starts and ends (PostgreSQL's `ts_headline` markers).
pub const MARK_START: char = '«';
pub const MARK_END: char = '»';

/// A snippet cut at its markers: `(text, highlighted)` pieces, each shown escaped.
pub fn pieces(snippet: &str) -> Vec<(String, bool)> {
    let mut out = Vec::new();
    let mut rest = snippet;
    while let Some(start) = rest.find(MARK_START) {
        if start > 0 {
            out.push((rest[..start].to_owned(), false));
        }
        let after = &rest[start + MARK_START.len_utf8()..];
        match after.find(MARK_END) {
            Some(end) => {
                out.push((after[..end].to_owned(), true));
                rest = &after[end + MARK_END.len_utf8()..];
            }
            None => {
                rest = after;
            }
        }
    }
    if !rest.is_empty() {
        out.push((rest.to_owned(), false));
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn snippets_split_at_their_markers() {
        let p = super::pieces("a «connection pool» change «cap");
        assert_eq!(
            p,
            vec![
                ("a ".into(), false),
                ("connection pool".into(), true),
                (" change ".into(), false),
                ("cap".into(), false)
            ]
        );
    }
}
