//! HLSL written for DXC, read by Slang's HLSL front end.
//!
//! Public HLSL is written for DXC (Microsoft's compiler, which no registry
//! XR draws from ships): XR compiles the stages glslang's HLSL front end
//! lacks (task, mesh, ray tracing) with Slang. Slang refuses some forms
//! DXC accepts, and has no option that accepts them. So each of Slang's
//! messages on such a form gets what DXC does with it and how Slang spells
//! it, at the same file and line; and a compile of HLSL that fails says
//! once that the source is DXC's dialect.

use xr_sourcebuild::{Diagnostic, Severity, SourceDesc};

/// `diagnostics` of a compile of `stages`, those on DXC-only forms
/// explained, with one note when an HLSL stage failed.
pub fn explain(stages: &[&SourceDesc], mut diagnostics: Vec<Diagnostic>) -> Vec<Diagnostic> {
    let hlsl: Vec<&&SourceDesc> = stages.iter().filter(|s| s.language == crate::compile::HLSL).collect();
    if hlsl.is_empty() {
        return diagnostics;
    }
    for diagnostic in &mut diagnostics {
        let source = hlsl.iter().find(|s| s.file_name == diagnostic.file).map_or("", |s| s.source.as_str());
        let line_at = |line: u32| source.lines().nth(line.saturating_sub(1) as usize).unwrap_or("");
        let (line_text, previous_line) = (line_at(diagnostic.line), line_at(diagnostic.line.saturating_sub(1)));
        if let Some(why) = dxc_form(&diagnostic.message, line_text, previous_line) {
            diagnostic.message = format!("{} ({why})", diagnostic.message).into();
        }
    }
    if let Some(first) = diagnostics.iter().find(|d| d.severity == Severity::Error) {
        let file = first.file.to_string();
        diagnostics.push(Diagnostic::new(
            Severity::Info,
            &file,
            0,
            0,
            format!(
                "{file} is HLSL, compiled by Slang's HLSL front end (for task, mesh and ray tracing stages, which \
                 glslang's lacks); Slang refuses some forms DXC accepts and has no option to accept them"
            ),
        ));
    }
    diagnostics
}

/// What DXC does with the form Slang's `message` is about, and how to
/// write it for both, where `message` is one of those forms.
fn dxc_form(message: &str, line: &str, previous_line: &str) -> Option<String> {
    if message.contains("unknown attribute 'vk_shader_record_ext'") {
        return Some(
            "DXC's [[vk::shader_record_ext]], which Slang spells [[vk::shader_record]]: without it the buffer is an \
             ordinary uniform buffer, not the shader record"
                .to_owned(),
        );
    }
    if let Some((wanted, got)) = expected_got(message)
        && got.starts_with("vector<")
        && components(wanted) < components(got)
    {
        let cast = line.contains(&format!("({})", scalar_of(wanted)));
        return Some(format!(
            "DXC {} {got} to {wanted}, with a warning; Slang does not: name the components ({})",
            if cast { "casts" } else { "truncates" },
            if components(wanted) == 1 { ".x" } else { ".xyz" }
        ));
    }
    if message.contains("must have an initializer")
        && (line.contains("vk::ext_builtin_input") || previous_line.contains("vk::ext_builtin_input"))
    {
        let position_fetch = line.contains("HitTriangleVertexPositions")
            || previous_line.contains("HitTriangleVertexPositions")
            || message.contains("HitTriangleVertexPositions");
        return Some(format!(
            "DXC's [[vk::ext_builtin_input]] declares a built-in input as a constant with no initializer; Slang \
             does not take that declaration and offers its built-ins as intrinsics{}",
            if position_fetch { ": HitTriangleVertexPosition(i) for HitTriangleVertexPositionsKHR" } else { "" }
        ));
    }
    None
}

/// The two types of Slang's "expected an expression of type 'A', got 'B'".
fn expected_got(message: &str) -> Option<(&str, &str)> {
    let rest = message.split("expected an expression of type '").nth(1)?;
    let (wanted, rest) = rest.split_once("', got '")?;
    let (got, _) = rest.split_once('\'')?;
    Some((wanted, got))
}

/// How many components `ty` has: `vector<float,3>` 3, a scalar 1.
fn components(ty: &str) -> u32 {
    ty.strip_prefix("vector<")
        .and_then(|rest| rest.trim_end_matches('>').rsplit(',').next())
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or(1)
}

/// The scalar of `ty`: `float` of `vector<float,3>`.
fn scalar_of(ty: &str) -> &str {
    ty.strip_prefix("vector<").and_then(|rest| rest.split(',').next()).unwrap_or(ty)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_dxc_form_is_named_with_slang_s_spelling() {
        let cast = dxc_form(
            "expected an expression of type 'float', got 'vector<uint,3>'",
            "float4 offset = float4(0.0, 0.0, (float)DispatchThreadID, 0.0);",
            "",
        )
        .unwrap_or_default();
        assert!(cast.contains("DXC casts vector<uint,3> to float") && cast.contains("(.x)"), "{cast}");
        let truncated =
            dxc_form("expected an expression of type 'vector<float,3>', got 'vector<float,4>'", "float3 c = v;", "")
                .unwrap_or_default();
        assert!(truncated.contains("DXC truncates vector<float,4> to vector<float,3>"), "{truncated}");
        let record = dxc_form("unknown attribute 'vk_shader_record_ext'", "", "").unwrap_or_default();
        assert!(record.contains("[[vk::shader_record]]"), "{record}");
        let builtin = dxc_form(
            "static const variable 'gl_HitTriangleVertexPositions' must have an initializer",
            "const static float3 gl_HitTriangleVertexPositions[3];",
            "[[vk::ext_builtin_input(HitTriangleVertexPositionsKHR)]]",
        )
        .unwrap_or_default();
        assert!(builtin.contains("HitTriangleVertexPosition(i)"), "{builtin}");
        // A widening is no DXC form, nor is an unrelated message.
        assert_eq!(dxc_form("expected an expression of type 'vector<float,4>', got 'vector<float,3>'", "", ""), None);
        assert_eq!(dxc_form("undefined identifier 'x'", "", ""), None);
    }
}
