//! Which hit group each hit stage of a ray tracing program is in.
//!
//! The rule lives in the contract, beside the stages, because every front
//! end (the manifest, `xr compile`) checks it where the user can be shown
//! the line, and every build system of ray tracing pipelines lays out its
//! groups by it; two copies would drift.
//!
//! - By default, hit group `i` holds the `i`-th closest-hit, the `i`-th
//!   any-hit and the `i`-th intersection stage given (each where there is
//!   one).
//! - Where the program names groups ([`SourceDesc::hit_group`]), every hit
//!   stage names one, a group holds at most one stage of each kind, and the
//!   groups are numbered from 0 with none left empty: a `traceRayEXT`'s
//!   offset then names a group the author wrote down.
//!
//! [`SourceDesc::hit_group`]: crate::SourceDesc::hit_group

use crate::ShaderStage;

/// A hit group: the stages it holds, as indices into the program's stages.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HitGroup {
    /// Its closest-hit stage.
    pub closest_hit: Option<usize>,
    /// Its any-hit stage.
    pub any_hit: Option<usize>,
    /// Its intersection stage: the group is a procedural one.
    pub intersection: Option<usize>,
}

impl HitGroup {
    fn slot(&mut self, stage: ShaderStage) -> Option<&mut Option<usize>> {
        match stage {
            ShaderStage::ClosestHit => Some(&mut self.closest_hit),
            ShaderStage::AnyHit => Some(&mut self.any_hit),
            ShaderStage::Intersection => Some(&mut self.intersection),
            _ => None,
        }
    }
}

/// A stage that breaks the rule of named hit groups, and why.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct HitGroupMistake {
    /// The index of the stage it is about, among those given.
    pub stage: usize,
    /// What is wrong, naming the stage by the name it was given with.
    pub message: String,
}

impl ShaderStage {
    /// Whether it goes in a hit group: closest-hit, any-hit, intersection.
    pub fn is_hit(self) -> bool {
        matches!(self, ShaderStage::ClosestHit | ShaderStage::AnyHit | ShaderStage::Intersection)
    }
}

/// A stage as [`hit_groups`] reads it: its stage, the hit group it names
/// and the name a message calls it by (its file).
pub type NamedStage<'a> = (ShaderStage, Option<u32>, &'a str);

