//! Reading exports' JSON a record at a time, into the few fields kept, without building the
//! whole document first: a `serde_json::Value` tree takes about 32 bytes a value, so a 200 MiB
//! unpacked `[0,0,…]` became gigabytes before anything was checked. Here a list is walked
//! element by element, each element read into a small typed record whose unknown fields are
//! skipped without being kept, and a wrong element is refused at once.

use std::cell::RefCell;
use std::fmt;
use std::marker::PhantomData;

use serde::Deserialize;
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

use crate::domain::DomainError;

/// The visitor methods for JSON's scalars, each answering `$value`, for visitors that read
/// lists and objects and pass over anything else: `@null` (null, absent), `@number` (numbers
/// and booleans), or all of them with text too.
macro_rules! scalars_are {
    (@null $value:expr) => {
        fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
            Ok($value)
        }
        fn visit_none<E: serde::de::Error>(self) -> Result<Self::Value, E> {
            Ok($value)
        }
    };
    (@number $value:expr) => {
        fn visit_bool<E: serde::de::Error>(self, _: bool) -> Result<Self::Value, E> {
            Ok($value)
        }
        fn visit_i64<E: serde::de::Error>(self, _: i64) -> Result<Self::Value, E> {
            Ok($value)
        }
        fn visit_u64<E: serde::de::Error>(self, _: u64) -> Result<Self::Value, E> {
            Ok($value)
        }
        fn visit_f64<E: serde::de::Error>(self, _: f64) -> Result<Self::Value, E> {
            Ok($value)
        }
    };
    ($value:expr) => {
        fn visit_str<E: serde::de::Error>(self, _: &str) -> Result<Self::Value, E> {
            Ok($value)
        }
        $crate::evidence::domain::stream::scalars_are!(@null $value);
        $crate::evidence::domain::stream::scalars_are!(@number $value);
    };
}
pub(crate) use scalars_are;

/// The longest text a field keeps, in bytes: longer is cut there (nothing an import keeps is
/// that long), so a 200 MiB string is not copied again and again on its way to being refused.
pub const FIELD_BYTES: usize = 256 * 1024;

/// Where `v` is cut to at most [`FIELD_BYTES`], on a character's boundary.
fn cut(v: &str) -> usize {
    if v.len() <= FIELD_BYTES {
        return v.len();
    }
    (0..=FIELD_BYTES)
        .rev()
        .find(|i| v.is_char_boundary(*i))
        .unwrap_or(0)
}

/// A field as exports write it: text, nothing (absent or null), or something else.
#[derive(Debug, Default, Clone, PartialEq)]
pub enum Field {
    #[default]
    Null,
    Text(String),
    Other,
}

impl Field {
    /// The text, if it is text.
    pub fn text(&self) -> Option<&str> {
        match self {
            Self::Text(s) => Some(s),
            _ => None,
        }
    }

    /// The text, nothing, or `not_text()` when it is neither.
    pub fn optional(
        &self,
        not_text: impl FnOnce() -> DomainError,
    ) -> Result<Option<&str>, DomainError> {
        match self {
            Self::Null => Ok(None),
            Self::Text(s) => Ok(Some(s)),
            Self::Other => Err(not_text()),
        }
    }
}

struct FieldVisitor;

impl<'de> Visitor<'de> for FieldVisitor {
    type Value = Field;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Field, E> {
        Ok(Field::Text(v[..cut(v)].to_owned()))
    }

    fn visit_string<E: de::Error>(self, mut v: String) -> Result<Field, E> {
        v.truncate(cut(&v));
        Ok(Field::Text(v))
    }

    scalars_are!(@null Field::Null);
    scalars_are!(@number Field::Other);

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Field, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Field::Other)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Field, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Field::Other)
    }
}

impl<'de> Deserialize<'de> for Field {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(FieldVisitor)
    }
}

/// An element that should be an object: read into `T` when it is, skipped unread when not.
#[derive(Debug, Default)]
pub enum Item<T> {
    Object(T),
    #[default]
    Other,
}

struct ItemVisitor<T>(PhantomData<T>);

impl<'de, T: Deserialize<'de>> Visitor<'de> for ItemVisitor<T> {
    type Value = Item<T>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Item<T>, A::Error> {
        T::deserialize(de::value::MapAccessDeserializer::new(map)).map(Item::Object)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Item<T>, A::Error> {
        FieldVisitor.visit_seq(seq).map(|_| Item::Other)
    }

    scalars_are!(Item::Other);
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Item<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ItemVisitor(PhantomData))
    }
}

/// Where a list of records may sit in a document: at the top (`[]`), or under one of the
/// key paths given (`["data", "issues", "nodes"]` is `{"data":{"issues":{"nodes":[…]}}}`).
struct ListAt<'p, 'f, T, F> {
    paths: Vec<&'p [&'p str]>,
    /// The keys walked to get here, joined by dots.
    here: String,
    each: &'f RefCell<Walk<F>>,
    _t: PhantomData<T>,
}

/// The walk's state: the callback, how many elements it saw, whether a list was found, and
/// the callback's own refusal (carried out through serde's error).
struct Walk<F> {
    each: F,
    seen: usize,
    found: bool,
    refused: Option<DomainError>,
}

