//! Reading a file from a git repository this server can reach (a working copy or a bare mirror
//! under one of the folders `QUELL_GIT_ROOTS` names) as it was at the last commit before a time:
//! the code as the responders met it, not as it was fixed. Reads with gix, blocking; callers run
//! it off the async threads.

use std::path::{Component, Path, PathBuf};

use chrono::{DateTime, Utc};
use gix::revision::walk::Sorting;
use gix::traverse::commit::simple::CommitTimeOrder;

use crate::domain::DomainError;

/// The largest file read: 1 MiB.
pub const FILE_LIMIT: usize = 1024 * 1024;
/// How many commits are walked back looking for the one before the time.
const WALK_LIMIT: usize = 200_000;

/// A file as it was at a commit.
#[derive(Debug, Clone)]
pub struct FileAt {
    /// The repository as the caller named it
    pub repository: String,
    pub commit: String,
    pub committed_at: DateTime<Utc>,
    pub content: String,
}

fn invalid(field: &str, message: impl Into<String>) -> DomainError {
    DomainError::invalid(field, message)
}

/// The repository's folder, if it lies inside one of `roots` (after following links, so `..`
/// and symlinks cannot lead out).
fn allowed(roots: &[PathBuf], repository: &str) -> Result<PathBuf, DomainError> {
    if roots.is_empty() {
        return Err(invalid(
            "repository",
            "reading from git is not set up on this server: an admin sets QUELL_GIT_ROOTS to the folders whose repositories Quell may read",
        ));
    }
    let given = repository.trim();
    if given.is_empty() {
        return Err(invalid(
            "repository",
            "the path of a repository on this server",
        ));
    }
    let real = std::fs::canonicalize(given).map_err(|_| {
        invalid(
            "repository",
            format!("there is no folder {given:?} on this server"),
        )
    })?;
    let inside = roots
        .iter()
        .any(|root| std::fs::canonicalize(root).is_ok_and(|r| real.starts_with(r)));
    if !inside {
        return Err(invalid(
            "repository",
            format!(
                "{given:?} is not inside a folder Quell may read from ({})",
                roots
                    .iter()
                    .map(|r| r.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ));
    }
    Ok(real)
}

/// A path inside the repository: relative, no `..`.
fn relative(path: &str) -> Result<&Path, DomainError> {
    let p = Path::new(path.trim());
    let plain = p.components().all(|c| matches!(c, Component::Normal(_)));
    if path.trim().is_empty() || !plain {
        return Err(invalid(
            "path",
            "a file's path inside the repository, like src/retry.ts (no leading / and no ..)",
        ));
    }
    Ok(p)
}

/// File `path` of `repository` at the newest commit reachable from `reference` (or HEAD) that was
/// committed before `before`.
pub fn read_before(
    roots: &[PathBuf],
    repository: &str,
    reference: Option<&str>,
    path: &str,
    before: DateTime<Utc>,
) -> Result<FileAt, DomainError> {
    let dir = allowed(roots, repository)?;
    let file = relative(path)?;
    let repo = gix::open(&dir).map_err(|_| {
        invalid(
            "repository",
            format!("{:?} is not a git repository", repository.trim()),
        )
    })?;
    let tip = match reference.map(str::trim).filter(|r| !r.is_empty()) {
        None => repo
            .head_commit()
            .map_err(|e| invalid("repository", format!("its HEAD names no commit ({e})")))?,
        Some(name) => {
            let mut r = repo.find_reference(name).map_err(|_| {
                invalid(
                    "reference",
                    format!("the repository has no branch or tag {name:?}"),
                )
            })?;
            let id = r
                .peel_to_id()
                .map_err(|e| invalid("reference", format!("{name:?} names no commit ({e})")))?;
            id.object()
                .and_then(|o| o.peel_to_commit())
                .map_err(|e| invalid("reference", format!("{name:?} names no commit ({e})")))?
        }
    };
    let cutoff = before.timestamp();
    let walk = tip
        .ancestors()
        .sorting(Sorting::ByCommitTime(CommitTimeOrder::NewestFirst))
        .all()
        .map_err(|e| invalid("repository", format!("its history cannot be read ({e})")))?;
    let mut found = None;
    for info in walk.take(WALK_LIMIT) {
        let info =
            info.map_err(|e| invalid("repository", format!("its history cannot be read ({e})")))?;
        let t = info.commit_time();
        if t < cutoff {
            found = Some((info.id, t));
            break;
        }
    }
    let (id, t) = found.ok_or_else(|| {
        invalid(
            "repository",
            format!(
                "no commit in its history is older than {} UTC, when the incident started",
                before.format("%Y-%m-%d %H:%M")
            ),
        )
    })?;
    let commit = repo
        .find_commit(id)
        .map_err(|e| invalid("repository", format!("commit {id} cannot be read ({e})")))?;
    let tree = commit
        .tree()
        .map_err(|e| invalid("repository", format!("commit {id} has no tree ({e})")))?;
    let short = id.to_hex_with_len(10).to_string();
    let entry = tree
        .lookup_entry_by_path(file)
        .map_err(|e| invalid("path", format!("cannot be looked up ({e})")))?
        .ok_or_else(|| {
            invalid(
                "path",
                format!(
                    "there is no {} at commit {short}, the last before the incident",
                    file.display()
                ),
            )
        })?;
    if !entry.mode().is_blob() {
        return Err(invalid(
            "path",
            format!(
                "{} is a folder or link at commit {short}, not a file",
                file.display()
            ),
        ));
    }
    let object = entry
        .object()
        .map_err(|e| invalid("path", format!("cannot be read ({e})")))?;
    if object.data.len() > FILE_LIMIT {
        return Err(invalid(
            "path",
            format!(
                "{} is {} KiB at commit {short}; files of at most {} KiB are read",
                file.display(),
                object.data.len() / 1024,
                FILE_LIMIT / 1024
            ),
        ));
    }
    let content = String::from_utf8(object.data.clone()).map_err(|_| {
        invalid(
            "path",
            format!("{} is not a text file (it is not UTF-8)", file.display()),
        )
    })?;
    Ok(FileAt {
        repository: repository.trim().to_owned(),
        commit: id.to_string(),
        committed_at: DateTime::from_timestamp(t, 0).unwrap_or(before),
        content,
    })
}
