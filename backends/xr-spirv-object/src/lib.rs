//! The artifact of the SPIR-V targets (`gl-spirv`, `vk-spirv`): every
//! stage's SPIR-V with its entry point and specialization constants — a
//! compatible object, valid on any driver of the target API. Whoever
//! compiles into these targets writes it; their loaders read it.
//!
//! It also holds the one walker of SPIR-V words every producer and reader
//! of these objects uses ([`walk`]), with the `spirv` crate's names for
//! opcodes and operands ([`spirv`]).

pub mod walk;

/// The `spirv` crate (the SPIR-V grammar's enums: [`spirv::Op`],
/// [`spirv::Decoration`], [`spirv::StorageClass`]…), the version [`walk`]
/// names opcodes with.
pub use spirv;

use std::collections::HashMap;
use xr_device::{ProgramKind, ProgramRef, XrError};
use xr_sourcebuild::{ProgramBinary, ShaderStage, Specialization};
use xr_store::ObjectKey;

/// The `ProgramBinary::format` of these objects ("XRSV").
pub const FORMAT: u32 = u32::from_le_bytes(*b"XRSV");

/// One stage of a program, as SPIR-V.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StageModule {
    /// The stage.
    pub stage: ShaderStage,
    /// The entry point.
    pub entry_point: String,
    /// Specialization constant values.
    pub specializations: Vec<Specialization>,
    /// The SPIR-V words.
    pub words: Vec<u32>,
    /// The file it came from, for messages.
    pub file: String,
    /// The hit group a ray tracing program's hit stage was put in by name
    /// (`SourceDesc::hit_group`); `None`: the default rule.
    pub hit_group: Option<u32>,
}

/// The stored object of a program's stage modules.
pub fn to_object(stages: &[StageModule]) -> ProgramBinary {
    ProgramBinary { format: FORMAT, bytes: encode(stages).into() }
}

/// The stage modules of a stored object; `context` starts the error message,
/// `build_system` names who refuses an object of another format.
pub fn from_object(binary: &ProgramBinary, context: &str, build_system: &str) -> Result<Vec<StageModule>, XrError> {
    if binary.format != FORMAT {
        return Err(XrError::invalid_input(format!(
            "{context}: format 0x{:x} is not a SPIR-V object of {build_system}",
            binary.format
        )));
    }
    decode(&binary.bytes).ok_or_else(|| XrError::invalid_input(format!("{context}: the SPIR-V object is damaged")))
}

/// A program's content key: the build system, its version, its options, and
/// the SPIR-V, which already holds the sources, includes, defines and stages.
pub fn content_key(build_system: &str, version: &str, options: &[u8], stages: &[StageModule]) -> Vec<u8> {
    ObjectKey::from_parts([build_system.as_bytes(), version.as_bytes(), options, &encode(stages)]).0.to_vec()
}

/// The stored object of the program `program` among a build system's
/// `built` programs (by GL program or Vulkan program name).
pub fn object_of(built: &HashMap<u32, Vec<StageModule>>, program: ProgramRef) -> Result<ProgramBinary, XrError> {
    built
        .get(&program.name)
        .filter(|_| program.kind == ProgramKind::Program)
        .map(|modules| to_object(modules))
        .ok_or_else(|| XrError::invalid_input(format!("program {} was not built by this build system", program.name)))
}

