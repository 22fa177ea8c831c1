//! GLSL written for OpenGL, built for Vulkan: loose uniforms
//! (`uniform float gain;`) placed in one push constant block.
//!
//! Vulkan's GLSL has no default uniform block, so glslang refuses a
//! non-opaque uniform outside a block; OpenGL code is full of them, and
//! XR's constant table sets a constant by name on every device. So where
//! glslang refuses a program's stages for that alone, XR places them: each
//! stage is preprocessed (includes expanded, defines applied, `#line`
//! directives naming the files), the loose uniforms of every stage are
//! gathered in the order met, and every stage that declares any gets the
//! same block, `layout(push_constant) uniform XrLooseUniforms { … };`, on
//! the line of its first one, the others blanked (every other line keeps
//! its number, so diagnostics still point at the user's file and line).
//! One block for the whole program, declared alike in each stage, gives
//! every member one offset on every stage: a draw sets it once. The
//! members keep their names, so reflection and the constant table see
//! `gain` as on OpenGL.
//!
//! What cannot be placed is refused by name, saying what to write: a
//! uniform of a struct type or with an initializer, an array sized by a
//! constant, a stage that has its own push constant block, two stages
//! declaring one name with two types, and more than the 128 bytes of push
//! constants every Vulkan device offers.

use std::fmt::Write;

/// The words of glslang's refusal that this module answers.
pub const GLSLANG_REFUSAL: &str = "non-opaque uniforms outside a block";

/// The push constant bytes every Vulkan device offers (`maxPushConstantsSize`'s minimum).
pub const PUSH_CONSTANT_BYTES: u32 = 128;

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
    /// The line (0 when it is the program's, not one line's).
    pub line: u32,
    /// What is wrong and what to write instead.
    pub message: String,
}

