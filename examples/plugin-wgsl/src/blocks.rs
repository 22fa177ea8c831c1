//! Unwrapping naga's uniform and push-constant blocks, so that the
//! constants are the block's own members, named, as GLSL compilers write them.
//!
//! naga's SPIR-V writer wraps the struct of every `var<uniform>` and
//! `var<immediate>` in an anonymous struct of one unnamed member, decorated
//! `Block`, and reaches the data through `OpAccessChain %ptr %var %uint_0`:
//!
//! ```text
//! %Constants = OpTypeStruct %v4float %v4float   ; u_rect, u_color (named)
//! %wrapper   = OpTypeStruct %Constants          ; Block, member 0 unnamed
//! %ptr       = OpTypePointer Uniform %wrapper
//! %constants = OpVariable %ptr Uniform
//! ...        = OpAccessChain %ptr_Constants %constants %uint_0
//! ```
//!
//! XR's SPIR-V loaders find constants by the names of the block's members,
//! which would then be one nameless struct. [`unwrap`] makes `%Constants`
//! the `Block` itself: the pointer type points at it, the wrapper and its
//! decorations go, and the first index (the constant 0) of every access
//! chain from the variable is dropped — the chain then has no index and
//! yields the same pointer, to the same bytes. A wrapper around something
//! that is not a struct (`var<uniform> m: mat4x4<f32>`) stays, and its
//! member gets the variable's name.
//!
//! Any shape other than the one above is left as naga wrote it (valid,
//! with nested names).

use crate::spec::{HEADER_WORDS, Instruction, PatchError, instructions};
use std::collections::{HashMap, HashSet};

const OP_SOURCE_CONTINUED: u16 = 2;
const OP_SOURCE: u16 = 3;
const OP_SOURCE_EXTENSION: u16 = 4;
const OP_NAME: u16 = 5;
const OP_MEMBER_NAME: u16 = 6;
const OP_STRING: u16 = 7;
const OP_EXTENSION: u16 = 10;
const OP_EXT_INST_IMPORT: u16 = 11;
const OP_MEMORY_MODEL: u16 = 14;
const OP_ENTRY_POINT: u16 = 15;
const OP_EXECUTION_MODE: u16 = 16;
const OP_CAPABILITY: u16 = 17;
const OP_TYPE_ARRAY: u16 = 28;
const OP_TYPE_RUNTIME_ARRAY: u16 = 29;
const OP_TYPE_STRUCT: u16 = 30;
const OP_TYPE_POINTER: u16 = 32;
const OP_TYPE_FUNCTION: u16 = 33;
const OP_CONSTANT: u16 = 43;
const OP_FUNCTION_CALL: u16 = 57;
const OP_VARIABLE: u16 = 59;
const OP_IMAGE_TEXEL_POINTER: u16 = 60;
const OP_LOAD: u16 = 61;
const OP_STORE: u16 = 62;
const OP_COPY_MEMORY: u16 = 63;
const OP_COPY_MEMORY_SIZED: u16 = 64;
const OP_ACCESS_CHAIN: u16 = 65;
const OP_IN_BOUNDS_ACCESS_CHAIN: u16 = 66;
const OP_PTR_ACCESS_CHAIN: u16 = 67;
const OP_ARRAY_LENGTH: u16 = 68;
const OP_IN_BOUNDS_PTR_ACCESS_CHAIN: u16 = 70;
const OP_DECORATE: u16 = 71;
const OP_MEMBER_DECORATE: u16 = 72;
const OP_DECORATION_GROUP: u16 = 73;
const OP_GROUP_DECORATE: u16 = 74;
const OP_GROUP_MEMBER_DECORATE: u16 = 75;
const OP_COPY_OBJECT: u16 = 83;
const OP_SELECT: u16 = 169;
const OP_ATOMIC_LOAD: u16 = 227;
const OP_ATOMIC_STORE: u16 = 228;
const OP_ATOMIC_XOR: u16 = 242;
const OP_PHI: u16 = 245;
const OP_MODULE_PROCESSED: u16 = 330;
const OP_EXECUTION_MODE_ID: u16 = 331;
const OP_DECORATE_ID: u16 = 332;
const OP_PTR_EQUAL: u16 = 401;
const OP_PTR_DIFF: u16 = 403;
const OP_DECORATE_STRING: u16 = 5632;
const OP_MEMBER_DECORATE_STRING: u16 = 5633;

