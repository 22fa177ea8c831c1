//! Typed Rust bindings of a built manifest (`xr bindgen`, and `xr-cargo`
//! in a build script): per program, its variants as Rust types, its
//! overrides with their types and defaults, a handle per constant and
//! resource with its type in Rust's, and a `#[repr(C)]` struct per uniform
//! block and push constant block laid out as the reflection says.
//!
//! What a program exposes comes from the reflection of every variant on
//! every target whose build system reflects in the SPIR-V build systems'
//! JSON shape (`stages[]`, with block members' layouts; [`reflection`]).
//! The build keeps only objects, so the reflection is made by a full
//! compile the first time an object is met and cached in the store under
//! `reflection/<object>.json`: an object's reflection never changes, and a
//! rebuild reflects only the objects it changed.
//!
//! The union over variants and targets is what the bindings offer: a
//! constant some (variant, target) lacks is an `Option` of a handle; a constant two
//! variants declare with different types, or a block two of them lay out
//! differently, has no one Rust type and is an error naming both.

mod code;
pub mod reflection;

pub use code::write_rust;
pub use reflection::{Binding, Block, BlockMember, Layout, VariantReflection};

use crate::{BuildPlan, Program, error::ArtifactError, paths::SourceRoot, variants};
use rayon::prelude::*;
use std::collections::BTreeMap;
use xr_host::Registry;

/// Why bindings could not be made.
#[derive(Debug, thiserror::Error)]
pub enum BindgenError {
    /// The store has no catalog of a program: it was not built.
    #[error("program '{program}' is not in the store {store} (build it first)")]
    NotBuilt {
        /// The program.
        program: String,
        /// The store.
        store: String,
    },
    /// A variant has no object of a target (its build failed).
    #[error("program '{program}': variant {variant} has no object of {target} (its build failed)")]
    MissingObject {
        /// The program.
        program: String,
        /// The variant.
        variant: String,
        /// The target.
        target: String,
    },
    /// A reflection compile failed.
    #[error("reflecting {variant} ({target}): {cause}")]
    Reflect {
        /// The variant.
        variant: String,
        /// The target.
        target: String,
        /// Why: the compile's failure, its diagnostics with their places.
        cause: Box<ArtifactError>,
    },
    /// Variants or targets disagree on a name's type.
    #[error("program '{program}': {message}")]
    Disagree {
        /// The program.
        program: String,
        /// What disagrees.
        message: String,
    },
    /// Two names become one Rust name.
    #[error("{first} and {second} are both `{rust}` in Rust: rename one{}", if where_.is_empty() { String::new() } else { format!(" ({where_})") })]
    SameRustName {
        /// The first name.
        first: String,
        /// The second.
        second: String,
        /// The Rust name both become.
        rust: String,
        /// Where (a program's constants, the programs).
        where_: String,
    },
    /// Two variants of a program declare one binding of a target differently.
    #[error("program '{program}': {disagreement}")]
    LayoutDisagrees {
        /// The program.
        program: String,
        /// Where, and the two declarations.
        disagreement: Box<LayoutDisagreement>,
    },
    /// No target of a program reflects in a shape the bindings read.
    #[error("program '{program}': none of its targets ({targets}) reflects its blocks and constants")]
    NoReflection {
        /// The program.
        program: String,
        /// Its targets.
        targets: String,
    },
}

/// One (set, binding) of a target that two variants declare as different
/// kinds or with different element counts: no one layout holds both.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "set {set} binding {binding} is a {first_kind} ({first_count} elements) in {first_in} and a {kind} ({count} elements) in {here}"
)]
pub struct LayoutDisagreement {
    /// The descriptor set.
    pub set: u32,
    /// The binding.
    pub binding: u32,
    /// What the variant that declared it first binds there.
    pub first_kind: String,
    /// How many elements.
    pub first_count: u32,
    /// That variant: `variant (target)`.
    pub first_in: String,
    /// What the other variant binds there.
    pub kind: String,
    /// How many elements.
    pub count: u32,
    /// The other variant: `variant (target)`.
    pub here: String,
}

