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

/// The SPIR-V magic number.
pub const MAGIC: u32 = 0x0723_0203;

pub(crate) const HEADER_WORDS: usize = 5;

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
const OP_TYPE_INT: u16 = 21;
const OP_TYPE_FLOAT: u16 = 22;
/// `OpConstant`.
pub const OP_CONSTANT: u16 = 43;
/// `OpConstantComposite`.
pub const OP_CONSTANT_COMPOSITE: u16 = 44;
/// `OpSpecConstant`.
pub const OP_SPEC_CONSTANT: u16 = 50;
/// `OpSpecConstantComposite`.
pub const OP_SPEC_CONSTANT_COMPOSITE: u16 = 51;
/// `OpDecorate`.
pub const OP_DECORATE: u16 = 71;
const OP_MEMBER_DECORATE: u16 = 72;
const OP_DECORATION_GROUP: u16 = 73;
const OP_GROUP_DECORATE: u16 = 74;
const OP_GROUP_MEMBER_DECORATE: u16 = 75;
const OP_MODULE_PROCESSED: u16 = 330;
const OP_EXECUTION_MODE_ID: u16 = 331;
const OP_DECORATE_ID: u16 = 332;
const OP_DECORATE_STRING: u16 = 5632;
const OP_MEMBER_DECORATE_STRING: u16 = 5633;
/// The `SpecId` decoration.
pub const DECORATION_SPEC_ID: u32 = 1;

/// The instructions that come before the first type declaration: the
/// preamble, debug names and annotations. [`patch`] adds its `OpDecorate`s
/// at the end of this run.
const BEFORE_TYPES: [u16; 22] = [
    OP_CAPABILITY,
    OP_EXTENSION,
    OP_EXT_INST_IMPORT,
    OP_MEMORY_MODEL,
    OP_ENTRY_POINT,
    OP_EXECUTION_MODE,
    OP_EXECUTION_MODE_ID,
    OP_STRING,
    OP_SOURCE_EXTENSION,
    OP_SOURCE,
    OP_SOURCE_CONTINUED,
    OP_NAME,
    OP_MEMBER_NAME,
    OP_MODULE_PROCESSED,
    OP_DECORATE,
    OP_MEMBER_DECORATE,
    OP_DECORATION_GROUP,
    OP_GROUP_DECORATE,
    OP_GROUP_MEMBER_DECORATE,
    OP_DECORATE_ID,
    OP_DECORATE_STRING,
    OP_MEMBER_DECORATE_STRING,
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

/// One instruction: where it starts, its opcode and its length in words.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Instruction {
    /// Index of its first word.
    pub at: usize,
    /// Its opcode.
    pub opcode: u16,
    /// Its length in words, the first included.
    pub count: usize,
}

impl Instruction {
    /// Its operands (the words after the first).
    pub fn operands(self, words: &[u32]) -> &[u32] {
        &words[self.at + 1..self.at + self.count]
    }
}

/// The instructions of `words` after the header.
pub(crate) fn instructions(words: &[u32]) -> Result<Vec<Instruction>, PatchError> {
    if words.len() < HEADER_WORDS {
        return Err(PatchError::Malformed(format!("{} words is shorter than the header", words.len())));
    }
    if words[0] != MAGIC {
        return Err(PatchError::Malformed(format!("magic number 0x{:08x}", words[0])));
    }
    let mut list = Vec::new();
    let mut at = HEADER_WORDS;
    while at < words.len() {
        let count = (words[at] >> 16) as usize;
        let opcode = (words[at] & 0xFFFF) as u16;
        if count == 0 || at + count > words.len() {
            return Err(PatchError::Malformed(format!("instruction {opcode} at word {at} has a bad length {count}")));
        }
        list.push(Instruction { at, opcode, count });
        at += count;
    }
    Ok(list)
}

/// `words` with every override of `patches` made a specialization constant
/// (see the module documentation). Every patch must find exactly one
/// `OpConstant` of its type holding its sentinel.
pub fn patch(words: &[u32], patches: &[SpecPatch]) -> Result<Vec<u32>, PatchError> {
    let list = instructions(words)?;
    let mut ids = HashSet::new();
    for p in patches {
        if !ids.insert(p.id) {
            return Err(PatchError::DuplicateId { id: p.id });
        }
    }

    // The 32-bit scalar types, by result id.
    let mut scalars: HashMap<u32, SpecScalar> = HashMap::new();
    for i in &list {
        let operands = &words[i.at + 1..i.at + i.count];
        match (i.opcode, operands) {
            (OP_TYPE_FLOAT, [result, 32, ..]) => {
                scalars.insert(*result, SpecScalar::Float);
            }
            (OP_TYPE_INT, [result, 32, signed]) => {
                scalars.insert(*result, if *signed != 0 { SpecScalar::Int } else { SpecScalar::UInt });
            }
            _ => {}
        }
    }

    let mut out = words.to_vec();
    // Result id → spec id, in the order of `patches`.
    let mut decorations = Vec::new();
    let mut spec_ids: HashSet<u32> = HashSet::new();
    for p in patches {
        let found: Vec<&Instruction> = list
            .iter()
            .filter(|i| {
                i.opcode == OP_CONSTANT
                    && i.count == 4
                    && scalars.get(&words[i.at + 1]) == Some(&p.scalar)
                    && words[i.at + 3] == p.sentinel
            })
            .collect();
        let i = match found.as_slice() {
            [one] => *one,
            [] => return Err(PatchError::NotFound { name: p.name.clone(), id: p.id }),
            many => return Err(PatchError::Ambiguous { name: p.name.clone(), id: p.id, count: many.len() }),
        };
        out[i.at] = (4 << 16) | u32::from(OP_SPEC_CONSTANT);
        out[i.at + 3] = p.default;
        let result = words[i.at + 2];
        spec_ids.insert(result);
        decorations.push((result, p.id));
    }

    // Composites of specialization constants must be specialization
    // constant composites; definitions come before uses, so one pass does.
    for i in &list {
        if i.opcode == OP_CONSTANT_COMPOSITE && i.count >= 3 {
            let constituents = &words[i.at + 3..i.at + i.count];
            if constituents.iter().any(|c| spec_ids.contains(c)) {
                out[i.at] = ((i.count as u32) << 16) | u32::from(OP_SPEC_CONSTANT_COMPOSITE);
                spec_ids.insert(words[i.at + 2]);
            }
        }
    }

    // After the last annotation (or debug name, or preamble instruction):
    // before the first type declaration.
    let insert_at = list
        .iter()
        .take_while(|i| BEFORE_TYPES.contains(&i.opcode))
        .last()
        .map(|i| i.at + i.count)
        .unwrap_or(HEADER_WORDS);
    let new: Vec<u32> = decorations
        .iter()
        .flat_map(|&(target, id)| [(4 << 16) | u32::from(OP_DECORATE), target, DECORATION_SPEC_ID, id])
        .collect();
    out.splice(insert_at..insert_at, new);
    Ok(out)
}

