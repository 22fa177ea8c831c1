//! Source debug information stripped from a module, names kept.

/// `words` without the debug information that names source text and lines
/// (`OpString`, `OpSourceContinued`, `OpLine`, `OpNoLine`,
/// `OpModuleProcessed`, and `OpSource`'s file and text), keeping the names
/// (`OpName`, `OpMemberName`) that reflection and the constant table use.
pub fn strip_source_debug_info(words: &[u32]) -> Vec<u32> {
    use crate::reflect::instructions;
    use xr_spirv_object::spirv::Op;
    use xr_spirv_object::walk::{self, literal_string};
    // Not a module this can read: left as it is, for the validator to judge.
    let Ok(instructions) = instructions(words) else { return words.to_vec() };
    // Non-semantic instructions (debugPrintf's format strings) use OpString:
    // such a module is left whole.
    let non_semantic = instructions.iter().any(|i| {
        i.op() == Some(Op::ExtInstImport)
            && literal_string(i.operands.get(1..).unwrap_or(&[])).starts_with("NonSemantic.")
    });
    if non_semantic {
        return words.to_vec();
    }
    let mut out = words[..walk::HEADER_WORDS].to_vec();
    for i in &instructions {
        match i.op() {
            Some(Op::SourceContinued | Op::String | Op::Line | Op::NoLine | Op::ModuleProcessed) => {}
            // Language and version only.
            Some(Op::Source) if i.operands.len() >= 2 => out.extend(walk::instruction(Op::Source, &i.operands[..2])),
            _ => out.extend_from_slice(&words[i.offset..i.end()]),
        }
    }
    out
}
