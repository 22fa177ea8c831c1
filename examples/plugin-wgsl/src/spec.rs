//! Turning resolved overrides back into SPIR-V specialization constants.
//!
//! naga's SPIR-V writer has no specialization constants: it refuses a module
//! with `override` declarations until they are resolved to plain constants
//! (`naga::back::pipeline_constants::process_overrides`). This module makes
//! them specialization constants again, after the fact: every override is
//! resolved to a *sentinel*, a value of its type that no real shader uses
//! ([`sentinel`]), the module is written, and [`patch`] then finds the one
//! `OpConstant` of that type whose literal is the sentinel, turns it into an
//! `OpSpecConstant` holding the override's default, and decorates it with
//! `SpecId`. Constant composites built from it (a `vec3` splat of the
//! override) become `OpSpecConstantComposite`.
//!
//! Everything here is a pure function over SPIR-V words.

use std::collections::{HashMap, HashSet};
use std::fmt;
use xr_spirv_object::spirv::{Decoration, Op};
use xr_spirv_object::walk::{self, Instruction, WalkError, instruction_list};
pub use xr_spirv_object::walk::{HEADER_WORDS, MAGIC};

/// The `SpecId` decoration.
pub const DECORATION_SPEC_ID: u32 = Decoration::SpecId as u32;

/// The instructions that come before the first type declaration: the
/// preamble, debug names and annotations. [`patch`] adds its `OpDecorate`s
/// at the end of this run.
const BEFORE_TYPES: [Op; 22] = [
    Op::Capability,
    Op::Extension,
    Op::ExtInstImport,
    Op::MemoryModel,
    Op::EntryPoint,
    Op::ExecutionMode,
    Op::ExecutionModeId,
    Op::String,
    Op::SourceExtension,
    Op::Source,
    Op::SourceContinued,
    Op::Name,
    Op::MemberName,
    Op::ModuleProcessed,
    Op::Decorate,
    Op::MemberDecorate,
    Op::DecorationGroup,
    Op::GroupDecorate,
    Op::GroupMemberDecorate,
    Op::DecorateId,
    Op::DecorateString,
    Op::MemberDecorateString,
];

/// The 32-bit scalar types an override may have.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SpecScalar {
    /// `f32`.
    Float,
    /// `i32`.
    Int,
    /// `u32`.
    UInt,
}

impl SpecScalar {
    /// The name XR's reflection uses: `float`, `int` or `uint`.
    pub fn name(self) -> &'static str {
        match self {
            SpecScalar::Float => "float",
            SpecScalar::Int => "int",
            SpecScalar::UInt => "uint",
        }
    }

    /// `bits` as text: `1`, `0.5`, `-3`.
    pub fn format(self, bits: u32) -> String {
        match self {
            SpecScalar::Float => f32::from_bits(bits).to_string(),
            SpecScalar::Int => (bits as i32).to_string(),
            SpecScalar::UInt => bits.to_string(),
        }
    }
}

/// The sentinel of the override at `index` (its position among the
/// module's overrides), as the override's bits.
///
/// Floats are `0x4B3C_5A00 + index`: finite whole numbers near 1.2e7, exact
/// in an `f64` (naga takes pipeline constants as `f64`s) and never written
/// in a real shader. Integers are `0x5EED_0000 + index`, which fits an
/// `i32` as well as a `u32`.
pub fn sentinel(scalar: SpecScalar, index: usize) -> u32 {
    // Indices beyond 0xFFFF would reach into other sentinels' ranges; a
    // module has far fewer overrides (ids are 16 bits anyway).
    let index = (index & 0xFFFF) as u32;
    match scalar {
        SpecScalar::Float => 0x4B3C_5A00 + index,
        SpecScalar::Int | SpecScalar::UInt => 0x5EED_0000 + index,
    }
}

/// The sentinel's value as naga's pipeline constants take it.
pub fn sentinel_value(scalar: SpecScalar, bits: u32) -> f64 {
    match scalar {
        SpecScalar::Float => f64::from(f32::from_bits(bits)),
        SpecScalar::Int => f64::from(bits as i32),
        SpecScalar::UInt => f64::from(bits),
    }
}