const DECORATION_BLOCK: u32 = 2;
const DECORATION_BUFFER_BLOCK: u32 = 3;
const STORAGE_UNIFORM: u32 = 2;
const STORAGE_PUSH_CONSTANT: u32 = 9;

/// Instructions whose first operand is a literal, or names a target
/// without using it.
const NOT_A_USE: [u16; 13] = [
    OP_SOURCE_CONTINUED,
    OP_SOURCE,
    OP_SOURCE_EXTENSION,
    OP_NAME,
    OP_MEMBER_NAME,
    OP_STRING,
    OP_EXTENSION,
    OP_EXT_INST_IMPORT,
    OP_MEMORY_MODEL,
    OP_ENTRY_POINT,
    OP_CAPABILITY,
    OP_MODULE_PROCESSED,
    OP_DECORATE,
];

/// The operand positions that take a pointer, by opcode (`usize::MAX`: all
/// from the previous position on).
fn pointer_operands(opcode: u16) -> &'static [usize] {
    match opcode {
        OP_LOAD
        | OP_PTR_ACCESS_CHAIN
        | OP_ARRAY_LENGTH
        | OP_IN_BOUNDS_PTR_ACCESS_CHAIN
        | OP_COPY_OBJECT
        | OP_IMAGE_TEXEL_POINTER => &[2],
        OP_STORE | OP_ATOMIC_STORE => &[0],
        OP_COPY_MEMORY | OP_COPY_MEMORY_SIZED => &[0, 1],
        OP_SELECT => &[3, 4],
        OP_PTR_EQUAL..=OP_PTR_DIFF => &[2, 3],
        OP_FUNCTION_CALL => &[3, usize::MAX],
        OP_PHI => &[2, usize::MAX],
        OP_ATOMIC_LOAD..=OP_ATOMIC_XOR => &[2],
        _ => &[],
    }
}

/// Whether `id` is one of the pointer operands of `operands`.
fn uses_pointer(opcode: u16, operands: &[u32], id: u32) -> bool {
    let positions = pointer_operands(opcode);
    let mut previous = 0;
    for &p in positions {
        if p == usize::MAX {
            return operands.iter().skip(previous).any(|w| *w == id);
        }
        if operands.get(p) == Some(&id) {
            return true;
        }
        previous = p;
    }
    false
}

/// A wrapper to remove.
struct Wrapper {
    /// The wrapper struct.
    id: u32,
    /// The struct it wraps.
    inner: u32,
    /// The pointer types to it.
    pointers: Vec<u32>,
    /// The variables of those types.
    variables: Vec<u32>,
}

