//! Queries on incidents' evidence and on uploaded exports held while someone picks from them.

use chrono::{DateTime, Utc};
use serde::Serialize;
use sqlx::PgExecutor;
use sqlx::types::Json;

use super::domain::{Evidence, EvidenceKind, Message, Origin, Source, Ticket};
use crate::domain::IncidentKey;
use crate::error::{AppError, AppResult};

/// An evidence item attached to an incident.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[schema(as = EvidenceItem)]
pub struct Item {
    pub id: i64,
    /// The incident, e.g. INC-184
    pub incident: String,
    pub kind: EvidenceKind,
    pub title: String,
    pub text: String,
    pub source: Source,
    pub origin: Origin,
    pub added_by: String,
    pub added_at: DateTime<Utc>,
}

impl Item {
    /// The item as a challenge's evidence.
    pub fn evidence(&self) -> Evidence {
        Evidence {
            kind: self.kind,
            title: self.title.clone(),
            text: self.text.clone(),
            source: self.source.clone(),
        }
    }
}

struct ItemRow {
    id: i64,
    incident: IncidentKey,
    kind: String,
    title: String,
    body: String,
    source: Json<Source>,
    origin: String,
    added_by: String,
    added_at: DateTime<Utc>,
}

impl TryFrom<ItemRow> for Item {
    type Error = AppError;

    fn try_from(r: ItemRow) -> AppResult<Self> {
        let broken = |what: &str| AppError::Internal(format!("evidence {} has {what}", r.id));
        Ok(Item {
            id: r.id,
            kind: EvidenceKind::parse(&r.kind).ok_or_else(|| broken("an unknown kind"))?,
            origin: Origin::parse(&r.origin).ok_or_else(|| broken("an unknown origin"))?,
            incident: r.incident.to_string(),
            title: r.title,
            text: r.body,
            source: r.source.0,
            added_by: r.added_by,
            added_at: r.added_at,
        })
    }
}

/// An incident's evidence, oldest first; or one item of it.
pub async fn list(
    e: impl PgExecutor<'_>,
    incident_id: i64,
    id: Option<i64>,
) -> AppResult<Vec<Item>> {
    sqlx::query_as!(
        ItemRow,
        r#"select v.id, i.number as "incident!: IncidentKey", v.kind, v.title, v.body,
                  v.source as "source: Json<Source>", v.origin, v.added_by, v.added_at
           -- every incident: one incident's, whose address passed the gate
           from incident_evidence v join incidents i on i.id = v.incident_id
           where v.incident_id = $1 and ($2::bigint is null or v.id = $2)
           order by v.id"#,
        incident_id,
        id
    )
    .fetch_all(e)
    .await?
    .into_iter()
    .map(Item::try_from)
    .collect()
}

/// Attaches an item; its id.
pub async fn insert(
    e: impl PgExecutor<'_>,
    incident_id: i64,
    item: &Evidence,
    origin: Origin,
    by: &str,
) -> AppResult<i64> {
    Ok(sqlx::query_scalar!(
        "insert into incident_evidence (incident_id, kind, title, body, source, origin, added_by)
         values ($1, $2, $3, $4, $5, $6, $7) returning id",
        incident_id,
        item.kind.as_str(),
        item.title.trim(),
        item.text,
        Json(&item.source) as _,
        origin.as_str(),
        by
    )
    .fetch_one(e)
    .await?)
}

/// Removes an item; `false` when the incident has no such item.
pub async fn delete(e: impl PgExecutor<'_>, incident_id: i64, id: i64) -> AppResult<bool> {
    let done = sqlx::query!(
        "delete from incident_evidence where incident_id = $1 and id = $2",
        incident_id,
        id
    )
    .execute(e)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// How long an uploaded export is held for picking.
pub const IMPORT_HOURS: i32 = 24;

/// An uploaded export.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct Import {
    pub id: i64,
    /// slack, linear or jira
    pub format: String,
    pub file_name: String,
    pub created_by: String,
    pub created_at: DateTime<Utc>,
    /// Messages or tickets it holds
    pub rows: i64,
    /// Bytes it holds (its text, and 128 a row), counted against the upload quota
    pub bytes: i64,
    #[serde(skip)]
    pub person_id: Option<i64>,
}