/// One override to turn into a specialization constant.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpecPatch {
    /// The override's name, for errors.
    pub name: String,
    /// Its `@id`: the `SpecId`.
    pub id: u32,
    /// Its type.
    pub scalar: SpecScalar,
    /// The sentinel it was resolved to, as bits.
    pub sentinel: u32,
    /// Its default, as bits: the `OpSpecConstant`'s literal.
    pub default: u32,
}

/// Why [`patch`] failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PatchError {
    /// The words are not a well-formed SPIR-V module.
    Malformed(String),
    /// No constant holds the override's sentinel: naga folded it into
    /// another constant.
    NotFound {
        /// The override.
        name: String,
        /// Its id.
        id: u32,
    },
    /// More than one constant holds it.
    Ambiguous {
        /// The override.
        name: String,
        /// Its id.
        id: u32,
        /// How many.
        count: usize,
    },
    /// Two overrides have the same id.
    DuplicateId {
        /// The id.
        id: u32,
    },
}

impl fmt::Display for PatchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PatchError::Malformed(why) => write!(f, "naga wrote a malformed SPIR-V module: {why}"),
            PatchError::NotFound { name, id } => write!(
                f,
                "override '{name}' (id {id}) cannot become a specialization constant: naga evaluated it away at \
                 compile time (it is used only in constant expressions); use it together with a run-time value"
            ),
            PatchError::Ambiguous { name, id, count } => write!(
                f,
                "override '{name}' (id {id}) cannot become a specialization constant: its placeholder value was \
                 found {count} times in the SPIR-V"
            ),
            PatchError::DuplicateId { id } => write!(f, "two overrides have the id {id}"),
        }
    }
}

impl std::error::Error for PatchError {}

impl From<WalkError> for PatchError {
    fn from(error: WalkError) -> Self {
        PatchError::Malformed(error.to_string())
    }
}

/// `words` with every override of `patches` made a specialization constant
/// (see the module documentation). Every patch must find exactly one
/// `OpConstant` of its type holding its sentinel.
pub fn patch(words: &[u32], patches: &[SpecPatch]) -> Result<Vec<u32>, PatchError> {
    let list = instruction_list(words)?;
    let mut ids = HashSet::new();
    for p in patches {
        if !ids.insert(p.id) {
            return Err(PatchError::DuplicateId { id: p.id });
        }
    }

    let scalars = scalar_types(&list);

    let mut out = words.to_vec();
    // Result id → spec id, in the order of `patches`.
    let mut decorations = Vec::new();
    let mut spec_ids: HashSet<u32> = HashSet::new();
    for p in patches {
        let found: Vec<&Instruction> = list
            .iter()
            .filter(|i| match (i.op(), i.operands) {
                (Some(Op::Constant), [ty, _, value]) => scalars.get(ty) == Some(&p.scalar) && *value == p.sentinel,
                _ => false,
            })
            .collect();
        let i = match found.as_slice() {
            [one] => *one,
            [] => return Err(PatchError::NotFound { name: p.name.clone(), id: p.id }),
            many => return Err(PatchError::Ambiguous { name: p.name.clone(), id: p.id, count: many.len() }),
        };
        // Same operands, the literal now the default.
        out[i.offset] = walk::first_word(Op::SpecConstant, i.word_count());
        out[i.offset + 3] = p.default;
        let result = i.operands[1];
        spec_ids.insert(result);
        decorations.push((result, p.id));
    }

    // Composites of specialization constants must be specialization
    // constant composites; definitions come before uses, so one pass does.
    for i in &list {
        if let (Some(Op::ConstantComposite), [_, result, constituents @ ..]) = (i.op(), i.operands)
            && constituents.iter().any(|c| spec_ids.contains(c))
        {
            out[i.offset] = walk::first_word(Op::SpecConstantComposite, i.word_count());
            spec_ids.insert(*result);
        }
    }

    // After the last annotation (or debug name, or preamble instruction):
    // before the first type declaration.
    let insert_at = list
        .iter()
        .take_while(|i| i.op().is_some_and(|op| BEFORE_TYPES.contains(&op)))
        .last()
        .map(Instruction::end)
        .unwrap_or(HEADER_WORDS);
    let new: Vec<u32> = decorations
        .iter()
        .flat_map(|&(target, id)| walk::instruction(Op::Decorate, &[target, DECORATION_SPEC_ID, id]))
        .collect();
    out.splice(insert_at..insert_at, new);
    Ok(out)
}

