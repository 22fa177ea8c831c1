//! The ray tracing interface of a module: payloads, hit attributes and
//! callable data by structure, and whether it traces rays.

use super::instructions;
use xr_device::XrError;
use xr_spirv_object::spirv::{Op, StorageClass};
use xr_spirv_object::walk::{Instruction, literal_string};

/// What a variable of a ray tracing stage's interface carries between stages.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RayStorage {
    /// A payload a stage traces rays with (`rayPayloadEXT`).
    Payload,
    /// The payload of the ray that reached a hit or miss stage (`rayPayloadInEXT`).
    IncomingPayload,
    /// What an intersection stage reports and hit stages read (`hitAttributeEXT`).
    HitAttribute,
    /// Data a stage calls a callable stage with (`callableDataEXT`).
    CallableData,
    /// The data a callable stage was called with (`callableDataInEXT`).
    IncomingCallableData,
}

impl RayStorage {
    /// How a message names it.
    pub fn name(self) -> &'static str {
        match self {
            RayStorage::Payload => "ray payload",
            RayStorage::IncomingPayload => "incoming ray payload",
            RayStorage::HitAttribute => "hit attribute",
            RayStorage::CallableData => "callable data",
            RayStorage::IncomingCallableData => "incoming callable data",
        }
    }
}

/// One variable of a ray tracing stage's interface: its kind, its name
/// and its type, written out by structure (`{vec3<f32>, f32}`), which is
/// what must agree between the stages that share it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RayVariable {
    /// What it carries.
    pub storage: RayStorage,
    /// Its name in the source (empty where the module has no names).
    pub name: String,
    /// Its type by structure; member names do not count.
    pub ty: String,
    /// The scalars it is made of, in order (`f32` three times for a
    /// `vec3` and for a struct of one `vec3`): two stages agree on a payload
    /// whose scalars are the same, as its memory is.
    pub scalars: Vec<String>,
}

/// The ray payloads, hit attributes and callable data a module declares.
pub fn ray_interface(words: &[u32]) -> Result<Vec<RayVariable>, XrError> {
    use std::collections::HashMap;
    let instructions = instructions(words)?;
    let by_id: HashMap<u32, &Instruction<'_>> = instructions
        .iter()
        .filter_map(|i| {
            let result = match i.op()? {
                Op::TypeVoid
                | Op::TypeBool
                | Op::TypeInt
                | Op::TypeFloat
                | Op::TypeVector
                | Op::TypeMatrix
                | Op::TypeArray
                | Op::TypeRuntimeArray
                | Op::TypeStruct
                | Op::TypePointer => *i.operands.first()?,
                Op::Constant => *i.operands.get(1)?,
                _ => return None,
            };
            Some((result, i))
        })
        .collect();
    let names: HashMap<u32, String> = instructions
        .iter()
        .filter(|i| i.op() == Some(Op::Name))
        .filter_map(|i| Some((*i.operands.first()?, literal_string(i.operands.get(1..)?))))
        .collect();
    let mut variables = Vec::new();
    for i in &instructions {
        let (Some(Op::Variable), [pointer, id, class, ..]) = (i.op(), i.operands) else { continue };
        let storage = match StorageClass::from_u32(*class) {
            Some(StorageClass::RayPayloadKHR) => RayStorage::Payload,
            Some(StorageClass::IncomingRayPayloadKHR) => RayStorage::IncomingPayload,
            Some(StorageClass::HitAttributeKHR) => RayStorage::HitAttribute,
            Some(StorageClass::CallableDataKHR) => RayStorage::CallableData,
            Some(StorageClass::IncomingCallableDataKHR) => RayStorage::IncomingCallableData,
            _ => continue,
        };
        let pointee = by_id.get(pointer).and_then(|p| p.operands.get(2)).copied().unwrap_or(0);
        let mut scalars = Vec::new();
        scalars_of(&by_id, pointee, 0, &mut scalars);
        variables.push(RayVariable {
            storage,
            name: names.get(id).cloned().unwrap_or_default(),
            ty: type_by_structure(&by_id, pointee, 0),
            scalars,
        });
    }
    Ok(variables)
}

/// Type `id` written out by structure, as [`RayVariable::ty`] is.
fn type_by_structure(by_id: &std::collections::HashMap<u32, &Instruction<'_>>, id: u32, depth: u32) -> String {
    let Some(i) = by_id.get(&id).filter(|_| depth < 16) else { return format!("%{id}") };
    let inner = |id: u32| type_by_structure(by_id, id, depth + 1);
    match (i.op(), i.operands) {
        (Some(Op::TypeBool), _) => "bool".into(),
        (Some(Op::TypeFloat), [_, width, ..]) => format!("f{width}"),
        (Some(Op::TypeInt), [_, width, signed, ..]) => format!("{}{width}", if *signed == 1 { "i" } else { "u" }),
        (Some(Op::TypeVector), [_, component, count, ..]) => format!("vec{count}<{}>", inner(*component)),
        (Some(Op::TypeMatrix), [_, column, count, ..]) => format!("mat{count}<{}>", inner(*column)),
        (Some(Op::TypeArray), [_, element, length, ..]) => {
            let length = match by_id.get(length).map(|c| (c.op(), c.operands)) {
                Some((Some(Op::Constant), [_, _, value, ..])) => value.to_string(),
                _ => format!("%{length}"),
            };
            format!("[{}; {length}]", inner(*element))
        }
        (Some(Op::TypeRuntimeArray), [_, element, ..]) => format!("[{}]", inner(*element)),
        (Some(Op::TypeStruct), [_, members @ ..]) => {
            format!("{{{}}}", members.iter().map(|m| inner(*m)).collect::<Vec<_>>().join(", "))
        }
        _ => format!("%{id}"),
    }
}

/// The scalars of type `id`, in memory order, into `out`.
fn scalars_of(by_id: &std::collections::HashMap<u32, &Instruction<'_>>, id: u32, depth: u32, out: &mut Vec<String>) {
    let Some(i) = by_id.get(&id).filter(|_| depth < 16) else {
        out.push(format!("%{id}"));
        return;
    };
    let repeat = |element: u32, count: u32, out: &mut Vec<String>| {
        for _ in 0..count.min(4096) {
            scalars_of(by_id, element, depth + 1, out);
        }
    };
    match (i.op(), i.operands) {
        (Some(Op::TypeVector | Op::TypeMatrix), [_, element, count, ..]) => repeat(*element, *count, out),
        (Some(Op::TypeArray), [_, element, length, ..]) => match by_id.get(length).map(|c| (c.op(), c.operands)) {
            Some((Some(Op::Constant), [_, _, value, ..])) => repeat(*element, *value, out),
            _ => out.push(format!("%{id}")),
        },
        (Some(Op::TypeStruct), [_, members @ ..]) => {
            for member in members {
                scalars_of(by_id, *member, depth + 1, out);
            }
        }
        _ => out.push(type_by_structure(by_id, id, depth)),
    }
}

/// Whether a module traces rays (`OpTraceRayKHR`): a hit or miss stage
/// that does needs a pipeline of recursion depth 2 (a shadow ray).
pub fn traces_rays(words: &[u32]) -> Result<bool, XrError> {
    Ok(instructions(words)?.iter().any(|i| i.op() == Some(Op::TraceRayKHR)))
}