/// What the bindings of one program are made of.
#[derive(Clone, Debug, PartialEq)]
pub struct ProgramBindings {
    /// The program's name in the manifest.
    pub name: String,
    /// Its axes: (name, values), in the manifest's order.
    pub axes: Vec<(String, Vec<String>)>,
    /// Every variant the manifest builds, as the values of its axes.
    pub variants: Vec<Vec<String>>,
    /// Its overrides.
    pub overrides: Vec<xr_store::catalog::Override>,
    /// Constants by name: their layout and whether every variant has them.
    pub constants: BTreeMap<String, (Layout, bool)>,
    /// Resources by name: whether a texture (else a buffer), and whether every variant has them.
    pub resources: BTreeMap<String, (bool, bool)>,
    /// Blocks by name.
    pub blocks: BTreeMap<String, Block>,
    /// The resource layout of each target's objects, every variant's together.
    pub layouts: Vec<TargetLayout>,
}

/// The resource layout of one target's objects of a program.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TargetLayout {
    /// The target.
    pub target: String,
    /// Every (set, binding) any variant reads, its stages those of all of them.
    pub bindings: Vec<Binding>,
    /// The push constant block: (the stages' bits, the largest size).
    pub push_constants: Option<(u32, u32)>,
}

/// Bindings of a manifest's programs.
#[derive(Clone, Debug, Default)]
pub struct Bindings {
    /// One per program.
    pub programs: Vec<ProgramBindings>,
    /// Objects compiled to be reflected (the others came from the store's cache).
    pub reflected: usize,
}

/// The bindings of `plan`'s programs (of `programs` when some are
/// named) over their targets (those of `targets` when some are named), as
/// built into its store, reflected where the store has no reflection of an
/// object yet by the build system the plan chose to build it, as loaded in
/// `registry`: a reflection is of the object that compiler made. Each
/// reflection compiles where `compiles` runs whole compiles (the build's
/// workers: a compiler that crashes fails that reflection, named).
pub fn bindings(
    plan: &BuildPlan,
    registry: &Registry,
    compiles: &crate::Compiles,
    programs: &[String],
    targets: &[String],
) -> Result<Bindings, BindgenError> {
    let root = SourceRoot::of_manifest(&plan.path);
    let (catalogs, _) = xr_store::catalog::read_all(&plan.store);
    let mut all = Bindings::default();
    for program in plan.programs.iter().filter(|p| programs.is_empty() || programs.contains(&p.name)) {
        let catalog = catalogs.get(&program.name).ok_or_else(|| BindgenError::NotBuilt {
            program: program.name.clone(),
            store: plan.store.display().to_string(),
        })?;
        let variants = variants(program)
            .map_err(|e| BindgenError::Disagree { program: program.name.clone(), message: e.to_string() })?;
        // The build system of each target, looked up here: the registry stays on this thread.
        let program_targets: Vec<&crate::TargetRef> =
            program.targets.iter().filter(|t| targets.is_empty() || targets.contains(&t.name)).collect();
        let mut systems = BTreeMap::new();
        for target in &program_targets {
            let system = program.system(registry, &target.name).map(|(chosen, system)| {
                (format!("{} {}", chosen.name, chosen.identity), (chosen.name.as_str(), system))
            });
            systems.insert(target.name.as_str(), system);
        }
        // Every (variant, target) whose object is reflected.
        let mut jobs = Vec::new();
        for variant in &variants {
            for target in &program_targets {
                let entry = catalog.variants.get(&variant.name);
                if let Some(why) = entry.and_then(|v| v.stale.get(&target.name)) {
                    tracing::warn!(
                        "bindings of {} ({}) from its last good object: its last build failed: {why}",
                        variant.name,
                        target.name
                    );
                }
                let object =
                    entry.and_then(|v| v.objects.get(&target.name)).ok_or_else(|| BindgenError::MissingObject {
                        program: program.name.clone(),
                        variant: variant.name.clone(),
                        target: target.name.clone(),
                    })?;
                jobs.push((variant, target.name.as_str(), object.as_str()));
            }
        }
        let reflected: Vec<Result<(bool, Option<VariantReflection>), BindgenError>> = jobs
            .par_iter()
            .map(|(variant, target, object)| {
                let reflector = systems[target].as_ref().map_or("", |(reflector, _)| reflector.as_str());
                reflection::of_object(&plan.store, (object, reflector), || match &systems[target] {
                    Ok((_, (compiler, system))) => {
                        reflection::compile(compiles, (compiler, system), program, (variant, target), &root)
                    }
                    Err(why) => Err(why.clone().into()),
                })
                .map_err(|cause| BindgenError::Reflect {
                    variant: variant.name.clone(),
                    target: (*target).to_owned(),
                    cause: Box::new(cause),
                })
            })
            .collect();
        let mut reflections = Vec::new();
        for (result, (variant, target, _)) in reflected.into_iter().zip(&jobs) {
            let (compiled, reflection) = result?;
            all.reflected += usize::from(compiled);
            if let Some(reflection) = reflection {
                reflections.push((variant.name.as_str(), *target, reflection));
            }
        }
        if reflections.is_empty() {
            let targets: Vec<&str> = program_targets.iter().map(|t| t.name.as_str()).collect();
            return Err(BindgenError::NoReflection { program: program.name.clone(), targets: targets.join(", ") });
        }
        let values = variants.iter().map(|v| v.values(program).into_iter().map(|(_, value)| value).collect());
        all.programs.push(merge(program, values.collect(), &reflections)?);
    }
    code::check_names(&all.programs)?;
    Ok(all)
}