/// `words` with naga's block wrappers removed where that is safe (see the
/// module documentation).
pub fn unwrap(words: &[u32]) -> Result<Vec<u32>, PatchError> {
    let list = instructions(words)?;
    let ops = |i: &Instruction| i.operands(words);

    let mut structs: HashMap<u32, Vec<u32>> = HashMap::new();
    let mut decorations: HashMap<u32, Vec<u32>> = HashMap::new();
    let mut zero_constants = HashSet::new();
    let mut member_names: HashSet<(u32, u32)> = HashSet::new();
    let mut names: HashMap<u32, String> = HashMap::new();
    for i in &list {
        match (i.opcode, ops(i)) {
            (OP_TYPE_STRUCT, [result, members @ ..]) => {
                structs.insert(*result, members.to_vec());
            }
            (OP_DECORATE, [target, decoration, ..]) => decorations.entry(*target).or_default().push(*decoration),
            (OP_CONSTANT, [_, result, 0]) => {
                zero_constants.insert(*result);
            }
            (OP_MEMBER_NAME, [target, member, ..]) => {
                member_names.insert((*target, *member));
            }
            (OP_NAME, [target, name @ ..]) => {
                names.insert(*target, literal_string(name));
            }
            _ => {}
        }
    }
    let decorated = |id: u32, decoration: u32| decorations.get(&id).is_some_and(|d| d.contains(&decoration));

    // Candidates: a Block struct of exactly one member, every pointer to it
    // in the Uniform or PushConstant storage class.
    let mut wrappers: Vec<Wrapper> = Vec::new();
    for (&id, members) in &structs {
        let [inner] = members.as_slice() else { continue };
        if !decorated(id, DECORATION_BLOCK) {
            continue;
        }
        let pointers: Vec<&Instruction> =
            list.iter().filter(|i| i.opcode == OP_TYPE_POINTER && ops(i).get(2) == Some(&id)).collect();
        if pointers.is_empty()
            || !pointers.iter().all(|p| [STORAGE_UNIFORM, STORAGE_PUSH_CONSTANT].contains(&ops(p)[1]))
        {
            continue;
        }
        let pointers: Vec<u32> = pointers.iter().map(|p| ops(p)[0]).collect();
        let variables: Vec<u32> = list
            .iter()
            .filter(|i| i.opcode == OP_VARIABLE)
            .filter_map(|i| match ops(i) {
                [ty, result, ..] if pointers.contains(ty) => Some(*result),
                _ => None,
            })
            .collect();
        wrappers.push(Wrapper { id, inner: *inner, pointers, variables });
    }
    wrappers.sort_by_key(|w| w.id);

    // Name the member of wrappers around non-structs after their variable.
    let mut new_names: Vec<u32> = Vec::new();
    let (structured, plain): (Vec<Wrapper>, Vec<Wrapper>) =
        wrappers.into_iter().partition(|w| structs.contains_key(&w.inner));
    for w in &plain {
        if member_names.contains(&(w.id, 0)) {
            continue;
        }
        if let Some(name) = w.variables.first().and_then(|v| names.get(v)).filter(|n| !n.is_empty()) {
            new_names.extend(instruction(OP_MEMBER_NAME, &[&[w.id, 0], &string_words(name)[..]].concat()));
        }
    }

    // Keep only the wrappers that are safe to remove, around structs used
    // nowhere else (a Block must not be nested, nor live in other storage).
    let wrapper_ids: HashSet<u32> = structured.iter().map(|w| w.id).collect();
    let used_elsewhere = |inner: u32| {
        list.iter().any(|i| match (i.opcode, ops(i)) {
            (OP_TYPE_STRUCT, [result, members @ ..]) => !wrapper_ids.contains(result) && members.contains(&inner),
            (OP_TYPE_ARRAY | OP_TYPE_RUNTIME_ARRAY, [_, element, ..]) => *element == inner,
            (OP_TYPE_POINTER, [_, storage, pointee]) => {
                *pointee == inner && ![STORAGE_UNIFORM, STORAGE_PUSH_CONSTANT].contains(storage)
            }
            _ => false,
        })
    };
    let safe: Vec<&Wrapper> = structured
        .iter()
        .filter(|w| {
            !decorated(w.inner, DECORATION_BLOCK)
                && !decorated(w.inner, DECORATION_BUFFER_BLOCK)
                && !used_elsewhere(w.inner)
                && list.iter().all(|i| is_safe(i.opcode, ops(i), w, &zero_constants))
        })
        .collect();
    if safe.is_empty() && new_names.is_empty() {
        return Ok(words.to_vec());
    }

    let removed_ids: HashSet<u32> = safe.iter().map(|w| w.id).collect();
    let pointer_targets: HashMap<u32, u32> =
        safe.iter().flat_map(|w| w.pointers.iter().map(move |p| (*p, w.inner))).collect();
    let variables: HashSet<u32> = safe.iter().flat_map(|w| w.variables.iter().copied()).collect();
    let mut blocks: Vec<u32> = safe.iter().map(|w| w.inner).collect();
    blocks.sort();
    blocks.dedup();

    let mut out = words[..HEADER_WORDS].to_vec();
    let mut names_written = new_names.is_empty();
    let mut blocks_written = blocks.is_empty();
    for i in &list {
        let operands = ops(i);
        // New member names go after the last name; new Block decorations
        // after the last decoration: before the first instruction past them.
        let is_debug = matches!(
            i.opcode,
            OP_SOURCE_CONTINUED | OP_SOURCE | OP_SOURCE_EXTENSION | OP_STRING | OP_NAME | OP_MEMBER_NAME
        );
        let is_preamble = matches!(
            i.opcode,
            OP_CAPABILITY
                | OP_EXTENSION
                | OP_EXT_INST_IMPORT
                | OP_MEMORY_MODEL
                | OP_ENTRY_POINT
                | OP_EXECUTION_MODE
                | OP_EXECUTION_MODE_ID
        );
        if !names_written && !is_debug && !is_preamble {
            out.extend_from_slice(&new_names);
            names_written = true;
        }
        let is_annotation = matches!(
            i.opcode,
            OP_DECORATE
                | OP_MEMBER_DECORATE
                | OP_DECORATION_GROUP
                | OP_GROUP_DECORATE
                | OP_GROUP_MEMBER_DECORATE
                | OP_DECORATE_ID
                | OP_DECORATE_STRING
                | OP_MEMBER_DECORATE_STRING
        );
        if !blocks_written && !is_debug && !is_preamble && !is_annotation && i.opcode != OP_MODULE_PROCESSED {
            for b in &blocks {
                out.extend(instruction(OP_DECORATE, &[*b, DECORATION_BLOCK]));
            }
            blocks_written = true;
        }
        match (i.opcode, operands) {
            // The wrapper, its names and decorations go.
            (OP_TYPE_STRUCT, [result, ..]) if removed_ids.contains(result) => {}
            (OP_NAME | OP_MEMBER_NAME | OP_DECORATE | OP_MEMBER_DECORATE, [target, ..])
                if removed_ids.contains(target) => {}
            // Pointers to it point to the struct it wrapped.
            (OP_TYPE_POINTER, [result, storage, _]) if pointer_targets.contains_key(result) => {
                out.extend(instruction(OP_TYPE_POINTER, &[*result, *storage, pointer_targets[result]]));
            }
            // Access chains from its variables lose their first index.
            (OP_ACCESS_CHAIN | OP_IN_BOUNDS_ACCESS_CHAIN, [ty, result, base, _first, rest @ ..])
                if variables.contains(base) =>
            {
                out.extend(instruction(i.opcode, &[&[*ty, *result, *base], rest].concat()));
            }
            _ => out.extend_from_slice(&words[i.at..i.at + i.count]),
        }
    }
    Ok(out)
}

