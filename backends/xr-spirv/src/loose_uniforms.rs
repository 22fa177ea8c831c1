//! GLSL written for OpenGL, built for Vulkan: loose uniforms
//! (`uniform float gain;`) placed in one uniform block.
//!
//! Vulkan's GLSL has no default uniform block, so glslang refuses a
//! non-opaque uniform outside a block; OpenGL code is full of them, and
//! XR's constant table sets a constant by name on every device. So where
//! glslang refuses a program's stages for that alone, XR places them: each
//! stage is preprocessed (includes expanded, defines applied, `#line`
//! directives naming the files), the loose uniforms of every stage are
//! gathered in the order met, and every stage that declares any gets the
//! same block, `layout(std140, set = 0, binding = N) uniform
//! XrLooseUniforms { … };`, on the line of its first one, the others
//! blanked (every other line keeps its number, so diagnostics still point
//! at the user's file and line). One block for the whole program, declared
//! alike in each stage, gives every member one offset on every stage: a
//! draw sets it once. The members keep their names, so reflection and the
//! constant table see `gain` as on OpenGL, and the program owns the
//! block's buffer as it owns any uniform block's. It is a uniform block,
//! not push constants: OpenGL code keeps its matrices in loose uniforms
//! (three `mat4`s are 192 bytes, past the 128 of push constants every
//! device offers). Its binding is the first of set 0 above every binding
//! the stages name, so it meets no resource of theirs (glslang's automatic
//! bindings skip it).
//!
//! What cannot be placed is refused by name, saying what to write: a
//! uniform of a struct type or with an initializer, an array sized by a
//! constant, and two stages declaring one name with two types.

use std::fmt::Write;

/// The words of glslang's refusal that this module answers.
pub const GLSLANG_REFUSAL: &str = "non-opaque uniforms outside a block";

/// The block's name, as reflection and messages show it.
pub const BLOCK: &str = "XrLooseUniforms";

/// One loose uniform: a member of the block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Member {
    /// Its type, as written (`vec4`).
    pub ty: String,
    /// Its name.
    pub name: String,
    /// Its array length, when it is an array.
    pub count: Option<u32>,
}

/// A loose uniform declaration in a preprocessed stage.
#[derive(Clone, Debug)]
pub struct Found {
    /// Its line in the preprocessed text (0-based).
    pub text_line: usize,
    /// The user's file and line it came from.
    pub file: String,
    /// The user's line.
    pub line: u32,
    /// What it declares (`uniform float a, b;` declares two).
    pub members: Vec<Member>,
}

/// Why a loose uniform cannot be placed, at the user's file and line.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct Refusal {
    /// The file.
    pub file: String,
    /// The line (every refusal is of one declaration's line).
    pub line: u32,
    /// What is wrong and what to write instead.
    pub message: String,
}

/// The loose uniforms of `text`, a stage preprocessed by glslang (`#line`
/// directives naming files), first named `file`.
pub fn find(text: &str, file: &str) -> Result<Vec<Found>, Refusal> {
    let mut found = Vec::new();
    let mut depth = 0i32;
    let (mut current_file, mut next_line) = (file.to_owned(), 1u32);
    for (index, raw) in text.lines().enumerate() {
        let line_number = next_line;
        next_line += 1;
        let line = raw.trim();
        if let Some(rest) = line.strip_prefix("#line") {
            let mut parts = rest.split_whitespace();
            if let Some(n) = parts.next().and_then(|n| n.parse::<u32>().ok()) {
                next_line = n;
            }
            if let Some(name) = parts.next() {
                current_file = name.trim_matches('"').to_owned();
            }
            continue;
        }
        if line.starts_with('#') {
            continue;
        }
        if depth == 0
            && let Some(members) = declaration(line).map_err(|message| Refusal {
                file: current_file.clone(),
                line: line_number,
                message,
            })?
        {
            found.push(Found { text_line: index, file: current_file.clone(), line: line_number, members });
        }
        depth += line.matches('{').count() as i32 - line.matches('}').count() as i32;
    }
    Ok(found)
}

