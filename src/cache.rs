//! A replica's copies of what the database versions: a value is kept with the version it was
//! built from and served while the database still says that version and it is younger than a
//! given age; a request that finds it stale builds it again while the others wait for that one
//! build instead of each making their own. The version lives in the database, so a change any
//! replica commits makes every replica's copy stale at once; the age bounds what changes with
//! time alone (the clock passing midnight or a maintenance window's start).

use std::any::Any;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Copies kept at most; past this, the oldest version's go first (only one version is kept
/// anyway: a newer one clears the older).
const MOST: usize = 256;

struct Kept {
    version: i64,
    built: Instant,
    value: Arc<dyn Any + Send + Sync>,
}

/// Values by name, each with the version it was built from.
#[derive(Default)]
pub struct Copies {
    kept: Mutex<HashMap<String, Kept>>,
    /// Held while a stale value is built again: one build at a time.
    building: tokio::sync::Mutex<()>,
}

impl Copies {
    /// The copy of `name` built from `version` less than `max_age` ago, if kept.
    pub fn get<T: Any + Send + Sync>(
        &self,
        name: &str,
        version: i64,
        max_age: Duration,
    ) -> Option<Arc<T>> {
        let kept = self.kept.lock().unwrap_or_else(|p| p.into_inner());
        let c = kept.get(name)?;
        if c.version != version || c.built.elapsed() >= max_age {
            return None;
        }
        c.value.clone().downcast::<T>().ok()
    }

    /// Keeps `value` as `name`'s copy of `version`; copies of other versions are dropped.
    pub fn put<T: Any + Send + Sync>(&self, name: &str, version: i64, value: Arc<T>) {
        let mut kept = self.kept.lock().unwrap_or_else(|p| p.into_inner());
        kept.retain(|_, c| c.version == version);
        if kept.len() >= MOST {
            kept.clear();
        }
        kept.insert(
            name.to_owned(),
            Kept {
                version,
                built: Instant::now(),
                value,
            },
        );
    }

    /// The copy of `name` at `version`, built by `build` when there is none fresh: callers
    /// that find it stale together wait for one build.
    pub async fn get_or_build<T, E, F, Fut>(
        &self,
        name: &str,
        version: i64,
        max_age: Duration,
        build: F,
    ) -> Result<Arc<T>, E>
    where
        T: Any + Send + Sync,
        F: FnOnce() -> Fut,
        Fut: std::future::Future<Output = Result<T, E>>,
    {
        if let Some(v) = self.get(name, version, max_age) {
            return Ok(v);
        }
        let _one = self.building.lock().await;
        // Built by another while this one waited.
        if let Some(v) = self.get(name, version, max_age) {
            return Ok(v);
        }
        let value = Arc::new(build().await?);
        self.put(name, version, value.clone());
        Ok(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_copy_serves_its_version_while_young() {
        let c = Copies::default();
        c.put("page", 3, Arc::new(String::from("v3")));
        let long = Duration::from_secs(60);
        assert_eq!(
            c.get::<String>("page", 3, long).as_deref(),
            Some(&"v3".into())
        );
        // Another version, another type, or too old: none.
        assert!(c.get::<String>("page", 4, long).is_none());
        assert!(c.get::<i64>("page", 3, long).is_none());
        assert!(c.get::<String>("page", 3, Duration::ZERO).is_none());
        // A newer version's copy drops the older ones.
        c.put("other", 4, Arc::new(String::from("o4")));
        assert!(c.get::<String>("page", 3, long).is_none());
    }

    #[tokio::test]
    async fn callers_that_find_it_stale_together_wait_for_one_build() {
        let c = Arc::new(Copies::default());
        let builds = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let mut tasks = tokio::task::JoinSet::new();
        for _ in 0..20 {
            let (c, builds) = (c.clone(), builds.clone());
            tasks.spawn(async move {
                c.get_or_build("page", 1, Duration::from_secs(60), || async {
                    builds.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    Ok::<_, ()>(7_i64)
                })
                .await
                .unwrap()
            });
        }
        while let Some(v) = tasks.join_next().await {
            assert_eq!(*v.unwrap(), 7);
        }
        assert_eq!(builds.load(std::sync::atomic::Ordering::SeqCst), 1);
    }
}
