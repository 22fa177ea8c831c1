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

use crate::spec::{HEADER_WORDS, PatchError};
use std::collections::{HashMap, HashSet};
use xr_spirv_object::spirv::{Decoration, Op, StorageClass};
use xr_spirv_object::walk::{Instruction, instruction, instruction_list, literal_string, string_operand};

const DECORATION_BLOCK: u32 = Decoration::Block as u32;
const DECORATION_BUFFER_BLOCK: u32 = Decoration::BufferBlock as u32;
const STORAGE_UNIFORM: u32 = StorageClass::Uniform as u32;
const STORAGE_PUSH_CONSTANT: u32 = StorageClass::PushConstant as u32;

/// Instructions whose first operand is a literal, or names a target
/// without using it.
const NOT_A_USE: [Op; 13] = [
    Op::SourceContinued,
    Op::Source,
    Op::SourceExtension,
    Op::Name,
    Op::MemberName,
    Op::String,
    Op::Extension,
    Op::ExtInstImport,
    Op::MemoryModel,
    Op::EntryPoint,
    Op::Capability,
    Op::ModuleProcessed,
    Op::Decorate,
];

/// The operand positions that take a pointer, by opcode (`usize::MAX`: all
/// from the previous position on).
fn pointer_operands(op: Option<Op>) -> &'static [usize] {
    let Some(op) = op else { return &[] };
    match op {
        Op::Load
        | Op::PtrAccessChain
        | Op::ArrayLength
        | Op::InBoundsPtrAccessChain
        | Op::CopyObject
        | Op::ImageTexelPointer => &[2],
        Op::Store | Op::AtomicStore => &[0],
        Op::CopyMemory | Op::CopyMemorySized => &[0, 1],
        Op::Select => &[3, 4],
        Op::PtrEqual | Op::PtrNotEqual | Op::PtrDiff => &[2, 3],
        Op::FunctionCall => &[3, usize::MAX],
        Op::Phi => &[2, usize::MAX],
        // The atomics from OpAtomicLoad to OpAtomicXor (OpAtomicStore above):
        // the pointer after the result type and id.
        Op::AtomicLoad
        | Op::AtomicExchange
        | Op::AtomicCompareExchange
        | Op::AtomicCompareExchangeWeak
        | Op::AtomicIIncrement
        | Op::AtomicIDecrement
        | Op::AtomicIAdd
        | Op::AtomicISub
        | Op::AtomicSMin
        | Op::AtomicUMin
        | Op::AtomicSMax
        | Op::AtomicUMax
        | Op::AtomicAnd
        | Op::AtomicOr
        | Op::AtomicXor => &[2],
        _ => &[],
    }
}

