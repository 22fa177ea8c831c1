//! Instructions newer than the reflection library's SPIR-V grammar.
//!
//! The reflection library (spirq) knows the opcodes of the Vulkan SDK
//! 1.3.268 and panics on any other. What reflection reads of a module is
//! its declarations (capabilities, extensions, entry points, decorations,
//! types, variables, constants) and, of its function bodies, only which
//! variables the code touches. So before the library sees a module:
//!
//! - an instruction it does not know inside a function body (between
//!   `OpFunction` and `OpFunctionEnd`) is skipped by its word count (the
//!   high 16 bits of its first word), and each of its operands that is a
//!   pointer into a variable (the variable's id, or an access chain's) is
//!   counted as touched (an `OpLoad` of it stands in its place): a resource
//!   that only such an instruction reads stays in the reflection, where
//!   leaving it out would give the driver a pipeline layout without it.
//!   An instruction whose own result a later known instruction uses is
//!   beyond this: that use names an id no instruction defines, which the
//!   reflection library may refuse;
//! - one among the declarations is refused, naming it and its word:
//!   reflection cannot read a type, variable or decoration it does not
//!   know, and guessing past it could misplace a binding.
//!
//! `OpCapability` and `OpExtension` are known whatever they declare: a
//! capability the grammar does not know is carried through by its number
//! ([`super::declared_capabilities`]), for the device check to judge.

use std::borrow::Cow;
use std::fmt;
use xr_spirv_object::spirv::Op;
use xr_spirv_object::walk::{Instruction, first_word};

/// An instruction the reflection library's grammar does not know, among a
/// module's declarations (outside every function body).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "cannot reflect the SPIR-V: the instruction at word {offset}, {}, is among the module's declarations \
     and newer than XR's SPIR-V grammar (Vulkan SDK 1.3.268); reflection skips such an instruction only \
     inside a function body",
    NewerOpName(*opcode)
)]
pub(super) struct NewerDeclaration {
    /// Index of the instruction's first word in the module's words.
    pub offset: usize,
    /// Its opcode.
    pub opcode: u32,
}

/// An opcode newer than the reflection library's grammar, for messages:
/// its name in a newer grammar's (`OpTypeUntypedPointerKHR (opcode 4417)`)
/// where that one knows it, else `opcode 65000`.
struct NewerOpName(u32);

impl fmt::Display for NewerOpName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match spirv_newer::Op::from_u32(self.0) {
            Some(op) => write!(f, "Op{op:?} (opcode {})", self.0),
            None => write!(f, "opcode {}", self.0),
        }
    }
}

/// `words` as the reflection library can read them (see the module
/// documentation): borrowed where every instruction is known, rewritten
/// where a function body has one that is not; an error for the first
/// unknown instruction among the declarations.
pub(super) fn for_the_reflector<'w>(
    words: &'w [u32],
    instructions: &[Instruction<'_>],
) -> Result<Cow<'w, [u32]>, NewerDeclaration> {
    let mut in_function = false;
    let mut unknown_in_bodies = Vec::new();
    // Ids of pointers into variables: what an unknown instruction's operand
    // must be to count as a touch (its other operands are literals, types,
    // values, which a load of would misread).
    let mut pointers = std::collections::HashSet::new();
    for i in instructions {
        match i.op() {
            Some(Op::Function) => in_function = true,
            Some(Op::FunctionEnd) => in_function = false,
            Some(Op::Variable | Op::AccessChain | Op::InBoundsAccessChain | Op::PtrAccessChain) => {
                pointers.extend(i.operands.get(1).copied());
            }
            Some(_) => {}
            None if in_function => unknown_in_bodies.push(i),
            None => return Err(NewerDeclaration { offset: i.offset, opcode: i.opcode }),
        }
    }
    if unknown_in_bodies.is_empty() {
        return Ok(Cow::Borrowed(words));
    }
    let mut out = Vec::with_capacity(words.len() + 3 * unknown_in_bodies.len());
    let mut copied = 0;
    for i in unknown_in_bodies {
        out.extend_from_slice(&words[copied..i.offset]);
        // `OpLoad %0 %0 %operand`: the reflection library counts the
        // variable an `OpLoad` reads (through access chains) as used, and
        // reads nothing else of it.
        for operand in i.operands.iter().filter(|operand| pointers.contains(*operand)) {
            out.extend([first_word(Op::Load, 4), 0, 0, *operand]);
        }
        copied = i.end();
    }
    out.extend_from_slice(&words[copied..]);
    Ok(Cow::Owned(out))
}
