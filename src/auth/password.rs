//! Password hashing with argon2id, always off the async runtime: hashing is deliberately slow.

use argon2::Argon2;
use argon2::password_hash::rand_core::{OsRng, RngCore};
use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};

use crate::error::{AppError, AppResult};

/// A PHC string (`$argon2id$v=19$...`) for `password`.
pub async fn hash(password: String) -> AppResult<String> {
    tokio::task::spawn_blocking(move || {
        let salt = SaltString::generate(&mut OsRng);
        Argon2::default()
            .hash_password(password.as_bytes(), &salt)
            .map(|h| h.to_string())
            .map_err(|e| AppError::Internal(format!("argon2: {e}")))
    })
    .await
    .map_err(|e| AppError::Internal(format!("hashing task: {e}")))?
}

/// Whether `password` matches `phc`. A malformed stored hash never matches.
pub async fn verify(password: String, phc: String) -> AppResult<bool> {
    tokio::task::spawn_blocking(move || {
        PasswordHash::new(&phc)
            .map(|parsed| {
                Argon2::default()
                    .verify_password(password.as_bytes(), &parsed)
                    .is_ok()
            })
            .unwrap_or(false)
    })
    .await
    .map_err(|e| AppError::Internal(format!("verifying task: {e}")))
}

/// A hash of a random password nobody knows, so that a sign-in for an unknown email costs the
/// same time as one for a known email.
pub async fn decoy() -> AppResult<String> {
    hash("decoy-password-that-nobody-has".into()).await
}

/// A password for `quell user create` when none is given: 20 characters from 57 letters and
/// digits (no look-alikes), about 117 bits.
pub fn random_password() -> String {
    const ALPHABET: &[u8] = b"abcdefghijkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789";
    (0..20)
        .map(|_| ALPHABET[(OsRng.next_u32() as usize) % ALPHABET.len()] as char)
        .collect()
}