/// Whether instruction `opcode` `operands` lets wrapper `w` go: it uses the
/// wrapper, its pointer types and its variables only as [`unwrap`] expects.
fn is_safe(opcode: u16, operands: &[u32], w: &Wrapper, zero_constants: &HashSet<u32>) -> bool {
    let is_wrapper_or_pointer = |id: &u32| *id == w.id || w.pointers.contains(id);
    match (opcode, operands) {
        (OP_TYPE_POINTER, [result, _, pointee]) => {
            w.pointers.contains(result) || (*pointee != w.id && !w.pointers.contains(pointee))
        }
        (OP_TYPE_STRUCT, [result, members @ ..]) => *result == w.id || !members.iter().any(is_wrapper_or_pointer),
        (OP_TYPE_ARRAY | OP_TYPE_RUNTIME_ARRAY, [_, element, ..]) => !is_wrapper_or_pointer(element),
        (OP_TYPE_FUNCTION, [_, types @ ..]) => !types.iter().any(is_wrapper_or_pointer),
        (OP_VARIABLE, [ty, result, ..]) => *ty != w.id && (!w.pointers.contains(ty) || w.variables.contains(result)),
        (OP_ACCESS_CHAIN | OP_IN_BOUNDS_ACCESS_CHAIN, [ty, _, base, rest @ ..]) => {
            !is_wrapper_or_pointer(ty)
                && (!w.variables.contains(base) || rest.first().is_some_and(|f| zero_constants.contains(f)))
        }
        (OP_MEMBER_DECORATE | OP_MEMBER_NAME | OP_NAME | OP_DECORATE, _) => true,
        (op, _) if NOT_A_USE.contains(&op) => true,
        (op, [first, ..]) => {
            // A result type, and every pointer operand.
            !is_wrapper_or_pointer(first) && !w.variables.iter().any(|v| uses_pointer(op, operands, *v))
        }
        _ => true,
    }
}