/// Adds `reflection`'s bindings (of `variant` on `target`) to `layouts`:
/// one (set, binding) of two kinds or counts in two variants is an error
/// naming both.
fn merge_layout(
    layouts: &mut Vec<TargetLayout>,
    variant: &str,
    target: &str,
    reflection: &VariantReflection,
    first_seen: &mut BTreeMap<String, String>,
) -> Result<(), LayoutDisagreement> {
    let here = format!("{variant} ({target})");
    let at = match layouts.iter().position(|l| l.target == target) {
        Some(at) => at,
        None => {
            layouts.push(TargetLayout { target: target.to_owned(), ..TargetLayout::default() });
            layouts.len() - 1
        }
    };
    let layout = &mut layouts[at];
    for binding in &reflection.bindings {
        let key = format!("binding {target} {} {}", binding.set, binding.binding);
        match layout.bindings.iter_mut().find(|b| (b.set, b.binding) == (binding.set, binding.binding)) {
            Some(known) if (known.kind.as_str(), known.count) != (binding.kind.as_str(), binding.count) => {
                return Err(LayoutDisagreement {
                    set: binding.set,
                    binding: binding.binding,
                    first_kind: known.kind.clone(),
                    first_count: known.count,
                    first_in: first_seen[&key].clone(),
                    kind: binding.kind.clone(),
                    count: binding.count,
                    here,
                });
            }
            Some(known) => known.stages |= binding.stages,
            None => {
                layout.bindings.push(binding.clone());
                first_seen.insert(key, here.clone());
            }
        }
    }
    layout.bindings.sort_by_key(|b| (b.set, b.binding));
    if let Some((stages, size)) = reflection.push_constants {
        let (known_stages, known_size) = layout.push_constants.unwrap_or((0, 0));
        layout.push_constants = Some((known_stages | stages, known_size.max(size)));
    }
    Ok(())
}

/// The union of `reflections` (variant, target, reflection) of `program`.
fn merge(
    program: &Program,
    variants: Vec<Vec<String>>,
    reflections: &[(&str, &str, VariantReflection)],
) -> Result<ProgramBindings, BindgenError> {
    let disagree = |message: String| BindgenError::Disagree { program: program.name.clone(), message };
    let mut bindings = ProgramBindings {
        name: program.name.clone(),
        axes: program.axes.iter().map(|a| (a.name.clone(), a.values())).collect(),
        variants,
        overrides: program.overrides.clone(),
        constants: BTreeMap::new(),
        resources: BTreeMap::new(),
        blocks: BTreeMap::new(),
        layouts: Vec::new(),
    };
    // Where each name was first met, to name both sides of a disagreement.
    let mut first_seen: BTreeMap<String, String> = BTreeMap::new();
    // In which (variant, target) pairs each name is: a handle is no `Option`
    // only where every pair has it (a load of any of them resolves it).
    let mut constant_in: BTreeMap<&str, std::collections::BTreeSet<(&str, &str)>> = BTreeMap::new();
    let mut resource_in: BTreeMap<&str, std::collections::BTreeSet<(&str, &str)>> = BTreeMap::new();
    for (variant, target, reflection) in reflections {
        let here = format!("{variant} ({target})");
        for (name, layout) in &reflection.constants {
            constant_in.entry(name).or_default().insert((variant, target));
            match bindings.constants.get(name) {
                Some((known, _)) if !known.same_type(layout) => {
                    return Err(disagree(format!(
                        "constant '{name}' is {} in {} and {} in {here}",
                        known.glsl_name(),
                        first_seen[&format!("constant {name}")],
                        layout.glsl_name()
                    )));
                }
                Some(_) => {}
                None => {
                    bindings.constants.insert(name.clone(), (*layout, false));
                    first_seen.insert(format!("constant {name}"), here.clone());
                }
            }
        }
        for (name, texture) in &reflection.resources {
            resource_in.entry(name).or_default().insert((variant, target));
            bindings.resources.entry(name.clone()).or_insert((*texture, false));
        }
        for block in &reflection.blocks {
            match bindings.blocks.get(&block.name) {
                Some(known) if known != block => {
                    return Err(disagree(format!(
                        "block '{}' is laid out one way in {} and another in {here} ({} and {} bytes): \
                         give the bindings one target with `--target`",
                        block.name,
                        first_seen[&format!("block {}", block.name)],
                        known.size,
                        block.size
                    )));
                }
                Some(_) => {}
                None => {
                    bindings.blocks.insert(block.name.clone(), block.clone());
                    first_seen.insert(format!("block {}", block.name), here.clone());
                }
            }
        }
    }
    for (variant, target, reflection) in reflections {
        merge_layout(&mut bindings.layouts, variant, target, reflection, &mut first_seen).map_err(|disagreement| {
            BindgenError::LayoutDisagrees { program: program.name.clone(), disagreement: Box::new(disagreement) }
        })?;
    }
    let pairs = reflections.len();
    for (name, (_, everywhere)) in &mut bindings.constants {
        *everywhere = constant_in.get(name.as_str()).is_some_and(|v| v.len() == pairs);
    }
    for (name, (_, everywhere)) in &mut bindings.resources {
        *everywhere = resource_in.get(name.as_str()).is_some_and(|v| v.len() == pairs);
    }
    Ok(bindings)
}