/// `(spec id, type, default bits)` of every `OpSpecConstant` in `words`
/// decorated with a `SpecId`, in module order: what [`patch`] made, read
/// back (for tests and checks).
pub fn spec_constants(words: &[u32]) -> Result<Vec<(u32, SpecScalar, u32)>, PatchError> {
    let list = instructions(words)?;
    let mut scalars = HashMap::new();
    let mut spec_ids = HashMap::new();
    for i in &list {
        match (i.opcode, &words[i.at + 1..i.at + i.count]) {
            (OP_TYPE_FLOAT, [result, 32, ..]) => {
                scalars.insert(*result, SpecScalar::Float);
            }
            (OP_TYPE_INT, [result, 32, signed]) => {
                scalars.insert(*result, if *signed != 0 { SpecScalar::Int } else { SpecScalar::UInt });
            }
            (OP_DECORATE, [target, DECORATION_SPEC_ID, id]) => {
                spec_ids.insert(*target, *id);
            }
            _ => {}
        }
    }
    Ok(list
        .iter()
        .filter(|i| i.opcode == OP_SPEC_CONSTANT && i.count == 4)
        .filter_map(|i| {
            let id = spec_ids.get(&words[i.at + 2])?;
            Some((*id, *scalars.get(&words[i.at + 1])?, words[i.at + 3]))
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(opcode: u16, operands: &[u32]) -> Vec<u32> {
        let mut words = vec![(((operands.len() + 1) as u32) << 16) | u32::from(opcode)];
        words.extend_from_slice(operands);
        words
    }

    /// A small module: float (id 1), int (id 2), uint (id 3) types, a
    /// float sentinel constant (4), a vec3 type (5) and a composite of the
    /// sentinel (6), an int constant (7), and a plain float 1.0 (8).
    fn module(with_decoration: bool) -> Vec<u32> {
        let float_sentinel = sentinel(SpecScalar::Float, 0);
        let int_sentinel = sentinel(SpecScalar::Int, 1);
        let mut words = vec![MAGIC, 0x0001_0000, 0, 20, 0];
        words.extend(op(OP_CAPABILITY, &[1]));
        words.extend(op(OP_MEMORY_MODEL, &[0, 1]));
        words.extend(op(OP_NAME, &[4, u32::from_le_bytes(*b"GAIN"), 0]));
        if with_decoration {
            words.extend(op(OP_DECORATE, &[9, 30, 0]));
        }
        words.extend(op(OP_TYPE_FLOAT, &[1, 32]));
        words.extend(op(OP_TYPE_INT, &[2, 32, 1]));
        words.extend(op(OP_TYPE_INT, &[3, 32, 0]));
        words.extend(op(OP_CONSTANT, &[1, 4, float_sentinel]));
        words.extend(op(23, &[5, 1, 3])); // OpTypeVector
        words.extend(op(OP_CONSTANT_COMPOSITE, &[5, 6, 4, 4, 4]));
        words.extend(op(OP_CONSTANT, &[2, 7, int_sentinel]));
        words.extend(op(OP_CONSTANT, &[1, 8, 1.0f32.to_bits()]));
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
            let list = instructions(&out).expect("well formed");
            let ops: Vec<u16> = list.iter().map(|i| i.opcode).collect();
            // The decorations come after the existing annotations and names,
            // before the first type.
            let first_type = ops.iter().position(|o| *o == OP_TYPE_FLOAT).expect("float type");
            assert_eq!(&ops[first_type - 2..first_type], &[OP_DECORATE, OP_DECORATE]);
            assert!(ops[..first_type - 2].contains(&OP_NAME));
            // The composite of the float became a spec constant composite.
            assert!(ops.contains(&OP_SPEC_CONSTANT_COMPOSITE));
            assert!(!ops.contains(&OP_CONSTANT_COMPOSITE));
            // The plain 1.0 is untouched.
            assert_eq!(ops.iter().filter(|o| **o == OP_CONSTANT).count(), 1);
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
        twice.extend(op(OP_CONSTANT, &[1, 10, sentinel(SpecScalar::Float, 0)]));
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
        words.push(5 << 16 | 43);
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
