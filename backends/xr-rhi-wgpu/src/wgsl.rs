//! The `wgsl` target: GLSL or HLSL compiled offline to SPIR-V by XR's
//! SPIR-V core (variants, includes and diagnostics as for `vk-spirv`),
//! then written as WGSL by naga. The stored object keeps the SPIR-V
//! beside the WGSL: wgpu builds the program from the WGSL (naga's WGSL
//! front end, on the device, at load), and the constant table is laid out
//! from the SPIR-V's reflection, the same bindings naga kept.
//!
//! The object: `XRWGSL1\n`, the SPIR-V object's length (u32, little
//! endian) and bytes, then each stage's WGSL as a length and UTF-8 text, in
//! the SPIR-V object's stage order.

use xr_device::XrError;
use xr_sourcebuild::{BuildError, OfflineArtifact, OfflineRequest};
use xr_spirv::{TargetEnv, container::StageModule, offline::Reflect};

/// The target.
pub const TARGET: &str = "wgsl";
const MAGIC: &[u8; 8] = b"XRWGSL1\n";

/// A decoded `wgsl` object.
pub struct WgslObject {
    /// The SPIR-V the WGSL was written from (its reflection lays the program out).
    pub modules: Vec<StageModule>,
    /// Each stage's WGSL, in `modules`' order.
    pub wgsl: Vec<String>,
}

/// Compiles `request` into a `wgsl` object.
pub fn compile(request: &OfflineRequest, reflect: Reflect) -> Result<OfflineArtifact, BuildError> {
    let mut artifact = xr_spirv::offline::compile_object(request, TargetEnv::Vulkan10, reflect)?;
    let context = format!("program '{}'", request.program.name);
    let modules = xr_spirv::container::decode(&artifact.bytes)
        .ok_or_else(|| XrError::driver(format!("{context}: the SPIR-V object just made does not decode")))?;
    let mut bytes = MAGIC.to_vec();
    bytes.extend((artifact.bytes.len() as u32).to_le_bytes());
    bytes.extend_from_slice(&artifact.bytes);
    for module in &modules {
        // Said in the user's words before naga, which would say it in SPIR-V's.
        let reflection = xr_spirv::reflect(&module.words, &module.entry_point)?;
        if let Some(image) = reflection.images.iter().find(|i| i.kind == "combined image sampler") {
            return Err(crate::loader::combined_sampler(&format!("{context} ({})", module.file), &image.name).into());
        }
        let text = to_wgsl(module).map_err(|e| {
            XrError::invalid_input(format!(
                "{context} ({} stage, {}): naga cannot write it as WGSL: {e}",
                module.stage.name(),
                module.file
            ))
        })?;
        bytes.extend((text.len() as u32).to_le_bytes());
        bytes.extend(text.as_bytes());
    }
    artifact.bytes = bytes.into();
    Ok(artifact)
}

/// One stage's SPIR-V as WGSL, its specialization constants as `override`s
/// with their ids.
fn to_wgsl(module: &StageModule) -> Result<String, String> {
    let words = xr_spirv::compile::strip_source_debug_info(&module.words);
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    // wgpu reads SPIR-V with the same options: clip space as Vulkan's.
    let options = naga::front::spv::Options {
        adjust_coordinate_space: false,
        strict_capabilities: true,
        block_ctx_dump_prefix: None,
    };
    let parsed = naga::front::spv::parse_u8_slice(&bytes, &options).map_err(|e| e.to_string())?;
    let info = naga::valid::Validator::new(naga::valid::ValidationFlags::all(), naga::valid::Capabilities::all())
        .validate(&parsed)
        .map_err(|e| e.into_inner().to_string())?;
    naga::back::wgsl::write_string(&parsed, &info, naga::back::wgsl::WriterFlags::empty()).map_err(|e| e.to_string())
}

/// Reads a stored `wgsl` object; a damaged one is an error naming `context`.
pub fn decode(bytes: &[u8], context: &str) -> Result<WgslObject, XrError> {
    let damaged = || XrError::invalid_input(format!("{context}: the WGSL object is damaged"));
    let rest = bytes.strip_prefix(MAGIC.as_slice()).ok_or_else(damaged)?;
    let mut at = 0;
    let mut next = |rest: &[u8]| -> Result<(usize, usize), XrError> {
        let length = rest.get(at..at + 4).ok_or_else(damaged)?;
        let length = u32::from_le_bytes([length[0], length[1], length[2], length[3]]) as usize;
        let start = at + 4;
        at = start.checked_add(length).filter(|end| *end <= rest.len()).ok_or_else(damaged)?;
        Ok((start, at))
    };
    let (start, end) = next(rest)?;
    let modules = xr_spirv::container::decode(&rest[start..end]).ok_or_else(damaged)?;
    let mut wgsl = Vec::new();
    for _ in &modules {
        let (start, end) = next(rest)?;
        wgsl.push(String::from_utf8(rest[start..end].to_vec()).map_err(|_| damaged())?);
    }
    if at != rest.len() {
        return Err(damaged());
    }
    Ok(WgslObject { modules, wgsl })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An object of no stages: the magic, an empty SPIR-V object.
    fn empty_object() -> Vec<u8> {
        let spirv = xr_spirv::container::encode(&[]);
        let mut bytes = MAGIC.to_vec();
        bytes.extend((spirv.len() as u32).to_le_bytes());
        bytes.extend(spirv);
        bytes
    }

    #[test]
    fn a_whole_object_decodes_and_a_cut_or_padded_one_is_damaged() {
        let whole = empty_object();
        let object = decode(&whole, "'p'").expect("decodes");
        assert!(object.modules.is_empty() && object.wgsl.is_empty());
        for bad in [whole[..whole.len() - 1].to_vec(), [whole.clone(), vec![0]].concat(), whole[1..].to_vec()] {
            let error = decode(&bad, "'p'").err().expect("damaged").to_string();
            assert!(error.contains("'p': the WGSL object is damaged"), "{error}");
        }
    }
}