#[cfg(test)]
mod layout_tests {
    use super::*;

    fn reflection(kind: &str, stages: u32, push: Option<(u32, u32)>) -> VariantReflection {
        VariantReflection {
            bindings: vec![Binding { set: 0, binding: 1, kind: kind.to_owned(), stages, count: 1 }],
            push_constants: push,
            ..VariantReflection::default()
        }
    }

    #[test]
    fn variants_merge_their_stages_and_push_sizes_and_a_binding_of_two_kinds_is_an_error_naming_both() {
        let mut layouts = Vec::new();
        let mut seen = BTreeMap::new();
        merge_layout(&mut layouts, "p[A=0]", "vk-spirv", &reflection("sampler", 1, Some((1, 16))), &mut seen).unwrap();
        merge_layout(&mut layouts, "p[A=1]", "vk-spirv", &reflection("sampler", 2, Some((2, 32))), &mut seen).unwrap();
        assert_eq!(layouts.len(), 1);
        assert_eq!(layouts[0].bindings[0].stages, 3, "{layouts:?}");
        assert_eq!(layouts[0].push_constants, Some((3, 32)));
        // Another target keeps a layout of its own.
        merge_layout(&mut layouts, "p[A=0]", "gl-spirv", &reflection("sampled image", 2, None), &mut seen).unwrap();
        assert_eq!(layouts.len(), 2);
        let error = merge_layout(&mut layouts, "p[A=2]", "vk-spirv", &reflection("sampled image", 2, None), &mut seen)
            .unwrap_err();
        assert_eq!(
            error.to_string(),
            "set 0 binding 1 is a sampler (1 elements) in p[A=0] (vk-spirv) and a sampled image (1 elements) in p[A=2] (vk-spirv)"
        );
    }

    #[test]
    fn the_reflection_json_gives_each_binding_its_kind_stages_and_count() {
        let json = r#"{"stages": [
            {"stage": "vertex", "push_constants": [{"name": "P", "set": 0, "binding": 0, "size": 16, "members": []}]},
            {"stage": "fragment", "images": [{"name": "t", "set": 0, "binding": 0, "kind": "sampled image", "count": 4}],
             "storage_buffers": [{"name": "B", "set": 1, "binding": 2, "size": 8, "count": 1, "members": []}]},
            {"stage": "compute", "images": [{"name": "t", "set": 0, "binding": 0, "kind": "sampled image", "count": 4}]}
        ]}"#;
        let reflection = reflection::parse(json).unwrap();
        assert_eq!(
            reflection.bindings,
            [
                Binding { set: 0, binding: 0, kind: "sampled image".into(), stages: 2 | 4, count: 4 },
                Binding { set: 1, binding: 2, kind: "storage buffer".into(), stages: 2, count: 1 },
            ]
        );
        assert_eq!(reflection.push_constants, Some((1, 16)));
    }
}
