//! HLSL shader profiles (`vs_1_1` … `ps_5_0`) as stages, for `--profile`.

use xr_sourcebuild::ShaderStage;

/// The stage of a profile such as `vs_5_0`, `ps_5_0`, `gs_5_0`, `hs_5_0`,
/// `ds_5_0` or `cs_5_0`; `None` for anything else.
pub fn stage_of_profile(profile: &str) -> Option<ShaderStage> {
    let (kind, version) = profile.split_once('_')?;
    let version_ok =
        version.split('_').all(|part| !part.is_empty() && part.chars().all(|c| c.is_ascii_digit() || c == 'x'));
    if !version_ok {
        return None;
    }
    Some(match kind {
        "vs" => ShaderStage::Vertex,
        "ps" => ShaderStage::Fragment,
        "gs" => ShaderStage::Geometry,
        "hs" => ShaderStage::TessControl,
        "ds" => ShaderStage::TessEvaluation,
        "cs" => ShaderStage::Compute,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profiles_map_to_stages() {
        assert_eq!(stage_of_profile("vs_5_0"), Some(ShaderStage::Vertex));
        assert_eq!(stage_of_profile("ps_2_0"), Some(ShaderStage::Fragment));
        assert_eq!(stage_of_profile("vs_1_1"), Some(ShaderStage::Vertex));
        assert_eq!(stage_of_profile("cs_5_0"), Some(ShaderStage::Compute));
        assert_eq!(stage_of_profile("ps_4_0_level_9_1"), None);
        assert_eq!(stage_of_profile("xs_5_0"), None);
        assert_eq!(stage_of_profile("vs"), None);
    }
}