/// Forgets exports held longer than [`IMPORT_HOURS`].
pub async fn forget_old_imports(e: impl PgExecutor<'_>) -> AppResult<()> {
    sqlx::query!(
        "delete from evidence_imports where created_at < now() - make_interval(hours => $1)",
        IMPORT_HOURS
    )
    .execute(e)
    .await?;
    Ok(())
}

/// Who holds an upload and how much.
pub struct Holder<'a> {
    pub name: &'a str,
    pub person_id: Option<i64>,
    /// Bytes of text the upload keeps
    pub bytes: i64,
}

/// Bytes of text held in uploads not yet forgotten: `person_id`'s, and everyone's. Taken
/// under a lock, so two uploads at once cannot both slip under a quota.
pub async fn held_bytes(
    conn: &mut sqlx::PgConnection,
    person_id: Option<i64>,
) -> AppResult<(i64, i64)> {
    sqlx::query!("select pg_advisory_xact_lock(hashtext('quell_uploads'))")
        .execute(&mut *conn)
        .await?;
    let r = sqlx::query!(
        r#"select coalesce(sum(kept_bytes) filter (where person_id = $1), 0)::int8 as "mine!",
                  coalesce(sum(kept_bytes), 0)::int8 as "all!"
           from evidence_imports
           where created_at >= now() - make_interval(hours => $2)"#,
        person_id,
        IMPORT_HOURS
    )
    .fetch_one(&mut *conn)
    .await?;
    Ok((r.mine, r.all))
}

