//! Stamps a hash of `static/` into the binary, so asset URLs change whenever the files do
//! (cache-busting without a bundler).

use std::hash::{DefaultHasher, Hash, Hasher};

fn main() {
    println!("cargo:rerun-if-changed=static");
    let mut hasher = DefaultHasher::new();
    let mut entries: Vec<_> = std::fs::read_dir("static")
        .map(|d| d.filter_map(Result::ok).map(|e| e.path()).collect())
        .unwrap_or_default();
    entries.sort();
    for path in entries {
        path.hash(&mut hasher);
        if let Ok(bytes) = std::fs::read(&path) {
            bytes.hash(&mut hasher);
        }
    }
    println!(
        "cargo:rustc-env=QUELL_ASSET_VERSION={:012x}",
        hasher.finish() & 0xffff_ffff_ffff
    );
}