/// The loose uniforms of `text`, a stage preprocessed by glslang (`#line`
/// directives naming files), first named `file`. A stage with its own push
/// constant block and loose uniforms is refused: one stage has one block.
pub fn find(text: &str, file: &str) -> Result<Vec<Found>, Refusal> {
    let mut found = Vec::new();
    let mut depth = 0i32;
    let (mut current_file, mut next_line) = (file.to_owned(), 1u32);
    let mut push_constant_block = None;
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
        if line.contains("push_constant") {
            push_constant_block.get_or_insert((current_file.clone(), line_number));
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
    if let (Some((file, line)), Some(first)) = (push_constant_block, found.first()) {
        let names: Vec<&str> = found.iter().flat_map(|f| &f.members).map(|m| m.name.as_str()).collect();
        return Err(Refusal {
            file,
            line,
            message: format!(
                "this stage has its own push_constant block and loose uniforms ({}, from {}:{}), which XR would place in \
                 a push constant block for Vulkan: declare them in its block",
                names.join(", "),
                first.file,
                first.line
            ),
        });
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
    let placeable = size_and_alignment(ty).is_some();
    let mut members = Vec::new();
    for declarator in declarators.split(',').map(str::trim) {
        let (name, count) = match declarator.split_once('[') {
            Some((name, size)) => {
                let size = size.trim_end_matches(']').trim();
                let count = size.parse::<u32>().map_err(|_| {
                    format!(
                        "the loose uniform '{}' is an array sized by '{size}', which XR cannot place in a push \
                         constant block for Vulkan: size it with a number, or declare it in a block",
                        name.trim()
                    )
                })?;
                (name.trim(), Some(count))
            }
            None => (declarator, None),
        };
        if name.contains('=') {
            return Err(format!(
                "the loose uniform '{}' has an initializer, which Vulkan's GLSL has no place for: set it at run time \
                 (the constant table), or make it a constant",
                name.split('=').next().unwrap_or(name).trim()
            ));
        }
        if !placeable {
            return Err(format!(
                "the loose uniform '{name}' is of type '{ty}', which XR places in a push constant block for Vulkan only \
                 for scalars, vectors and matrices of 32 bits: declare it in a uniform block \
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

/// std430's size and alignment of a scalar, vector or matrix of 32-bit
/// components; `None` for any other type.
fn size_and_alignment(ty: &str) -> Option<(u32, u32)> {
    let vector = |n: u32| (4 * n, if n == 3 { 16 } else { 4 * n });
    match ty {
        "float" | "int" | "uint" | "bool" => Some((4, 4)),
        _ => {
            if let Some(n) = ["vec", "ivec", "uvec", "bvec"].iter().find_map(|p| ty.strip_prefix(p)) {
                return n.parse().ok().filter(|n| (2..=4).contains(n)).map(vector);
            }
            // matC or matCxR: C columns of R-vectors, each aligned as the vector.
            let dims = ty.strip_prefix("mat")?;
            let (columns, rows) = match dims.split_once('x') {
                Some((c, r)) => (c.parse::<u32>().ok()?, r.parse::<u32>().ok()?),
                None => (dims.parse().ok()?, dims.parse().ok()?),
            };
            if !(2..=4).contains(&columns) || !(2..=4).contains(&rows) {
                return None;
            }
            let (_, alignment) = vector(rows);
            Some((alignment * columns, alignment))
        }
    }
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
                             places both in one push constant block, so give them one type",
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

/// The block holding `members`, on one line; refused past
/// [`PUSH_CONSTANT_BYTES`] (std430 offsets, as push constants are laid out).
pub fn block(members: &[Member], file: &str) -> Result<String, Refusal> {
    let mut end = 0u32;
    for member in members {
        let (size, alignment) = size_and_alignment(&member.ty).unwrap_or((4, 4));
        let (size, alignment) = match member.count {
            // An array's stride is its element's size rounded up to its alignment.
            Some(n) => (size.div_ceil(alignment) * alignment * n, alignment),
            None => (size, alignment),
        };
        end = end.div_ceil(alignment) * alignment + size;
    }
    if end > PUSH_CONSTANT_BYTES {
        let names: Vec<&str> = members.iter().map(|m| m.name.as_str()).collect();
        return Err(Refusal {
            file: file.to_owned(),
            line: 0,
            message: format!(
                "the loose uniforms of this program ({}) take {end} bytes as push constants, more than the \
                 {PUSH_CONSTANT_BYTES} every Vulkan device offers: declare the larger ones in a uniform block \
                 (layout(std140, binding = N) uniform Name {{ ... }};)",
                names.join(", ")
            ),
        });
    }
    let mut text = format!("layout(push_constant) uniform {BLOCK} {{");
    for member in members {
        let _ = write!(text, " {} {}", member.ty, member.name);
        if let Some(n) = member.count {
            let _ = write!(text, "[{n}]");
        }
        text.push(';');
    }
    text.push_str(" };");
    Ok(text)
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
        let block = block(&members, "a.frag").unwrap();
        assert_eq!(block, "layout(push_constant) uniform XrLooseUniforms { mat4 m; vec4 tint; vec4 glow[2]; };");
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
        let both = refused("#version 450\nlayout(push_constant) uniform P { float a; };\nuniform float b;\n");
        assert_eq!(both.line, 2);
        assert!(both.message.contains("own push_constant block and loose uniforms (b, from b.vert:3)"), "{both}");
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
    fn push_constant_room_is_counted_in_std430() {
        let member = |ty: &str, count| Member { ty: ty.into(), name: "x".into(), count };
        // vec3 aligns to 16: float at 0, vec3 at 16..28, then mat4 at 32..96, vec4[2] at 96..128.
        let fits = [member("float", None), member("vec3", None), member("mat4", None), member("vec4", Some(2))];
        assert!(block(&fits, "f").is_ok());
        let over = [member("mat4", None), member("mat4", None), member("float", None)];
        let r = block(&over, "f").unwrap_err();
        assert!(r.message.contains("take 132 bytes"), "{r}");
        assert_eq!(size_and_alignment("mat3"), Some((48, 16)));
        assert_eq!(size_and_alignment("mat2x3"), Some((32, 16)));
        assert_eq!(size_and_alignment("vec5"), None);
    }
}