/// Forgets upload `id` of `incident_id`; `false` when there is none.
pub async fn delete_import(e: impl PgExecutor<'_>, incident_id: i64, id: i64) -> AppResult<bool> {
    let done = sqlx::query!(
        "delete from evidence_imports where incident_id = $1 and id = $2",
        incident_id,
        id
    )
    .execute(e)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Holds an export's messages or tickets; its id.
pub async fn insert_import(
    conn: &mut sqlx::PgConnection,
    incident_id: i64,
    format: &str,
    file_name: &str,
    by: &Holder<'_>,
    messages: &[Message],
    tickets: &[Ticket],
) -> AppResult<i64> {
    let id = sqlx::query_scalar!(
        "insert into evidence_imports (incident_id, format, file_name, created_by, person_id, kept_bytes)
         values ($1, $2, $3, $4, $5, $6) returning id",
        incident_id,
        format,
        file_name,
        by.name,
        by.person_id,
        by.bytes
    )
    .fetch_one(&mut *conn)
    .await?;
    // One column per field, messages then tickets (an import holds one or the other).
    let mut ns: Vec<i32> = Vec::new();
    let mut channel: Vec<&str> = Vec::new();
    let mut author: Vec<&str> = Vec::new();
    let mut key: Vec<&str> = Vec::new();
    let mut title: Vec<&str> = Vec::new();
    let mut body: Vec<&str> = Vec::new();
    let mut at: Vec<DateTime<Utc>> = Vec::new();
    for (i, m) in messages.iter().enumerate() {
        ns.push(i as i32);
        channel.push(&m.channel);
        author.push(&m.author);
        key.push("");
        title.push("");
        at.push(m.at);
        body.push(&m.text);
    }
    for (i, t) in tickets.iter().enumerate() {
        ns.push(i as i32);
        channel.push("");
        author.push("");
        key.push(&t.key);
        title.push(&t.title);
        at.push(t.created_at);
        body.push(&t.text);
    }
    // Large exports go in slices of at most 5,000 rows and about 2 MiB, so no one statement
    // carries the whole file: a statement's arguments are encoded whole before it is sent.
    let mut start = 0;
    while start < ns.len() {
        let mut end = start;
        let mut bytes = 0;
        while end < ns.len() && end - start < 5_000 && (bytes < 2 << 20 || end == start) {
            bytes += channel[end].len() + author[end].len() + key[end].len();
            bytes += title[end].len() + body[end].len();
            end += 1;
        }
        sqlx::query!(
            "insert into evidence_import_rows (import_id, n, channel, author, key, title, at, body)
             select $1, * from unnest($2::int[], $3::text[], $4::text[], $5::text[], $6::text[],
                                      $7::timestamptz[], $8::text[])",
            id,
            &ns[start..end],
            &channel[start..end] as &[&str],
            &author[start..end] as &[&str],
            &key[start..end] as &[&str],
            &title[start..end] as &[&str],
            &at[start..end],
            &body[start..end] as &[&str],
        )
        .execute(&mut *conn)
        .await?;
        start = end;
    }
    Ok(id)
}

/// An export held for `incident_id`, if it has not been forgotten.
pub async fn get_import(
    e: impl PgExecutor<'_>,
    incident_id: i64,
    id: i64,
) -> AppResult<Option<Import>> {
    Ok(sqlx::query_as!(
        Import,
        r#"select i.id, i.format, i.file_name, i.created_by, i.created_at,
                  (select count(*) from evidence_import_rows r where r.import_id = i.id) as "rows!",
                  i.kept_bytes as bytes, i.person_id
           from evidence_imports i
           where i.incident_id = $1 and i.id = $2
             and i.created_at >= now() - make_interval(hours => $3)"#,
        incident_id,
        id,
        IMPORT_HOURS
    )
    .fetch_optional(e)
    .await?)
}

/// A channel of an imported Slack export.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[schema(as = ImportChannel)]
pub struct Channel {
    pub name: String,
    pub messages: i64,
    pub first_at: DateTime<Utc>,
    pub last_at: DateTime<Utc>,
}

pub async fn channels(e: impl PgExecutor<'_>, import_id: i64) -> AppResult<Vec<Channel>> {
    Ok(sqlx::query_as!(
        Channel,
        r#"select channel as name, count(*) as "messages!", min(at) as "first_at!", max(at) as "last_at!"
           from evidence_import_rows where import_id = $1 and channel <> ''
           group by channel order by channel"#,
        import_id
    )
    .fetch_all(e)
    .await?)
}

/// A message or ticket of an import, by its number.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[schema(as = ImportRow)]
pub struct Row {
    /// Its number in the import, to pick it by
    pub n: i32,
    pub channel: String,
    pub author: String,
    pub key: String,
    pub title: String,
    pub at: Option<DateTime<Utc>>,
    pub text: String,
}

impl Row {
    pub fn message(&self) -> Message {
        Message {
            channel: self.channel.clone(),
            author: self.author.clone(),
            at: self.at.unwrap_or_default(),
            text: self.text.clone(),
        }
    }

    pub fn ticket(&self) -> Ticket {
        Ticket {
            key: self.key.clone(),
            title: self.title.clone(),
            created_at: self.at.unwrap_or_default(),
            text: self.text.clone(),
        }
    }
}

/// What to read of an import: a channel and time range, or certain rows.
#[derive(Debug, Default)]
pub struct RowFilter<'a> {
    pub channel: Option<&'a str>,
    pub from: Option<DateTime<Utc>>,
    pub to: Option<DateTime<Utc>>,
    pub ns: Option<&'a [i32]>,
    pub limit: i64,
}

/// Rows of an import in time order (tickets: in the export's order), at most `limit`.
pub async fn rows(
    e: impl PgExecutor<'_>,
    import_id: i64,
    f: &RowFilter<'_>,
) -> AppResult<Vec<Row>> {
    Ok(sqlx::query_as!(
        Row,
        r#"select n, channel, author, key, title, at, body as text
           from evidence_import_rows
           where import_id = $1
             and ($2::text is null or channel = $2)
             and ($3::timestamptz is null or at >= $3)
             and ($4::timestamptz is null or at <= $4)
             and ($5::int[] is null or n = any($5))
           order by case when key = '' then at end, n
           limit $6"#,
        import_id,
        f.channel,
        f.from,
        f.to,
        f.ns,
        f.limit
    )
    .fetch_all(e)
    .await?)
}