/// Serialises stage modules: a count, then per stage its stage word,
/// entry point, file, specializations and words, all little-endian u32s.
/// The stage word holds the stage's index in its low half and its hit
/// group plus one in its high half (0: none), so that objects written
/// before hit groups could be named read back unchanged.
pub fn encode(stages: &[StageModule]) -> Vec<u8> {
    let mut words = vec![stages.len() as u32];
    for stage in stages {
        let index = ShaderStage::ALL.iter().position(|s| *s == stage.stage).unwrap_or(0) as u32;
        let group = stage.hit_group.map_or(0, |g| (g.min(u16::MAX as u32 - 1) + 1) << 16);
        words.push(index | group);
        push_string(&mut words, &stage.entry_point);
        push_string(&mut words, &stage.file);
        words.push(stage.specializations.len() as u32);
        for s in &stage.specializations {
            words.extend([s.id, s.bits]);
        }
        words.push(stage.words.len() as u32);
        words.extend_from_slice(&stage.words);
    }
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

/// Reads [`encode`]'s output back; `None` if it is not well formed.
pub fn decode(bytes: &[u8]) -> Option<Vec<StageModule>> {
    if !bytes.len().is_multiple_of(4) {
        return None;
    }
    let words: Vec<u32> = bytes.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
    let mut reader = Reader { words: &words, at: 0 };
    let count = reader.next()?;
    let mut stages = Vec::new();
    for _ in 0..count {
        let stage_word = reader.next()?;
        let stage = *ShaderStage::ALL.get((stage_word & 0xffff) as usize)?;
        let hit_group = (stage_word >> 16).checked_sub(1);
        let entry_point = reader.string()?;
        let file = reader.string()?;
        let specializations = (0..reader.next()?)
            .map(|_| Some(Specialization { id: reader.next()?, bits: reader.next()? }))
            .collect::<Option<_>>()?;
        let length = reader.next()? as usize;
        let module = reader.take(length)?.to_vec();
        stages.push(StageModule { stage, entry_point, specializations, words: module, file, hit_group });
    }
    (reader.at == words.len()).then_some(stages)
}

fn push_string(words: &mut Vec<u32>, text: &str) {
    let bytes = text.as_bytes();
    words.push(bytes.len() as u32);
    for chunk in bytes.chunks(4) {
        let mut word = [0u8; 4];
        word[..chunk.len()].copy_from_slice(chunk);
        words.push(u32::from_le_bytes(word));
    }
}

struct Reader<'a> {
    words: &'a [u32],
    at: usize,
}

impl Reader<'_> {
    fn next(&mut self) -> Option<u32> {
        let word = *self.words.get(self.at)?;
        self.at += 1;
        Some(word)
    }

    fn take(&mut self, count: usize) -> Option<&[u32]> {
        let slice = self.words.get(self.at..self.at.checked_add(count)?)?;
        self.at += count;
        Some(slice)
    }

    fn string(&mut self) -> Option<String> {
        let length = self.next()? as usize;
        let words = self.take(length.div_ceil(4))?;
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).take(length).collect();
        String::from_utf8(bytes).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn any_bytes_decode_or_are_refused_and_objects_read_back(
            bytes in proptest::collection::vec(any::<u8>(), 0..256),
            words in proptest::collection::vec(any::<u32>(), 0..32),
            entry in ".{0,12}",
            spec in proptest::collection::vec((any::<u32>(), any::<u32>()), 0..4),
        ) {
            let _ = decode(&bytes);
            let stage = StageModule {
                stage: ShaderStage::Compute,
                entry_point: entry,
                specializations: spec.into_iter().map(|(id, bits)| Specialization { id, bits }).collect(),
                words,
                file: "c.comp".into(),
                hit_group: None,
            };
            let encoded = encode(std::slice::from_ref(&stage));
            prop_assert_eq!(decode(&encoded), Some(vec![stage]));
            prop_assert_eq!(decode(&encoded[..encoded.len() - 4]), None);
        }
    }

    #[test]
    fn round_trip_and_rejects_damage() {
        let stages = vec![
            StageModule {
                stage: ShaderStage::Fragment,
                entry_point: "PixelMain".into(),
                specializations: vec![Specialization { id: 3, bits: 1.5f32.to_bits() }],
                words: vec![0x0723_0203, 1, 2, 3, 4],
                file: "a.hlsl".into(),
                hit_group: None,
            },
            StageModule {
                stage: ShaderStage::ClosestHit,
                entry_point: "main".into(),
                specializations: vec![],
                words: vec![7; 3],
                file: "shiny.rchit".into(),
                hit_group: Some(3),
            },
            StageModule {
                stage: ShaderStage::Vertex,
                entry_point: "main".into(),
                specializations: vec![],
                words: vec![9; 7],
                file: "v".into(),
                hit_group: None,
            },
        ];
        let bytes = encode(&stages);
        assert_eq!(decode(&bytes), Some(stages));
        assert_eq!(decode(&bytes[..bytes.len() - 4]), None);
        assert_eq!(decode(&bytes[..bytes.len() - 1]), None);
        assert_eq!(decode(&[]), None);
    }
}
