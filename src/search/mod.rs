//! Full-text search over incidents, their timelines and their postmortems: PostgreSQL text
//! search (English stemming, `websearch_to_tsquery` syntax), one result per incident, ranked by
//! the sum of its matches (postmortem and incident text weigh more than timeline lines) among
//! each source's newest matches (see [`db::search`]).

pub mod db;
pub mod handlers;
pub mod pages;
pub mod routes;

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

/// The snippet without the incident's title at its start (the result shows the title already).
pub fn without_title(pieces: Vec<(String, bool)>, title: &str) -> Vec<(String, bool)> {
    let plain: String = pieces.iter().map(|(t, _)| t.as_str()).collect();
    if title.is_empty() || !plain.starts_with(title) {
        return pieces;
    }
    let mut skip = title.len();
    let mut out = Vec::new();
    for (text, hl) in pieces {
        if skip >= text.len() {
            skip -= text.len();
            continue;
        }
        let rest = if skip > 0 {
            text[skip..].trim_start().to_owned()
        } else {
            text
        };
        skip = 0;
        if !rest.is_empty() {
            out.push((rest, hl));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_snippet_does_not_repeat_the_title() {
        let p = super::pieces("«payments»-gateway timeouts A change capped «payments» connections");
        let rest = super::without_title(p, "payments-gateway timeouts");
        assert_eq!(
            rest,
            [
                ("A change capped ".to_owned(), false),
                ("payments".to_owned(), true),
                (" connections".to_owned(), false)
            ]
        );
    }

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
