//! A program's variant matrix: every point of its axes not dropped by a
//! filter, named by all of its axes.

use crate::manifest::{AxisKind, Clause, Program};
use xr_sourcebuild::Define;

/// One point of a program's matrix.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Variant {
    /// `program[AXIS=value,…]`, or the program's name when it has no axes.
    pub name: String,
    /// The index of its value on each axis, in the program's axis order:
    /// a large matrix's variants are many, and their values are strings the
    /// program's axes already hold ([`Variant::values`]).
    point: Box<[u32]>,
}

impl Variant {
    /// (axis, value) in the program's axis order; `program` is the one
    /// [`variants`] made this variant of.
    pub fn values(&self, program: &Program) -> Vec<(String, String)> {
        program
            .axes
            .iter()
            .zip(&self.point)
            .map(|(axis, i)| (axis.name.clone(), axis.value(*i as usize).unwrap_or_default()))
            .collect()
    }

    /// The defines the point sets, for `program`, its program: each axis by
    /// its name, an enum axis as its value's index plus `AXIS_VALUE` (made
    /// when asked, not kept: a large matrix's variants are many).
    pub fn defines(&self, program: &Program) -> Vec<Define> {
        let mut defines = Vec::new();
        for (axis, (_, value)) in program.axes.iter().zip(self.values(program)) {
            match &axis.kind {
                AxisKind::Bool | AxisKind::Int { .. } => defines.push(Define::new(&axis.name, value)),
                AxisKind::Enum(values) => {
                    let index = values.iter().position(|v| *v == value).unwrap_or(0);
                    defines.push(Define::new(&axis.name, index.to_string()));
                    defines.push(Define::new(format!("{}_{}", axis.name, value.to_uppercase()), "1"));
                }
            }
        }
        defines
    }
}

/// Two points of a program's matrix with one name: a name that misses an
/// axis would silently share one program between them.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("program '{program}': variants {first:?} and {second:?} are both named '{name}'")]
pub struct DuplicateVariant {
    /// The program.
    pub program: String,
    /// The name both points have.
    pub name: String,
    /// The first point's (axis, value) pairs.
    pub first: Vec<(String, String)>,
    /// The second's.
    pub second: Vec<(String, String)>,
}

/// Every variant of `program`, in matrix order. Two points with the same
/// name are an error naming both.
pub fn variants(program: &Program) -> Result<Vec<Variant>, DuplicateVariant> {
    let mut points: Vec<Vec<usize>> = vec![Vec::new()];
    for axis in &program.axes {
        let count = axis.values().len();
        points = points.into_iter().flat_map(|p| (0..count).map(move |i| [p.clone(), vec![i]].concat())).collect();
    }
    let mut variants: Vec<Variant> = Vec::new();
    // Each name's index in `variants`: a set, not a scan, for large matrices.
    let mut names: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for point in points {
        let values: Vec<(String, String)> = program
            .axes
            .iter()
            .zip(&point)
            .map(|(axis, i)| (axis.name.clone(), axis.value(*i).unwrap_or_default()))
            .collect();
        if program.exclude.iter().any(|filter| filter.iter().all(|clause| matches(clause, &values, program))) {
            continue;
        }
        let name = if values.is_empty() {
            program.name.clone()
        } else {
            let parts: Vec<String> = values.iter().map(|(a, v)| format!("{a}={v}")).collect();
            format!("{}[{}]", program.name, parts.join(","))
        };
        if let Some(first) = names.get(&name) {
            return Err(DuplicateVariant {
                program: program.name.clone(),
                name,
                first: variants[*first].values(program),
                second: values,
            });
        }
        names.insert(name.clone(), variants.len());
        let point = point.iter().map(|i| *i as u32).collect();
        variants.push(Variant { name, point });
    }
    Ok(variants)
}

fn matches(clause: &Clause, values: &[(String, String)], program: &Program) -> bool {
    let Some((_, value)) = values.iter().find(|(axis, _)| *axis == clause.axis) else { return false };
    let numeric = program
        .axes
        .iter()
        .find(|a| a.name == clause.axis)
        .is_some_and(|a| matches!(a.kind, AxisKind::Int { .. } | AxisKind::Bool));
    let ordering = if numeric {
        value.parse::<i64>().ok().zip(clause.value.parse::<i64>().ok()).map(|(a, b)| a.cmp(&b))
    } else {
        Some(value.as_str().cmp(clause.value.as_str()))
    };
    let Some(ordering) = ordering else { return false };
    match clause.op.as_str() {
        "==" => ordering.is_eq(),
        "!=" => ordering.is_ne(),
        "<" => ordering.is_lt(),
        "<=" => ordering.is_le(),
        ">" => ordering.is_gt(),
        _ => ordering.is_ge(),
    }
}