impl<'de, T, F> DeserializeSeed<'de> for ListAt<'_, '_, T, F>
where
    T: Deserialize<'de>,
    F: FnMut(&str, usize, Item<T>) -> Result<(), DomainError>,
{
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de, T, F> Visitor<'de> for ListAt<'_, '_, T, F>
where
    T: Deserialize<'de>,
    F: FnMut(&str, usize, Item<T>) -> Result<(), DomainError>,
{
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        if !self.paths.iter().any(|p| p.is_empty()) || self.each.borrow().found {
            while seq.next_element::<IgnoredAny>()?.is_some() {}
            return Ok(());
        }
        self.each.borrow_mut().found = true;
        while let Some(item) = seq.next_element::<Item<T>>()? {
            let mut walk = self.each.borrow_mut();
            let n = walk.seen;
            walk.seen += 1;
            if let Err(e) = (walk.each)(&self.here, n, item) {
                walk.refused = Some(e);
                return Err(de::Error::custom("refused"));
            }
        }
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<String>()? {
            let deeper: Vec<&[&str]> = self
                .paths
                .iter()
                .filter(|p| p.first() == Some(&key.as_str()))
                .map(|p| &p[1..])
                .collect();
            if deeper.is_empty() {
                map.next_value::<IgnoredAny>()?;
            } else {
                let here = if self.here.is_empty() {
                    key
                } else {
                    format!("{}.{key}", self.here)
                };
                map.next_value_seed(ListAt::<T, F> {
                    paths: deeper,
                    here,
                    each: self.each,
                    _t: PhantomData,
                })?;
            }
        }
        Ok(())
    }

    scalars_are!(());
}

/// Hands each element of the list `json` holds — at the top, or under one of `paths` — to
/// `each`, in order, with the path it was found at (`""` at the top, `data.issues.nodes`) and
/// its position; false when the document is JSON but holds no list
/// where one was looked for. Stops at the first error, which is `each`'s own or "`name` is not
/// valid JSON (…)".
pub fn each_in<'de, R, T, F>(
    json: R,
    name: &str,
    paths: &[&[&str]],
    each: F,
) -> Result<bool, DomainError>
where
    R: serde_json::de::Read<'de>,
    T: Deserialize<'de>,
    F: FnMut(&str, usize, Item<T>) -> Result<(), DomainError>,
{
    let walk = RefCell::new(Walk {
        each,
        seen: 0,
        found: false,
        refused: None,
    });
    let mut all: Vec<&[&str]> = vec![&[]];
    all.extend_from_slice(paths);
    let mut de = serde_json::Deserializer::new(json);
    let read = ListAt::<T, F> {
        paths: all,
        here: String::new(),
        each: &walk,
        _t: PhantomData,
    }
    .deserialize(&mut de)
    .and_then(|()| de.end());
    let walk = walk.into_inner();
    if let Some(refused) = walk.refused {
        return Err(refused);
    }
    read.map_err(|e| DomainError::invalid("file", format!("{name} is not valid JSON ({e})")))?;
    Ok(walk.found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Deserialize, Debug)]
    struct Rec {
        #[serde(default)]
        a: Field,
    }

    fn walk(doc: &str, paths: &[&[&str]]) -> Result<(Vec<String>, bool), DomainError> {
        let mut out = Vec::new();
        let found = each_in(
            serde_json::de::StrRead::new(doc),
            "f.json",
            paths,
            |at, n, item: Item<Rec>| {
                out.push(match item {
                    Item::Object(r) => format!("{at}{n}:{:?}", r.a),
                    Item::Other => format!("{at}{n}:other"),
                });
                Ok(())
            },
        )?;
        Ok((out, found))
    }

    #[test]
    fn lists_are_walked_where_they_are_and_nothing_else_is_kept() {
        let (out, found) = walk(
            r#"[{"a":"x","b":[1,2,{"c":3}]},{"a":null},5,{"a":[1]}]"#,
            &[],
        )
        .unwrap();
        assert!(found);
        assert_eq!(out, ["0:Text(\"x\")", "1:Null", "2:other", "3:Other"]);
        let (out, found) = walk(
            r#"{"x":[{"a":"no"}],"data":{"issues":{"nodes":[{"a":"yes"}]}}}"#,
            &[&["data", "issues", "nodes"], &["issues"]],
        )
        .unwrap();
        assert!(found);
        assert_eq!(out, ["data.issues.nodes0:Text(\"yes\")"]);
        let (_, found) = walk(r#"{"messages":[]}"#, &[]).unwrap();
        assert!(!found);
        match walk("[{\"a\":", &[]) {
            Err(DomainError::Invalid { message, .. }) => {
                assert!(message.starts_with("f.json is not valid JSON"), "{message}")
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_refusal_stops_the_walk_at_once() {
        let mut seen = 0;
        let r = each_in(
            serde_json::de::StrRead::new("[0,0,0,0,0,0,0,0"),
            "f",
            &[],
            |_, n, _: Item<Rec>| {
                seen += 1;
                Err(DomainError::invalid("file", format!("element {}", n + 1)))
            },
        );
        assert_eq!(seen, 1);
        assert!(matches!(r, Err(DomainError::Invalid { message, .. }) if message == "element 1"));
    }
}
