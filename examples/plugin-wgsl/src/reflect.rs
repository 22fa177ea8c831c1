//! What a compiled program reads, from naga's module: the constants
//! (members of uniform and push-constant structs), the bound resources and
//! the overrides.

use crate::compile::OverrideDecl;
use naga::common::wgsl::TypeContext;
use naga::valid::ModuleInfo;
use naga::{AddressSpace, ImageClass, Module, TypeInner};
use serde_json::json;
use std::fmt::Write as _;
use xr_sourcebuild::{ProgramReflection, ReflectedConstant, ReflectedOverride, ReflectedResource, ShaderStage};

/// A constant the stage reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Constant {
    /// Member name.
    pub name: String,
    /// WGSL type: `vec4<f32>`.
    pub ty: String,
    /// The variable whose member it is.
    pub block: String,
}

/// A resource the stage binds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Resource {
    /// Variable name.
    pub name: String,
    /// `uniform-block`, `storage-buffer`, `sampled-image`, `sampler` or `storage-image`.
    pub kind: &'static str,
    /// `@group`.
    pub set: u32,
    /// `@binding`.
    pub binding: u32,
}

/// One stage's reflection.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StageReflection {
    /// The stage.
    pub stage: ShaderStage,
    /// Its entry point.
    pub entry_point: String,
    /// Its file.
    pub file: String,
    /// The constants it reads.
    pub constants: Vec<Constant>,
    /// The resources it binds.
    pub resources: Vec<Resource>,
    /// The overrides its file declares.
    pub overrides: Vec<OverrideDecl>,
}

/// The reflection of entry point `ep_index` of `module`: what it uses.
pub fn stage_reflection(
    module: &Module,
    info: &ModuleInfo,
    ep_index: usize,
    stage: ShaderStage,
    file: &str,
    overrides: &[OverrideDecl],
) -> StageReflection {
    let ctx = module.to_ctx();
    let uses = info.get_entry_point(ep_index);
    let mut constants = Vec::new();
    let mut resources = Vec::new();
    for (handle, var) in module.global_variables.iter() {
        if uses[handle].is_empty() {
            continue;
        }
        let name = var.name.clone().unwrap_or_default();
        if matches!(var.space, AddressSpace::Uniform | AddressSpace::Immediate) {
            match &module.types[var.ty].inner {
                TypeInner::Struct { members, .. } => {
                    for m in members {
                        constants.push(Constant {
                            name: m.name.clone().unwrap_or_default(),
                            ty: ctx.type_to_string(m.ty),
                            block: name.clone(),
                        });
                    }
                }
                _ => {
                    constants.push(Constant { name: name.clone(), ty: ctx.type_to_string(var.ty), block: name.clone() })
                }
            }
        }
        let Some(binding) = &var.binding else { continue };
        let kind = match var.space {
            AddressSpace::Uniform => "uniform-block",
            AddressSpace::Storage { .. } => "storage-buffer",
            AddressSpace::Handle => {
                let mut ty = &module.types[var.ty].inner;
                if let TypeInner::BindingArray { base, .. } = ty {
                    ty = &module.types[*base].inner;
                }
                match ty {
                    TypeInner::Sampler { .. } => "sampler",
                    TypeInner::Image { class: ImageClass::Storage { .. }, .. } => "storage-image",
                    TypeInner::Image { .. } => "sampled-image",
                    _ => continue,
                }
            }
            _ => continue,
        };
        resources.push(Resource { name, kind, set: binding.group, binding: binding.binding });
    }
    StageReflection {
        stage,
        entry_point: module.entry_points[ep_index].name.clone(),
        file: file.to_owned(),
        constants,
        resources,
        overrides: overrides.to_vec(),
    }
}

/// The program's reflection: every stage's constants and resources, and
/// every override (once per id), with the JSON and text forms.
pub fn program_reflection(stages: &[StageReflection]) -> ProgramReflection {
    let mut reflection = ProgramReflection::default();
    let mut overrides: Vec<&OverrideDecl> = Vec::new();
    let mut text = String::new();
    let mut stages_json = Vec::new();
    for s in stages {
        let _ = writeln!(text, "{} ({} entry point '{}')", s.file, s.stage.name(), s.entry_point);
        for c in &s.constants {
            let _ = writeln!(text, "  constant {} : {}", c.name, c.ty);
            reflection.constants.push(ReflectedConstant {
                name: c.name.as_str().into(),
                ty: c.ty.as_str().into(),
                stage: s.stage,
            });
        }
        for r in &s.resources {
            let _ = writeln!(text, "  {} {} (set {}, binding {})", r.kind, r.name, r.set, r.binding);
            reflection.resources.push(ReflectedResource {
                name: r.name.as_str().into(),
                kind: r.kind.into(),
                set: r.set,
                binding: r.binding,
                stage: s.stage,
            });
        }
        for o in &s.overrides {
            if !overrides.iter().any(|seen| seen.id == o.id) {
                overrides.push(o);
            }
        }
        stages_json.push(json!({
            "stage": s.stage.name(),
            "entry_point": s.entry_point,
            "file": s.file,
            "constants": s.constants.iter().map(|c| json!({"name": c.name, "ty": c.ty, "block": c.block})).collect::<Vec<_>>(),
            "resources": s.resources.iter().map(|r| json!({"name": r.name, "kind": r.kind, "set": r.set, "binding": r.binding})).collect::<Vec<_>>(),
        }));
    }
    if !overrides.is_empty() {
        let _ = writeln!(text, "overrides");
    }
    for o in &overrides {
        let default = o.scalar.format(o.default);
        let _ = writeln!(text, "  override {} (id {}) : {} = {default}", o.name, o.id, o.scalar.name());
        reflection.overrides.push(ReflectedOverride {
            name: o.name.as_str().into(),
            id: o.id,
            ty: o.scalar.name().into(),
            default: default.into(),
        });
    }
    let overrides_json: Vec<_> = overrides
        .iter()
        .map(|o| json!({"name": o.name, "id": o.id, "ty": o.scalar.name(), "default": o.scalar.format(o.default)}))
        .collect();
    reflection.json = json!({ "stages": stages_json, "overrides": overrides_json }).to_string().into();
    reflection.text = text.into();
    reflection
}
