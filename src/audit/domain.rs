//! Who is acting: every change, and every refused attempt, is attributed to an [`Actor`].

/// Who is acting, and from where: every change is attributed to one.
#[derive(Debug, Clone, Default)]
pub struct Actor {
    pub person_id: Option<i64>,
    /// The name shown on timelines and in the audit log.
    pub name: String,
    pub request_id: Option<String>,
    pub client_addr: Option<String>,
}

impl Actor {
    /// Work Quell does by itself (demo loading, bootstrap).
    pub fn system(name: &str) -> Self {
        Self {
            name: name.to_owned(),
            ..Default::default()
        }
    }
}
