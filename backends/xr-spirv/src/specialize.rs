//! Specialization written into a module: each specialization constant's
//! default replaced by the value asked for, for an API that takes SPIR-V
//! as it is and has no way to pass values beside it (wgpu's passthrough
//! shader modules build a pipeline without `VkSpecializationInfo`).
//!
//! The constant stays a specialization constant with its `SpecId`, so the
//! module is what a driver specialized with those values would compile;
//! only the literal changes, and the module's size with it never does.

use xr_device::XrError;
use xr_sourcebuild::Specialization;
use xr_spirv_object::spirv::{Decoration, Op};
use xr_spirv_object::walk::{first_word, instruction_list};

/// `words` with the default of every specialization constant that
/// `values` names set to its value: a boolean by opcode
/// (`OpSpecConstantTrue`/`False`), a 32-bit scalar by its literal. An id
/// the module does not declare is ignored (each stage declares its own);
/// a 64-bit constant named in `values` is an error, since a value holds
/// 32 bits.
pub fn bake_specializations(words: &[u32], values: &[Specialization]) -> Result<Vec<u32>, XrError> {
    let instructions = instruction_list(words).map_err(|e| XrError::invalid_input(format!("damaged SPIR-V: {e}")))?;
    let mut spec_ids = std::collections::HashMap::new();
    for i in &instructions {
        if let (Some(Op::Decorate), [target, decoration, id, ..]) = (i.op(), i.operands)
            && *decoration == Decoration::SpecId as u32
        {
            spec_ids.insert(*target, *id);
        }
    }
    let value_of = |result: u32| spec_ids.get(&result).and_then(|id| values.iter().find(|v| v.id == *id));
    let mut baked = words.to_vec();
    for i in &instructions {
        match (i.op(), i.operands) {
            (Some(Op::SpecConstantTrue | Op::SpecConstantFalse), [_, result]) => {
                if let Some(value) = value_of(*result) {
                    let op = if value.bits != 0 { Op::SpecConstantTrue } else { Op::SpecConstantFalse };
                    baked[i.offset] = first_word(op, i.word_count());
                }
            }
            (Some(Op::SpecConstant), [_, result, literal @ ..]) => {
                if let Some(value) = value_of(*result) {
                    if literal.len() != 1 {
                        return Err(XrError::invalid_input(format!(
                            "specialization constant {} is {} bits wide: a value holds 32",
                            value.id,
                            literal.len() * 32
                        )));
                    }
                    baked[i.offset + 3] = value.bits;
                }
            }
            _ => {}
        }
    }
    Ok(baked)
}

#[cfg(test)]
mod tests {
    use super::*;
    use xr_spirv_object::walk::instruction;

    /// A module fragment: a bool spec constant (id 3), a float one (id 0)
    /// and a plain constant, with their decorations.
    fn module() -> Vec<u32> {
        let mut words = vec![0x0723_0203, 0x0001_0000, 0, 20, 0];
        words.extend(instruction(Op::Decorate, &[10, Decoration::SpecId as u32, 3]));
        words.extend(instruction(Op::Decorate, &[11, Decoration::SpecId as u32, 0]));
        words.extend(instruction(Op::TypeBool, &[1]));
        words.extend(instruction(Op::TypeFloat, &[2, 32]));
        words.extend(instruction(Op::SpecConstantTrue, &[1, 10]));
        words.extend(instruction(Op::SpecConstant, &[2, 11, 1.0f32.to_bits()]));
        words.extend(instruction(Op::Constant, &[2, 12, 1.0f32.to_bits()]));
        words
    }

    fn defaults(words: &[u32]) -> Vec<(u32, String)> {
        crate::reflect::spec_constant_defaults(words).expect("walks")
    }

    #[test]
    fn each_named_constant_takes_its_value_and_nothing_else_changes() {
        let words = module();
        let values = [Specialization { id: 0, bits: 2.5f32.to_bits() }, Specialization { id: 3, bits: 0 }];
        let baked = bake_specializations(&words, &values).expect("bakes");
        assert_eq!(baked.len(), words.len());
        let mut found = defaults(&baked);
        found.sort();
        assert_eq!(found, vec![(0, "2.5".to_owned()), (3, "false".to_owned())]);
        let changed = words.iter().zip(&baked).filter(|(a, b)| a != b).count();
        assert_eq!(changed, 2, "one literal and one opcode");
        // The plain constant with the same literal stays 1.0.
        assert_eq!(baked[baked.len() - 1], 1.0f32.to_bits());
    }

    #[test]
    fn an_id_the_module_lacks_is_ignored_and_no_values_change_nothing() {
        let words = module();
        assert_eq!(bake_specializations(&words, &[]).expect("bakes"), words);
        let other = [Specialization { id: 9, bits: 7 }];
        assert_eq!(bake_specializations(&words, &other).expect("bakes"), words);
    }

    #[test]
    fn a_damaged_module_is_an_error() {
        let mut words = module();
        words.truncate(words.len() - 1);
        assert!(bake_specializations(&words, &[]).is_err());
    }
}
