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

/// The one answer for a repository Quell will not read, whatever the reason — no such
/// folder, outside the roots, not a repository, or one whose git or object directories lead
/// out of them — so a refusal tells nobody what exists on the server or where the roots are.
fn refused(given: &str) -> DomainError {
    invalid(
        "repository",
        format!(
            "{given:?} is not a git repository Quell may read: give the folder of a working copy or bare mirror inside the folders an admin listed in QUELL_GIT_ROOTS"
        ),
    )
}

/// Whether `path`, links followed, lies inside one of `roots`.
fn inside(roots: &[PathBuf], path: &Path) -> bool {
    std::fs::canonicalize(path).is_ok_and(|real| {
        roots
            .iter()
            .any(|root| std::fs::canonicalize(root).is_ok_and(|r| real.starts_with(r)))
    })
}

/// The folders objects are read from: the repository's own, and every alternate gix itself
/// would follow from it (`objects/info/alternates`, nested, resolved as gix resolves them); an
/// unreadable alternates file reads as outside (`None`).
fn object_dirs(objects: &Path) -> Option<Vec<PathBuf>> {
    let cwd = std::env::current_dir().ok()?;
    let mut dirs = gix::odb::alternate::resolve(objects.to_path_buf(), &cwd).ok()?;
    dirs.push(objects.to_path_buf());
    Some(dirs)
}

/// Whether anything directly in an objects folder, or in its `pack` and `info` folders, is a
/// link: a pack or an object fan-out folder linked from outside the roots would be read too.
fn links_inside(objects: &Path) -> bool {
    let linked = |dir: &Path| {
        std::fs::read_dir(dir).is_ok_and(|entries| {
            entries
                .flatten()
                .any(|e| e.file_type().is_ok_and(|t| t.is_symlink()))
        })
    };
    linked(objects) || linked(&objects.join("pack")) || linked(&objects.join("info"))
}

/// The repository `repository` names, opened, if it and everything it reads from lie inside
/// `roots`: its folder, its git directory (a `.git` file or link may point elsewhere), its
/// common directory, and its object directories with their alternates. Opened isolated, so
/// no environment variable or global configuration redirects it.
fn open(roots: &[PathBuf], repository: &str) -> Result<gix::Repository, DomainError> {
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
    let dir = Path::new(given);
    if !inside(roots, dir) {
        return Err(refused(given));
    }
    let repo = gix::open_opts(
        std::fs::canonicalize(dir).map_err(|_| refused(given))?,
        gix::open::Options::isolated(),
    )
    .map_err(|_| refused(given))?;
    let objects = repo.objects.store_ref().path().to_path_buf();
    let object_dirs = object_dirs(&objects).ok_or_else(|| refused(given))?;
    let reads_from = [
        repo.git_dir().to_path_buf(),
        repo.common_dir().to_path_buf(),
    ]
    .into_iter()
    .chain(object_dirs.iter().cloned());
    for path in reads_from {
        if !inside(roots, &path) {
            return Err(refused(given));
        }
    }
    if object_dirs.iter().any(|d| links_inside(d)) {
        return Err(refused(given));
    }
    Ok(repo)
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
    let file = relative(path)?;
    let repo = open(roots, repository)?;
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