/// The hit groups of a program's stages.
pub fn hit_groups(stages: &[NamedStage]) -> Result<Vec<HitGroup>, HitGroupMistake> {
    let mistake = |stage: usize, message: String| HitGroupMistake { stage, message };
    if let Some((index, (stage, group, name))) =
        stages.iter().enumerate().find(|(_, (stage, group, _))| group.is_some() && !stage.is_hit())
    {
        return Err(mistake(
            index,
            format!(
                "{name}: a {} stage is in no hit group (hit group {} named): only closest-hit, any-hit and \
                 intersection stages are",
                stage.name(),
                group.unwrap_or_default()
            ),
        ));
    }
    let named = stages.iter().find(|(_, group, _)| group.is_some());
    let mut groups: Vec<HitGroup> = Vec::new();
    let mut nth = [0usize; 3];
    for (index, (stage, group, name)) in stages.iter().enumerate() {
        let kind = match stage {
            ShaderStage::ClosestHit => 0,
            ShaderStage::AnyHit => 1,
            ShaderStage::Intersection => 2,
            _ => continue,
        };
        let number = match (group, named) {
            (Some(group), _) => *group as usize,
            (None, Some((_, Some(other_group), other))) => {
                return Err(mistake(
                    index,
                    format!(
                        "{name}: the {} stage names no hit group, while {other} names hit group {other_group}: \
                         name the groups of all hit stages or of none",
                        stage.name()
                    ),
                ));
            }
            (None, _) => {
                nth[kind] += 1;
                nth[kind] - 1
            }
        };
        if number >= stages.len() {
            return Err(mistake(
                index,
                format!(
                    "{name}: hit group {number} leaves groups empty: the program has {} hit stages, and hit \
                     groups are numbered from 0 with none empty",
                    stages.iter().filter(|s| s.0.is_hit()).count()
                ),
            ));
        }
        if groups.len() <= number {
            groups.resize(number + 1, HitGroup::default());
        }
        let slot = groups[number].slot(*stage).expect("a hit stage has a slot");
        if let Some(first) = slot.replace(index) {
            return Err(mistake(
                index,
                format!(
                    "{name}: hit group {number} already has a {} stage ({}): a group holds one of each kind",
                    stage.name(),
                    stages[first].2
                ),
            ));
        }
    }
    if let Some(empty) = groups.iter().position(|g| *g == HitGroup::default()) {
        let (index, (_, _, name)) = stages
            .iter()
            .enumerate()
            .find(|(_, (_, group, _))| group.is_some_and(|g| g as usize > empty))
            .expect("a group past an empty one was named");
        return Err(mistake(
            index,
            format!(
                "{name}: hit group {empty} has no stage, though groups up to {} are named: hit groups are \
                 numbered from 0 with none empty",
                groups.len() - 1
            ),
        ));
    }
    Ok(groups)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ShaderStage::*;

    fn group(closest_hit: Option<usize>, any_hit: Option<usize>, intersection: Option<usize>) -> HitGroup {
        HitGroup { closest_hit, any_hit, intersection }
    }

    #[test]
    fn by_default_the_nth_stage_of_each_kind_makes_hit_group_n() {
        let stages = [
            (RayGeneration, None, "a.rgen"),
            (ClosestHit, None, "a.rchit"),
            (Miss, None, "a.rmiss"),
            (AnyHit, None, "a.rahit"),
            (ClosestHit, None, "b.rchit"),
        ];
        assert_eq!(hit_groups(&stages), Ok(vec![group(Some(1), Some(3), None), group(Some(4), None, None)]));
    }

    #[test]
    fn named_groups_put_each_stage_where_it_says() {
        // What the default rule cannot say: the any-hit stage with the second closest-hit.
        let stages = [
            (RayGeneration, None, "a.rgen"),
            (ClosestHit, Some(0), "plain.rchit"),
            (ClosestHit, Some(1), "glass.rchit"),
            (AnyHit, Some(1), "glass.rahit"),
            (Intersection, Some(2), "sphere.rint"),
        ];
        assert_eq!(
            hit_groups(&stages),
            Ok(vec![group(Some(1), None, None), group(Some(2), Some(3), None), group(None, None, Some(4))])
        );
    }

    #[test]
    fn every_broken_rule_names_the_stage_that_breaks_it() {
        let cases: [(&[NamedStage], usize, &str); 5] = [
            (&[(RayGeneration, Some(0), "a.rgen")], 0, "a.rgen: a ray-generation stage is in no hit group"),
            (
                &[(ClosestHit, Some(0), "a.rchit"), (AnyHit, None, "a.rahit")],
                1,
                "a.rahit: the any-hit stage names no hit group, while a.rchit names hit group 0",
            ),
            (
                &[(ClosestHit, Some(0), "a.rchit"), (ClosestHit, Some(0), "b.rchit")],
                1,
                "b.rchit: hit group 0 already has a closest-hit stage (a.rchit)",
            ),
            (
                &[(ClosestHit, Some(0), "a.rchit"), (ClosestHit, Some(2), "b.rchit"), (AnyHit, Some(2), "b.rahit")],
                1,
                "b.rchit: hit group 1 has no stage, though groups up to 2 are named",
            ),
            (&[(ClosestHit, Some(7), "a.rchit")], 0, "a.rchit: hit group 7 leaves groups empty"),
        ];
        for (stages, stage, message) in cases {
            let mistake = hit_groups(stages).expect_err(message);
            assert_eq!(mistake.stage, stage, "{mistake}");
            assert!(mistake.message.starts_with(message), "{mistake}");
        }
    }
}
