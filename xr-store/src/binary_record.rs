//! The stored form of a device program binary (a GL program binary): a
//! record of the program, the driver that made it and the binary format,
//! then the driver's bytes.
//!
//! Layout: the record's JSON length (u32, little endian), the record as
//! JSON (`kind`, `program`, `identity`, `format`), then the binary. The
//! store keeps it as an opaque object; the build systems that make device
//! binaries read it back, and `xr store gc` reads the program name to keep
//! the binaries of programs a manifest still builds.

use serde::{Deserialize, Serialize};
use std::fmt;

/// The driver a program binary is valid for.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct DriverIdentity {
    /// `GL_VENDOR`.
    pub vendor: String,
    /// `GL_RENDERER`.
    pub renderer: String,
    /// `GL_VERSION`, which names the driver version.
    pub version: String,
    /// `GL_PROGRAM_BINARY_FORMATS`.
    pub formats: Vec<u32>,
}

impl fmt::Display for DriverIdentity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} / {} / {}", self.vendor, self.renderer, self.version)
    }
}

/// What a stored program binary records about itself, before its bytes.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct BinaryRecord {
    /// Always [`RECORD_KIND`].
    pub kind: String,
    /// The program (variant) it was built for.
    pub program: String,
    /// The driver that made it.
    pub identity: DriverIdentity,
    /// The driver's binary format id.
    pub format: u32,
}

/// The `kind` every program binary record carries.
pub const RECORD_KIND: &str = "gl-program-binary";

/// A payload that is not a program binary record.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("stored object is not a program binary record{}", detail.as_deref().map(|d| format!(": {d}")).unwrap_or_default())]
pub struct NotARecord {
    detail: Option<String>,
}

/// The payload of `binary` made by the driver `identity` for `program`.
pub fn encode(program: &str, identity: &DriverIdentity, format: u32, binary: &[u8]) -> Vec<u8> {
    let record =
        BinaryRecord { kind: RECORD_KIND.to_owned(), program: program.to_owned(), identity: identity.clone(), format };
    let header = serde_json::to_vec(&record).expect("a record of strings and numbers always serialises");
    let mut payload = Vec::with_capacity(4 + header.len() + binary.len());
    payload.extend_from_slice(&(header.len() as u32).to_le_bytes());
    payload.extend_from_slice(&header);
    payload.extend_from_slice(binary);
    payload
}

/// The record and the binary of a payload [`encode`] wrote.
pub fn decode(payload: &[u8]) -> Result<(BinaryRecord, &[u8]), NotARecord> {
    let bad = || NotARecord { detail: None };
    let length = u32::from_le_bytes(payload.get(..4).ok_or_else(bad)?.try_into().map_err(|_| bad())?) as usize;
    let header = payload.get(4..4usize.saturating_add(length)).ok_or_else(bad)?;
    let record: BinaryRecord =
        serde_json::from_slice(header).map_err(|e| NotARecord { detail: Some(e.to_string()) })?;
    if record.kind != RECORD_KIND {
        return Err(bad());
    }
    Ok((record, &payload[4 + length..]))
}

/// The program name a stored binary record was written for, if `payload`
/// is one.
pub fn program_of(payload: &[u8]) -> Option<String> {
    decode(payload).ok().map(|(record, _)| record.program)
}