/// The 32-bit scalar types `list` declares, by result id.
fn scalar_types(list: &[Instruction<'_>]) -> HashMap<u32, SpecScalar> {
    list.iter()
        .filter_map(|i| match (i.op(), i.operands) {
            (Some(Op::TypeFloat), [result, 32, ..]) => Some((*result, SpecScalar::Float)),
            (Some(Op::TypeInt), [result, 32, signed]) => {
                Some((*result, if *signed != 0 { SpecScalar::Int } else { SpecScalar::UInt }))
            }
            _ => None,
        })
        .collect()
}

/// `(spec id, type, default bits)` of every `OpSpecConstant` in `words`
/// decorated with a `SpecId`, in module order: what [`patch`] made, read
/// back (for tests and checks).
pub fn spec_constants(words: &[u32]) -> Result<Vec<(u32, SpecScalar, u32)>, PatchError> {
    let list = instruction_list(words)?;
    let scalars = scalar_types(&list);
    let spec_ids: HashMap<u32, u32> = list
        .iter()
        .filter_map(|i| match (i.op(), i.operands) {
            (Some(Op::Decorate), [target, DECORATION_SPEC_ID, id]) => Some((*target, *id)),
            _ => None,
        })
        .collect();
    Ok(list
        .iter()
        .filter_map(|i| match (i.op(), i.operands) {
            (Some(Op::SpecConstant), [ty, result, value]) => Some((*spec_ids.get(result)?, *scalars.get(ty)?, *value)),
            _ => None,
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    use xr_spirv_object::walk::instruction as op;

    /// A small module: float (id 1), int (id 2), uint (id 3) types, a
    /// float sentinel constant (4), a vec3 type (5) and a composite of the
    /// sentinel (6), an int constant (7), and a plain float 1.0 (8).
    fn module(with_decoration: bool) -> Vec<u32> {
        let float_sentinel = sentinel(SpecScalar::Float, 0);
        let int_sentinel = sentinel(SpecScalar::Int, 1);
        let mut words = vec![MAGIC, 0x0001_0000, 0, 20, 0];
        words.extend(op(Op::Capability, &[1]));
        words.extend(op(Op::MemoryModel, &[0, 1]));
        words.extend(op(Op::Name, &[4, u32::from_le_bytes(*b"GAIN"), 0]));
        if with_decoration {
            words.extend(op(Op::Decorate, &[9, Decoration::Location as u32, 0]));
        }
        words.extend(op(Op::TypeFloat, &[1, 32]));
        words.extend(op(Op::TypeInt, &[2, 32, 1]));
        words.extend(op(Op::TypeInt, &[3, 32, 0]));
        words.extend(op(Op::Constant, &[1, 4, float_sentinel]));
        words.extend(op(Op::TypeVector, &[5, 1, 3]));
        words.extend(op(Op::ConstantComposite, &[5, 6, 4, 4, 4]));
        words.extend(op(Op::Constant, &[2, 7, int_sentinel]));
        words.extend(op(Op::Constant, &[1, 8, 1.0f32.to_bits()]));
        words
    }

    fn patches() -> Vec<SpecPatch> {
        vec![
            SpecPatch {
                name: "GAIN".into(),
                id: 3,
                scalar: SpecScalar::Float,
                sentinel: sentinel(SpecScalar::Float, 0),
                default: 0.5f32.to_bits(),
            },
            SpecPatch {
                name: "COUNT".into(),
                id: 7,
                scalar: SpecScalar::Int,
                sentinel: sentinel(SpecScalar::Int, 1),
                default: (-2i32) as u32,
            },
        ]
    }

    #[test]
    fn sentinels_survive_the_round_trip_through_f64() {
        for index in [0, 1, 17, 300] {
            let float = sentinel(SpecScalar::Float, index);
            let value = f32::from_bits(float);
            assert!(value.is_finite() && value > 1.0e7);
            assert_eq!((sentinel_value(SpecScalar::Float, float) as f32).to_bits(), float);
            let int = sentinel(SpecScalar::Int, index);
            assert_eq!(sentinel_value(SpecScalar::Int, int) as i32 as u32, int);
            assert_eq!(sentinel_value(SpecScalar::UInt, int) as u32, int);
        }
        assert_ne!(sentinel(SpecScalar::Float, 0), sentinel(SpecScalar::Float, 1));
    }

    #[test]
    fn patches_constants_composites_and_decorations() {
        for with_decoration in [false, true] {
            let words = module(with_decoration);
            let out = patch(&words, &patches()).expect("patch");
            assert_eq!(out.len(), words.len() + 8);
            assert_eq!(
                spec_constants(&out).expect("read back"),
                vec![(3, SpecScalar::Float, 0.5f32.to_bits()), (7, SpecScalar::Int, (-2i32) as u32)]
            );
            let list = instruction_list(&out).expect("well formed");
            let ops: Vec<Op> = list.iter().map(|i| i.op().expect("a known opcode")).collect();
            // The decorations come after the existing annotations and names,
            // before the first type.
            let first_type = ops.iter().position(|o| *o == Op::TypeFloat).expect("float type");
            assert_eq!(&ops[first_type - 2..first_type], &[Op::Decorate, Op::Decorate]);
            assert!(ops[..first_type - 2].contains(&Op::Name));
            // The composite of the float became a spec constant composite.
            assert!(ops.contains(&Op::SpecConstantComposite));
            assert!(!ops.contains(&Op::ConstantComposite));
            // The plain 1.0 is untouched.
            assert_eq!(ops.iter().filter(|o| **o == Op::Constant).count(), 1);
        }
    }

    #[test]
    fn missing_and_repeated_sentinels_name_the_override() {
        let words = module(false);
        let mut missing = patches();
        missing[0].sentinel = sentinel(SpecScalar::Float, 9);
        assert_eq!(patch(&words, &missing), Err(PatchError::NotFound { name: "GAIN".into(), id: 3 }));
        assert!(patch(&words, &missing).unwrap_err().to_string().contains("'GAIN'"));

        // The int sentinel read as a uint: a different type, not found.
        let mut wrong_type = patches();
        wrong_type[1].scalar = SpecScalar::UInt;
        assert_eq!(patch(&words, &wrong_type), Err(PatchError::NotFound { name: "COUNT".into(), id: 7 }));

        let mut twice = words.clone();
        twice.extend(op(Op::Constant, &[1, 10, sentinel(SpecScalar::Float, 0)]));
        assert_eq!(patch(&twice, &patches()), Err(PatchError::Ambiguous { name: "GAIN".into(), id: 3, count: 2 }));

        let mut same_id = patches();
        same_id[1].id = 3;
        assert_eq!(patch(&words, &same_id), Err(PatchError::DuplicateId { id: 3 }));
    }

    #[test]
    fn refuses_malformed_modules() {
        assert!(matches!(patch(&[MAGIC, 0, 0], &[]), Err(PatchError::Malformed(_))));
        assert!(matches!(patch(&[1, 0, 0, 0, 0], &[]), Err(PatchError::Malformed(_))));
        let mut words = module(false);
        // An OpConstant that claims five words, with one left.
        words.push(walk::first_word(Op::Constant, 5));
        assert!(matches!(patch(&words, &[]), Err(PatchError::Malformed(_))));
        let mut zero = module(false);
        zero.push(0);
        assert!(matches!(patch(&zero, &[]), Err(PatchError::Malformed(_))));
    }

    #[test]
    fn no_patches_leave_the_module_as_it_was() {
        let words = module(true);
        assert_eq!(patch(&words, &[]).expect("patch"), words);
    }

    #[test]
    fn formats_defaults() {
        assert_eq!(SpecScalar::Float.format(1.0f32.to_bits()), "1");
        assert_eq!(SpecScalar::Float.format(0.5f32.to_bits()), "0.5");
        assert_eq!(SpecScalar::Int.format((-3i32) as u32), "-3");
        assert_eq!(SpecScalar::UInt.format(7), "7");
    }
}