/// Whether `id` is one of the pointer operands of `operands`.
fn uses_pointer(op: Option<Op>, operands: &[u32], id: u32) -> bool {
    let positions = pointer_operands(op);
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
    let list = instruction_list(words)?;

    let mut structs: HashMap<u32, Vec<u32>> = HashMap::new();
    let mut decorations: HashMap<u32, Vec<u32>> = HashMap::new();
    let mut zero_constants = HashSet::new();
    let mut member_names: HashSet<(u32, u32)> = HashSet::new();
    let mut names: HashMap<u32, String> = HashMap::new();
    for i in &list {
        match (i.op(), i.operands) {
            (Some(Op::TypeStruct), [result, members @ ..]) => {
                structs.insert(*result, members.to_vec());
            }
            (Some(Op::Decorate), [target, decoration, ..]) => decorations.entry(*target).or_default().push(*decoration),
            (Some(Op::Constant), [_, result, 0]) => {
                zero_constants.insert(*result);
            }
            (Some(Op::MemberName), [target, member, ..]) => {
                member_names.insert((*target, *member));
            }
            (Some(Op::Name), [target, name @ ..]) => {
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
            list.iter().filter(|i| i.op() == Some(Op::TypePointer) && i.operands.get(2) == Some(&id)).collect();
        if pointers.is_empty()
            || !pointers.iter().all(|p| [STORAGE_UNIFORM, STORAGE_PUSH_CONSTANT].contains(&p.operands[1]))
        {
            continue;
        }
        let pointers: Vec<u32> = pointers.iter().map(|p| p.operands[0]).collect();
        let variables: Vec<u32> = list
            .iter()
            .filter(|i| i.op() == Some(Op::Variable))
            .filter_map(|i| match i.operands {
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
            new_names.extend(instruction(Op::MemberName, &[&[w.id, 0], &string_operand(name)[..]].concat()));
        }
    }

    // Keep only the wrappers that are safe to remove, around structs used
    // nowhere else (a Block must not be nested, nor live in other storage).
    let wrapper_ids: HashSet<u32> = structured.iter().map(|w| w.id).collect();
    let used_elsewhere = |inner: u32| {
        list.iter().any(|i| match (i.op(), i.operands) {
            (Some(Op::TypeStruct), [result, members @ ..]) => !wrapper_ids.contains(result) && members.contains(&inner),
            (Some(Op::TypeArray | Op::TypeRuntimeArray), [_, element, ..]) => *element == inner,
            (Some(Op::TypePointer), [_, storage, pointee]) => {
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
                && list.iter().all(|i| is_safe(i.op(), i.operands, w, &zero_constants))
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
        let op = i.op();
        // New member names go after the last name; new Block decorations
        // after the last decoration: before the first instruction past them.
        let is_debug = matches!(
            op,
            Some(Op::SourceContinued | Op::Source | Op::SourceExtension | Op::String | Op::Name | Op::MemberName)
        );
        let is_preamble = matches!(
            op,
            Some(
                Op::Capability
                    | Op::Extension
                    | Op::ExtInstImport
                    | Op::MemoryModel
                    | Op::EntryPoint
                    | Op::ExecutionMode
                    | Op::ExecutionModeId
            )
        );
        if !names_written && !is_debug && !is_preamble {
            out.extend_from_slice(&new_names);
            names_written = true;
        }
        let is_annotation = matches!(
            op,
            Some(
                Op::Decorate
                    | Op::MemberDecorate
                    | Op::DecorationGroup
                    | Op::GroupDecorate
                    | Op::GroupMemberDecorate
                    | Op::DecorateId
                    | Op::DecorateString
                    | Op::MemberDecorateString
            )
        );
        if !blocks_written && !is_debug && !is_preamble && !is_annotation && op != Some(Op::ModuleProcessed) {
            for b in &blocks {
                out.extend(instruction(Op::Decorate, &[*b, DECORATION_BLOCK]));
            }
            blocks_written = true;
        }
        match (op, i.operands) {
            // The wrapper, its names and decorations go.
            (Some(Op::TypeStruct), [result, ..]) if removed_ids.contains(result) => {}
            (Some(Op::Name | Op::MemberName | Op::Decorate | Op::MemberDecorate), [target, ..])
                if removed_ids.contains(target) => {}
            // Pointers to it point to the struct it wrapped.
            (Some(Op::TypePointer), [result, storage, _]) if pointer_targets.contains_key(result) => {
                out.extend(instruction(Op::TypePointer, &[*result, *storage, pointer_targets[result]]));
            }
            // Access chains from its variables lose their first index.
            (Some(chain @ (Op::AccessChain | Op::InBoundsAccessChain)), [ty, result, base, _first, rest @ ..])
                if variables.contains(base) =>
            {
                out.extend(instruction(chain, &[&[*ty, *result, *base], rest].concat()));
            }
            _ => out.extend_from_slice(&words[i.offset..i.end()]),
        }
    }
    Ok(out)
}

/// Whether instruction `op` `operands` lets wrapper `w` go: it uses the
/// wrapper, its pointer types and its variables only as [`unwrap`] expects.
fn is_safe(op: Option<Op>, operands: &[u32], w: &Wrapper, zero_constants: &HashSet<u32>) -> bool {
    let is_wrapper_or_pointer = |id: &u32| *id == w.id || w.pointers.contains(id);
    match (op, operands) {
        (Some(Op::TypePointer), [result, _, pointee]) => {
            w.pointers.contains(result) || (*pointee != w.id && !w.pointers.contains(pointee))
        }
        (Some(Op::TypeStruct), [result, members @ ..]) => *result == w.id || !members.iter().any(is_wrapper_or_pointer),
        (Some(Op::TypeArray | Op::TypeRuntimeArray), [_, element, ..]) => !is_wrapper_or_pointer(element),
        (Some(Op::TypeFunction), [_, types @ ..]) => !types.iter().any(is_wrapper_or_pointer),
        (Some(Op::Variable), [ty, result, ..]) => {
            *ty != w.id && (!w.pointers.contains(ty) || w.variables.contains(result))
        }
        (Some(Op::AccessChain | Op::InBoundsAccessChain), [ty, _, base, rest @ ..]) => {
            !is_wrapper_or_pointer(ty)
                && (!w.variables.contains(base) || rest.first().is_some_and(|f| zero_constants.contains(f)))
        }
        (Some(Op::MemberDecorate | Op::MemberName | Op::Name | Op::Decorate), _) => true,
        (Some(op), _) if NOT_A_USE.contains(&op) => true,
        (op, [first, ..]) => {
            // A result type, and every pointer operand.
            !is_wrapper_or_pointer(first) && !w.variables.iter().any(|v| uses_pointer(op, operands, *v))
        }
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::MAGIC;
    use xr_spirv_object::walk::instruction as op;

    const OFFSET: u32 = Decoration::Offset as u32;
    const DESCRIPTOR_SET: u32 = Decoration::DescriptorSet as u32;

    /// naga's shape: float (1), vec4 (2), struct Constants (3) = { vec4, vec4 },
    /// wrapper (4) = { Constants }, pointer (5) to it, variable (6), uint (7),
    /// uint 0 (8), pointer to Constants (9), a function loading member 1.
    fn module() -> Vec<u32> {
        module_decorated(DECORATION_BLOCK)
    }

    fn module_decorated(block: u32) -> Vec<u32> {
        let mut w = vec![MAGIC, 0x0001_0000, 0, 30, 0];
        w.extend(op(Op::Capability, &[1]));
        w.extend(op(Op::MemoryModel, &[0, 1]));
        w.extend(op(Op::MemberName, &[3, 0, u32::from_le_bytes(*b"a\0\0\0")]));
        w.extend(op(Op::Name, &[6, u32::from_le_bytes(*b"c\0\0\0")]));
        w.extend(op(Op::MemberDecorate, &[3, 0, OFFSET, 0]));
        w.extend(op(Op::MemberDecorate, &[3, 1, OFFSET, 16]));
        w.extend(op(Op::Decorate, &[6, DESCRIPTOR_SET, 0]));
        w.extend(op(Op::Decorate, &[4, block]));
        w.extend(op(Op::MemberDecorate, &[4, 0, OFFSET, 0]));
        w.extend(op(Op::TypeFloat, &[1, 32]));
        w.extend(op(Op::TypeVector, &[2, 1, 4]));
        w.extend(op(Op::TypeStruct, &[3, 2, 2]));
        w.extend(op(Op::TypeStruct, &[4, 3]));
        w.extend(op(Op::TypePointer, &[5, STORAGE_UNIFORM, 4]));
        w.extend(op(Op::Variable, &[5, 6, STORAGE_UNIFORM]));
        w.extend(op(Op::TypeInt, &[7, 32, 0]));
        w.extend(op(Op::Constant, &[7, 8, 0]));
        w.extend(op(Op::TypePointer, &[9, STORAGE_UNIFORM, 3]));
        w.extend(op(Op::TypePointer, &[10, STORAGE_UNIFORM, 2]));
        w.extend(op(Op::Constant, &[7, 11, 1]));
        w.extend(op(Op::AccessChain, &[9, 12, 6, 8]));
        w.extend(op(Op::AccessChain, &[10, 13, 12, 11]));
        w.extend(op(Op::Load, &[2, 14, 13]));
        w
    }

    fn find(words: &[u32], op: Op) -> Vec<Vec<u32>> {
        instruction_list(words)
            .expect("well formed")
            .iter()
            .filter(|i| i.op() == Some(op))
            .map(|i| i.operands.to_vec())
            .collect()
    }

    #[test]
    fn removes_the_wrapper_of_a_struct() {
        let out = unwrap(&module()).expect("unwrap");
        assert_eq!(find(&out, Op::TypeStruct), vec![vec![3, 2, 2]]);
        assert_eq!(find(&out, Op::Decorate), vec![vec![6, 34, 0], vec![3, DECORATION_BLOCK]]);
        assert!(!find(&out, Op::MemberDecorate).iter().any(|d| d[0] == 4));
        assert!(find(&out, Op::TypePointer).contains(&vec![5, STORAGE_UNIFORM, 3]));
        assert_eq!(find(&out, Op::AccessChain), vec![vec![9, 12, 6], vec![10, 13, 12, 11]]);
        // Less the wrapper's decorations (3 + 5 words), the wrapper (3) and an
        // index (1); plus the struct's Block decoration (3).
        assert_eq!(out.len(), module().len() - 3 - 5 - 3 - 1 + 3);
    }

    #[test]
    fn leaves_unexpected_shapes_alone() {
        // The variable is loaded whole: a use of the wrapper type.
        let mut loaded = module();
        loaded.extend(op(Op::Load, &[4, 15, 6]));
        assert_eq!(unwrap(&loaded).expect("unwrap"), loaded);

        // An access chain whose first index is not the constant 0.
        let mut indexed = module();
        indexed.extend(op(Op::AccessChain, &[9, 15, 6, 11]));
        assert_eq!(unwrap(&indexed).expect("unwrap"), indexed);

        // The variable passed to a function.
        let mut passed = module();
        passed.extend(op(Op::FunctionCall, &[1, 15, 20, 6]));
        assert_eq!(unwrap(&passed).expect("unwrap"), passed);

        // A storage buffer (BufferBlock) wrapper.
        let storage = module_decorated(DECORATION_BUFFER_BLOCK);
        assert_eq!(unwrap(&storage).expect("unwrap"), storage);

        // The struct is also a function variable's type.
        let mut local = module();
        local.extend(op(Op::TypePointer, &[15, StorageClass::Function as u32, 3]));
        assert_eq!(unwrap(&local).expect("unwrap"), local);

        // The struct is nested in another.
        let mut nested = module();
        nested.extend(op(Op::TypeStruct, &[15, 3]));
        assert_eq!(unwrap(&nested).expect("unwrap"), nested);
    }

    #[test]
    fn names_the_member_of_a_wrapped_non_struct() {
        let mut w = vec![MAGIC, 0x0001_0000, 0, 30, 0];
        w.extend(op(Op::Capability, &[1]));
        w.extend(op(Op::Name, &[6, u32::from_le_bytes(*b"mvp\0")]));
        w.extend(op(Op::Decorate, &[4, DECORATION_BLOCK]));
        w.extend(op(Op::TypeFloat, &[1, 32]));
        w.extend(op(Op::TypeVector, &[2, 1, 4]));
        w.extend(op(Op::TypeStruct, &[4, 2]));
        w.extend(op(Op::TypePointer, &[5, STORAGE_UNIFORM, 4]));
        w.extend(op(Op::Variable, &[5, 6, STORAGE_UNIFORM]));
        let out = unwrap(&w).expect("unwrap");
        assert_eq!(find(&out, Op::MemberName), vec![vec![4, 0, u32::from_le_bytes(*b"mvp\0")]]);
        assert_eq!(out.len(), w.len() + 4);
        // Idempotent.
        assert_eq!(unwrap(&out).expect("again"), out);
    }
}