/// What a line at global scope declares as loose uniforms: `None` when it
/// is not a uniform of a non-opaque type outside a block.
fn declaration(line: &str) -> Result<Option<Vec<Member>>, String> {
    let mut rest = line;
    if let Some(after) = rest.strip_prefix("layout") {
        // Locations and bindings mean nothing inside the block.
        let Some(close) = after.find(')') else { return Ok(None) };
        rest = after[close + 1..].trim_start();
    }
    let Some(rest) = rest.strip_prefix("uniform") else { return Ok(None) };
    if !rest.starts_with(char::is_whitespace) || line.contains('{') || !line.ends_with(';') {
        return Ok(None);
    }
    let mut words = rest.trim_end_matches(';').trim();
    for precision in ["highp ", "mediump ", "lowp "] {
        words = words.strip_prefix(precision).unwrap_or(words).trim_start();
    }
    let (ty, declarators) = words.split_once(char::is_whitespace).unwrap_or((words, ""));
    let ty = ty.trim();
    if is_opaque(ty) {
        return Ok(None);
    }
    let placeable = is_placeable(ty);
    let mut members = Vec::new();
    for declarator in declarators.split(',').map(str::trim) {
        if let Some((name, _)) = declarator.split_once('=') {
            let name = name.split('[').next().unwrap_or(name).trim();
            return Err(format!(
                "the loose uniform '{name}' has an initializer, which Vulkan's GLSL has no place for: set it at run \
                 time (the constant table), or make it a constant"
            ));
        }
        let (name, count) = match declarator.split_once('[') {
            Some((name, size)) => {
                let size = size.trim_end_matches(']').trim();
                let count = size.parse::<u32>().map_err(|_| {
                    format!(
                        "the loose uniform '{}' is an array sized by '{size}', which XR cannot place in a uniform \
                         block for Vulkan: size it with a number, or declare it in a block",
                        name.trim()
                    )
                })?;
                (name.trim(), Some(count))
            }
            None => (declarator, None),
        };
        if !placeable {
            return Err(format!(
                "the loose uniform '{name}' is of type '{ty}', which XR places in a uniform block for Vulkan only for \
                 scalars, vectors and matrices of 32 bits: declare it in a uniform block \
                 (layout(std140, binding = N) uniform Name {{ {ty} {name}; }};)"
            ));
        }
        members.push(Member { ty: ty.to_owned(), name: name.to_owned(), count });
    }
    Ok((!members.is_empty()).then_some(members))
}

/// Whether a uniform of type `ty` is opaque (a sampler, image, texture,
/// …), which Vulkan's GLSL takes outside a block.
fn is_opaque(ty: &str) -> bool {
    ["sampler", "isampler", "usampler", "image", "iimage", "uimage", "texture", "itexture", "utexture", "subpassInput"]
        .iter()
        .any(|prefix| ty.starts_with(prefix))
        || matches!(ty, "atomic_uint" | "accelerationStructureEXT")
}

/// Whether `ty` is a scalar, vector or matrix of 32-bit components: what
/// a uniform block takes without a type declared elsewhere.
fn is_placeable(ty: &str) -> bool {
    let size = |n: &str| n.parse::<u32>().is_ok_and(|n| (2..=4).contains(&n));
    match ty {
        "float" | "int" | "uint" | "bool" => true,
        _ => {
            if let Some(n) = ["vec", "ivec", "uvec", "bvec"].iter().find_map(|p| ty.strip_prefix(p)) {
                return size(n);
            }
            // matC or matCxR.
            ty.strip_prefix("mat").is_some_and(|dims| match dims.split_once('x') {
                Some((c, r)) => size(c) && size(r),
                None => size(dims),
            })
        }
    }
}

/// The binding of the block: the first of set 0 above every binding the
/// stages' texts name (`binding = N`), so it meets none of their resources.
pub fn binding<'a>(texts: impl IntoIterator<Item = &'a str>) -> u32 {
    let mut next = 0;
    for text in texts {
        for (at, _) in text.match_indices("binding") {
            let rest = text[at + "binding".len()..].trim_start();
            let Some(rest) = rest.strip_prefix('=') else { continue };
            let digits: String = rest.trim_start().chars().take_while(char::is_ascii_digit).collect();
            if let Ok(n) = digits.parse::<u32>() {
                next = next.max(n + 1);
            }
        }
    }
    next
}

/// The members of every stage's declarations, in the order met, each name
/// once; a name declared with two types is refused, naming both places.
pub fn gather<'a>(stages: impl IntoIterator<Item = &'a [Found]>) -> Result<Vec<Member>, Refusal> {
    let mut members: Vec<(Member, String, u32)> = Vec::new();
    for found in stages.into_iter().flatten() {
        for member in &found.members {
            match members.iter().find(|(known, ..)| known.name == member.name) {
                Some((known, file, line)) if known != member => {
                    return Err(Refusal {
                        file: found.file.clone(),
                        line: found.line,
                        message: format!(
                            "the loose uniform '{}' is declared here as {} and at {file}:{line} as {}: on Vulkan XR \
                             places both in one uniform block, so give them one type",
                            member.name,
                            shown(member),
                            shown(known)
                        ),
                    });
                }
                Some(_) => {}
                None => members.push((member.clone(), found.file.clone(), found.line)),
            }
        }
    }
    Ok(members.into_iter().map(|(member, ..)| member).collect())
}

