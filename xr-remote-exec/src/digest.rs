//! SHA-256 digests of blobs and messages, as REAPI names them: the hash
//! in lower-case hex and the size in bytes.

use crate::proto::Digest;
use sha2::{Digest as _, Sha256};

/// The digest of `bytes`.
pub fn of(bytes: &[u8]) -> Digest {
    Digest { hash: hex(&Sha256::digest(bytes)), size_bytes: bytes.len() as i64 }
}

/// A message's encoding and its digest: what the CAS stores for it.
pub fn of_message(message: &impl prost::Message) -> (Digest, Vec<u8>) {
    let bytes = message.encode_to_vec();
    (of(&bytes), bytes)
}

/// Whether `bytes` are the blob `digest` names.
pub fn matches(digest: &Digest, bytes: &[u8]) -> bool {
    digest.size_bytes == bytes.len() as i64 && of(bytes).hash == digest.hash
}

/// `hash/size`, as logs and resource names write a digest.
pub fn text(digest: &Digest) -> String {
    format!("{}/{}", digest.hash, digest.size_bytes)
}

/// A digest whose hash is 64 hex digits and whose size is not negative:
/// the only kind this crate reads a blob for (a name of something else
/// could make a resource name that escapes its path).
pub fn is_well_formed(digest: &Digest) -> bool {
    digest.size_bytes >= 0 && digest.hash.len() == 64 && digest.hash.bytes().all(|b| b.is_ascii_hexdigit())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_empty_blob_has_the_well_known_digest() {
        let d = of(b"");
        assert_eq!(d.hash, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
        assert_eq!(d.size_bytes, 0);
        assert!(matches(&d, b""));
        assert!(!matches(&d, b"x"));
        assert!(is_well_formed(&d));
        assert!(!is_well_formed(&Digest { hash: "../x".into(), size_bytes: 1 }));
    }
}
