//! tower-sessions' store on our PostgreSQL `sessions` table, with compiled queries. (The
//! published sqlx store would switch sqlx's timestamps to the `time` crate for the whole app.)

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use sqlx::PgPool;
use tower_sessions::session::{Id, Record};
use tower_sessions::session_store::{self, SessionStore};

#[derive(Debug, Clone)]
pub struct PgSessionStore {
    pool: PgPool,
}

impl PgSessionStore {
    pub fn new(pool: PgPool) -> Self {
        Self { pool }
    }

    /// Deletes expired sessions; any replica may run it.
    pub async fn delete_expired(&self) -> Result<u64, sqlx::Error> {
        let done = sqlx::query!("delete from sessions where expiry_date < now()")
            .execute(&self.pool)
            .await?;
        Ok(done.rows_affected())
    }
}

/// How a store error says the database was not answering (tower-sessions keeps only text).
pub const UNAVAILABLE: &str = "database unavailable: ";

fn backend(e: sqlx::Error) -> session_store::Error {
    if crate::error::is_unavailable(&e) {
        session_store::Error::Backend(format!("{UNAVAILABLE}{e}"))
    } else {
        session_store::Error::Backend(e.to_string())
    }
}

fn expiry(record: &Record) -> session_store::Result<DateTime<Utc>> {
    DateTime::from_timestamp(record.expiry_date.unix_timestamp(), 0)
        .ok_or_else(|| session_store::Error::Encode("expiry out of range".into()))
}

#[async_trait]
impl SessionStore for PgSessionStore {
    /// Inserts with a fresh id until one is free, so two sessions never share an id.
    async fn create(&self, record: &mut Record) -> session_store::Result<()> {
        let data = serde_json::to_value(&record.data)
            .map_err(|e| session_store::Error::Encode(e.to_string()))?;
        let expiry = expiry(record)?;
        loop {
            let inserted = sqlx::query!(
                r#"insert into sessions (id, data, expiry_date) values ($1, $2, $3)
                   on conflict (id) do nothing"#,
                record.id.to_string(),
                data,
                expiry
            )
            .execute(&self.pool)
            .await
            .map_err(backend)?;
            if inserted.rows_affected() == 1 {
                return Ok(());
            }
            record.id = Id::default();
        }
    }

    async fn save(&self, record: &Record) -> session_store::Result<()> {
        let data = serde_json::to_value(&record.data)
            .map_err(|e| session_store::Error::Encode(e.to_string()))?;
        sqlx::query!(
            r#"insert into sessions (id, data, expiry_date) values ($1, $2, $3)
               on conflict (id) do update set data = excluded.data, expiry_date = excluded.expiry_date"#,
            record.id.to_string(),
            data,
            expiry(record)?
        )
        .execute(&self.pool)
        .await
        .map_err(backend)?;
        Ok(())
    }

    async fn load(&self, id: &Id) -> session_store::Result<Option<Record>> {
        let row = sqlx::query!(
            r#"select data, expiry_date from sessions where id = $1 and expiry_date > now()"#,
            id.to_string()
        )
        .fetch_optional(&self.pool)
        .await
        .map_err(backend)?;
        let Some(row) = row else { return Ok(None) };
        let data = serde_json::from_value(row.data)
            .map_err(|e| session_store::Error::Decode(e.to_string()))?;
        let expiry_date = time::OffsetDateTime::from_unix_timestamp(row.expiry_date.timestamp())
            .map_err(|e| session_store::Error::Decode(e.to_string()))?;
        Ok(Some(Record {
            id: *id,
            data,
            expiry_date,
        }))
    }

    async fn delete(&self, id: &Id) -> session_store::Result<()> {
        sqlx::query!("delete from sessions where id = $1", id.to_string())
            .execute(&self.pool)
            .await
            .map_err(backend)?;
        Ok(())
    }
}