fn instruction(opcode: u16, operands: &[u32]) -> Vec<u32> {
    let mut words = Vec::with_capacity(operands.len() + 1);
    words.push((((operands.len() + 1) as u32) << 16) | u32::from(opcode));
    words.extend_from_slice(operands);
    words
}

/// A SPIR-V literal string: UTF-8, nul-terminated, padded to words.
fn string_words(text: &str) -> Vec<u32> {
    let mut bytes = text.as_bytes().to_vec();
    bytes.push(0);
    while !bytes.len().is_multiple_of(4) {
        bytes.push(0);
    }
    bytes.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
}

fn literal_string(words: &[u32]) -> String {
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).take_while(|b| *b != 0).collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::MAGIC;

    fn op(opcode: u16, operands: &[u32]) -> Vec<u32> {
        instruction(opcode, operands)
    }

    /// naga's shape: float (1), vec4 (2), struct Constants (3) = { vec4, vec4 },
    /// wrapper (4) = { Constants }, pointer (5) to it, variable (6), uint (7),
    /// uint 0 (8), pointer to Constants (9), a function loading member 1.
    fn module() -> Vec<u32> {
        module_decorated(DECORATION_BLOCK)
    }

    fn module_decorated(block: u32) -> Vec<u32> {
        let mut w = vec![MAGIC, 0x0001_0000, 0, 30, 0];
        w.extend(op(OP_CAPABILITY, &[1]));
        w.extend(op(OP_MEMORY_MODEL, &[0, 1]));
        w.extend(op(OP_MEMBER_NAME, &[3, 0, u32::from_le_bytes(*b"a\0\0\0")]));
        w.extend(op(OP_NAME, &[6, u32::from_le_bytes(*b"c\0\0\0")]));
        w.extend(op(OP_MEMBER_DECORATE, &[3, 0, 35, 0]));
        w.extend(op(OP_MEMBER_DECORATE, &[3, 1, 35, 16]));
        w.extend(op(OP_DECORATE, &[6, 34, 0]));
        w.extend(op(OP_DECORATE, &[4, block]));
        w.extend(op(OP_MEMBER_DECORATE, &[4, 0, 35, 0]));
        w.extend(op(22, &[1, 32]));
        w.extend(op(23, &[2, 1, 4]));
        w.extend(op(OP_TYPE_STRUCT, &[3, 2, 2]));
        w.extend(op(OP_TYPE_STRUCT, &[4, 3]));
        w.extend(op(OP_TYPE_POINTER, &[5, STORAGE_UNIFORM, 4]));
        w.extend(op(OP_VARIABLE, &[5, 6, STORAGE_UNIFORM]));
        w.extend(op(21, &[7, 32, 0]));
        w.extend(op(OP_CONSTANT, &[7, 8, 0]));
        w.extend(op(OP_TYPE_POINTER, &[9, STORAGE_UNIFORM, 3]));
        w.extend(op(OP_TYPE_POINTER, &[10, STORAGE_UNIFORM, 2]));
        w.extend(op(OP_CONSTANT, &[7, 11, 1]));
        w.extend(op(OP_ACCESS_CHAIN, &[9, 12, 6, 8]));
        w.extend(op(OP_ACCESS_CHAIN, &[10, 13, 12, 11]));
        w.extend(op(OP_LOAD, &[2, 14, 13]));
        w
    }

    fn find(words: &[u32], opcode: u16) -> Vec<Vec<u32>> {
        instructions(words)
            .expect("well formed")
            .iter()
            .filter(|i| i.opcode == opcode)
            .map(|i| i.operands(words).to_vec())
            .collect()
    }

    #[test]
    fn removes_the_wrapper_of_a_struct() {
        let out = unwrap(&module()).expect("unwrap");
        assert_eq!(find(&out, OP_TYPE_STRUCT), vec![vec![3, 2, 2]]);
        assert_eq!(find(&out, OP_DECORATE), vec![vec![6, 34, 0], vec![3, DECORATION_BLOCK]]);
        assert!(!find(&out, OP_MEMBER_DECORATE).iter().any(|d| d[0] == 4));
        assert!(find(&out, OP_TYPE_POINTER).contains(&vec![5, STORAGE_UNIFORM, 3]));
        assert_eq!(find(&out, OP_ACCESS_CHAIN), vec![vec![9, 12, 6], vec![10, 13, 12, 11]]);
        // Less the wrapper's decorations (3 + 5 words), the wrapper (3) and an
        // index (1); plus the struct's Block decoration (3).
        assert_eq!(out.len(), module().len() - 3 - 5 - 3 - 1 + 3);
    }

    #[test]
    fn leaves_unexpected_shapes_alone() {
        // The variable is loaded whole: a use of the wrapper type.
        let mut loaded = module();
        loaded.extend(op(OP_LOAD, &[4, 15, 6]));
        assert_eq!(unwrap(&loaded).expect("unwrap"), loaded);

        // An access chain whose first index is not the constant 0.
        let mut indexed = module();
        indexed.extend(op(OP_ACCESS_CHAIN, &[9, 15, 6, 11]));
        assert_eq!(unwrap(&indexed).expect("unwrap"), indexed);

        // The variable passed to a function.
        let mut passed = module();
        passed.extend(op(OP_FUNCTION_CALL, &[1, 15, 20, 6]));
        assert_eq!(unwrap(&passed).expect("unwrap"), passed);

        // A storage buffer (BufferBlock) wrapper.
        let storage = module_decorated(DECORATION_BUFFER_BLOCK);
        assert_eq!(unwrap(&storage).expect("unwrap"), storage);

        // The struct is also a function variable's type.
        let mut local = module();
        local.extend(op(OP_TYPE_POINTER, &[15, 7, 3]));
        assert_eq!(unwrap(&local).expect("unwrap"), local);

        // The struct is nested in another.
        let mut nested = module();
        nested.extend(op(OP_TYPE_STRUCT, &[15, 3]));
        assert_eq!(unwrap(&nested).expect("unwrap"), nested);
    }

    #[test]
    fn names_the_member_of_a_wrapped_non_struct() {
        let mut w = vec![MAGIC, 0x0001_0000, 0, 30, 0];
        w.extend(op(OP_CAPABILITY, &[1]));
        w.extend(op(OP_NAME, &[6, u32::from_le_bytes(*b"mvp\0")]));
        w.extend(op(OP_DECORATE, &[4, DECORATION_BLOCK]));
        w.extend(op(22, &[1, 32]));
        w.extend(op(23, &[2, 1, 4]));
        w.extend(op(OP_TYPE_STRUCT, &[4, 2]));
        w.extend(op(OP_TYPE_POINTER, &[5, STORAGE_UNIFORM, 4]));
        w.extend(op(OP_VARIABLE, &[5, 6, STORAGE_UNIFORM]));
        let out = unwrap(&w).expect("unwrap");
        assert_eq!(find(&out, OP_MEMBER_NAME), vec![vec![4, 0, u32::from_le_bytes(*b"mvp\0")]]);
        assert_eq!(out.len(), w.len() + 4);
        // Idempotent.
        assert_eq!(unwrap(&out).expect("again"), out);
    }
}