fn shown(member: &Member) -> String {
    match member.count {
        Some(n) => format!("{}[{n}]", member.ty),
        None => member.ty.clone(),
    }
}

/// The block holding `members` at `binding` of set 0, on one line.
pub fn block(members: &[Member], binding: u32) -> String {
    let mut text = format!("layout(std140, set = 0, binding = {binding}) uniform {BLOCK} {{");
    for member in members {
        let _ = write!(text, " {} {}", member.ty, member.name);
        if let Some(n) = member.count {
            let _ = write!(text, "[{n}]");
        }
        text.push(';');
    }
    text.push_str(" };");
    text
}

/// `text` with `block` on the line of its first loose uniform and the
/// other declaration lines blanked; every line keeps its number.
pub fn place(text: &str, found: &[Found], block: &str) -> String {
    let mut out = String::with_capacity(text.len() + block.len());
    for (index, line) in text.lines().enumerate() {
        match found.iter().position(|f| f.text_line == index) {
            Some(0) => out.push_str(block),
            Some(_) => {}
            None => out.push_str(line),
        }
        out.push('\n');
    }
    out
}

/// `text`, a stage with no loose uniform of its own, with `block` before
/// its first line of code and a `#line` after it that gives that line its
/// number again: the stage reserves the block's binding, so that
/// glslang's automatic bindings give none of its resources the same.
pub fn reserve(text: &str, block: &str) -> String {
    let mut out = String::with_capacity(text.len() + block.len() + 16);
    let mut next_line = 1u32;
    let mut placed = false;
    for line in text.lines() {
        let trimmed = line.trim();
        if !placed && !trimmed.is_empty() && !trimmed.starts_with('#') {
            out.push_str(block);
            out.push('\n');
            out.push_str(&format!("#line {next_line}\n"));
            placed = true;
        }
        out.push_str(line);
        out.push('\n');
        next_line = match trimmed.strip_prefix("#line").and_then(|r| r.split_whitespace().next()?.parse().ok()) {
            Some(n) => n,
            None => next_line + 1,
        };
    }
    out
}

/// `text` able to name the block's binding: before GLSL 4.20 a `binding`
/// qualifier needs `GL_ARB_shading_language_420pack`, enabled after
/// `#version` with a `#line` that gives every later line its number again.
pub fn with_binding_qualifier(text: &str) -> String {
    let Some((index, version)) = text.lines().enumerate().find_map(|(i, l)| {
        let number = l.trim().strip_prefix("#version")?.split_whitespace().next()?.parse::<u32>().ok()?;
        Some((i, number))
    }) else {
        return text.to_owned();
    };
    if version >= 420 {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len() + 80);
    for (i, line) in text.lines().enumerate() {
        out.push_str(line);
        out.push('\n');
        if i == index {
            out.push_str("#extension GL_ARB_shading_language_420pack : enable\n");
            out.push_str(&format!("#line {}\n", index + 2));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const STAGE: &str = "#version 450 core\n#extension GL_GOOGLE_include_directive : enable\n#line 1 \"a.frag\"\n\n\
        #line 1 \"inc.glsl\"\nuniform mat4 m;\n#line 3 \"a.frag\"\nuniform sampler2D tex;\nlayout(location = 2)uniform \
        highp vec4 tint, glow[2];\nstruct S { float x; };\nvoid f() { }\nlayout(location = 0)out vec4 o;\n";

    #[test]
    fn loose_uniforms_are_found_at_the_users_file_and_line_and_opaque_ones_left() {
        let found = find(STAGE, "a.frag").unwrap();
        assert_eq!(found.len(), 2, "{found:?}");
        assert_eq!((found[0].file.as_str(), found[0].line, found[0].text_line), ("inc.glsl", 1, 5));
        assert_eq!((found[1].file.as_str(), found[1].line), ("a.frag", 4));
        let names: Vec<(&str, Option<u32>)> =
            found.iter().flat_map(|f| &f.members).map(|m| (m.name.as_str(), m.count)).collect();
        assert_eq!(names, [("m", None), ("tint", None), ("glow", Some(2))]);
    }

    #[test]
    fn the_block_goes_on_the_first_line_and_every_line_keeps_its_number() {
        let found = find(STAGE, "a.frag").unwrap();
        let members = gather([found.as_slice()]).unwrap();
        let block = block(&members, binding([STAGE]));
        assert_eq!(
            block,
            "layout(std140, set = 0, binding = 0) uniform XrLooseUniforms { mat4 m; vec4 tint; vec4 glow[2]; };"
        );
        let placed = place(STAGE, &found, &block);
        assert_eq!(placed.lines().count(), STAGE.lines().count());
        assert_eq!(placed.lines().nth(5), Some(block.as_str()));
        assert_eq!(placed.lines().nth(8), Some(""));
        assert!(placed.contains("uniform sampler2D tex;"));
    }

    #[test]
    fn what_cannot_be_placed_is_refused_by_name_at_its_line() {
        let refused = |text: &str| find(text, "b.vert").unwrap_err();
        let r = refused("#version 450\nuniform float gain = 1.0;\n");
        assert_eq!((r.file.as_str(), r.line), ("b.vert", 2));
        assert!(r.message.contains("'gain' has an initializer"), "{r}");
        assert!(refused("#version 450\nuniform Light light;\n").message.contains("'light' is of type 'Light'"));
        assert!(refused("#version 450\nuniform dvec2 d;\n").message.contains("of type 'dvec2'"));
        assert!(refused("#version 450\nuniform float w[N];\n").message.contains("sized by 'N'"));
        let array = refused("#version 450\nuniform float w[3] = float[](1.0, 2.0, 3.0);\n");
        assert!(array.message.contains("'w' has an initializer"), "{array}");
        // Beside a push constant block of the stage's own: the uniform block is another.
        let both =
            find("#version 450\nlayout(push_constant) uniform P { float a; };\nuniform float b;\n", "b").unwrap();
        assert_eq!(both[0].members[0].name, "b");
        // Inside a block or a function, nothing is loose.
        assert!(find("#version 450\nuniform B {\nuniform float x;\n};\n", "c").unwrap().is_empty());
    }

    #[test]
    fn stages_agree_on_one_block_or_are_refused() {
        let vertex = find("#version 450\nuniform vec4 rect;\nuniform float gain;\n", "q.vert").unwrap();
        let fragment = find("#version 450\nuniform vec4 tint;\nuniform float gain;\n", "p.frag").unwrap();
        let members = gather([vertex.as_slice(), fragment.as_slice()]).unwrap();
        let names: Vec<&str> = members.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(names, ["rect", "gain", "tint"]);
        let other = find("#version 450\nuniform int gain;\n", "p.frag").unwrap();
        let r = gather([vertex.as_slice(), other.as_slice()]).unwrap_err();
        assert!(r.message.contains("declared here as int and at q.vert:3 as float"), "{r}");
    }

    #[test]
    fn a_stage_without_loose_uniforms_reserves_the_binding_before_its_code_and_keeps_its_line_numbers() {
        let text = "#version 450\n#line 1 \"a.frag\"\n\nuniform sampler2D t;\nvoid main() {}\n";
        let reserved = reserve(text, "BLOCK;");
        assert_eq!(
            reserved,
            "#version 450\n#line 1 \"a.frag\"\n\nBLOCK;\n#line 2\nuniform sampler2D t;\nvoid main() {}\n"
        );
    }

    #[test]
    fn before_glsl_420_the_binding_qualifier_is_enabled_and_lines_keep_their_numbers() {
        let old = with_binding_qualifier("#version 330 core\nuniform float a;\n");
        assert_eq!(
            old,
            "#version 330 core\n#extension GL_ARB_shading_language_420pack : enable\n#line 2\nuniform float a;\n"
        );
        let new = "#version 450 core\nuniform float a;\n";
        assert_eq!(with_binding_qualifier(new), new);
    }

    #[test]
    fn the_block_takes_the_first_binding_of_set_0_above_every_binding_named() {
        assert_eq!(binding(["#version 450\nuniform float a;\n"]), 0);
        let stages = ["layout(binding = 2) uniform sampler2D t;", "layout(set = 0, binding=5) uniform U { float x; };"];
        assert_eq!(binding(stages), 6);
        assert!(is_placeable("mat2x3") && is_placeable("uvec4") && is_placeable("bool"));
        assert!(!is_placeable("vec5") && !is_placeable("dmat4") && !is_placeable("Light"));
    }
}
