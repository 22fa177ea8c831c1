//! One report per distinct diagnostic.
//!
//! A typo in a file that 18 artifacts read (6 variants × 3 targets) is one
//! mistake: every compile of it gives the same message at the same place.
//! [`Reports`] folds the diagnostics of every artifact by what the user has
//! to fix — severity, file, line, column and message — and keeps, per
//! report, the artifacts it struck and the compilers that said it. The
//! first include chain seen stands for the report: the same line of an
//! include reached from two stage files is still one mistake.
//!
//! Failures that belong to no artifact (a program whose variants cannot be
//! listed, a catalog that cannot be written) are reports of their own,
//! named by what failed.
//!
//! How a report is shown is [`crate::render`]'s job; its JSON form is
//! [`Report::to_json`], whose schema docs/BUILD.md gives.

use crate::error::ArtifactError;
use std::collections::{BTreeMap, BTreeSet};
use xr_sourcebuild::{Diagnostic, Severity};

/// One (variant, target) of a program.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ArtifactId {
    /// The program.
    pub program: String,
    /// The variant's name (the program's name when it has no axes).
    pub variant: String,
    /// The target.
    pub target: String,
}

/// What a report's folding key is made of.
type Key = (Severity, String, u32, u32, String);

/// One distinct diagnostic and everything it struck.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Report {
    /// The diagnostic as first reported (its file is "" for a failure
    /// with no place); the first include chain seen stands for all.
    pub diagnostic: Diagnostic,
    /// The compiler plugins that reported it.
    pub compilers: BTreeSet<String>,
    /// The artifacts it struck, each once, sorted.
    pub artifacts: BTreeSet<ArtifactId>,
    /// What failed when it is no artifact's (`program 'x'`, `catalog of 'x'`).
    pub subject: Option<String>,
}

impl Report {
    /// How bad it is.
    pub fn severity(&self) -> Severity {
        self.diagnostic.severity
    }

    /// The one-line form: `file:line: error: message`, prefixed by what
    /// failed when it is no artifact's.
    pub fn headline(&self) -> String {
        match &self.subject {
            Some(subject) => format!("{subject}: {}", self.diagnostic),
            None => self.diagnostic.to_string(),
        }
    }

    /// Where it struck, compactly: `in 18 artifacts: unlit × 6 variants ×
    /// gl-glsl, gl-spirv, vk-spirv`; `in unlit[TINT=1] (vk-spirv)` for one.
    /// Empty when it struck no artifact.
    pub fn struck(&self) -> String {
        match self.artifacts.len() {
            0 => String::new(),
            1 => {
                let only = self.artifacts.first().expect("one artifact");
                format!("in {} ({})", only.variant, only.target)
            }
            n => {
                let mut programs: BTreeMap<&str, (BTreeSet<&str>, BTreeSet<&str>, usize)> = BTreeMap::new();
                for artifact in &self.artifacts {
                    let (variants, targets, count) = programs.entry(&artifact.program).or_default();
                    variants.insert(&artifact.variant);
                    targets.insert(&artifact.target);
                    *count += 1;
                }
                let parts: Vec<String> = programs
                    .iter()
                    .map(|(program, (variants, targets, count))| {
                        let variants_word = if variants.len() == 1 { "variant" } else { "variants" };
                        let targets: Vec<&str> = targets.iter().copied().collect();
                        let shape = format!("{} {variants_word} × {}", variants.len(), targets.join(", "));
                        if *count == variants.len() * targets.len() {
                            format!("{program} × {shape}")
                        } else {
                            format!("{program}: {count} of {shape}")
                        }
                    })
                    .collect();
                format!("in {n} artifacts: {}", parts.join("; "))
            }
        }
    }

    /// The JSON object of this report (`"type": "diagnostic"`), one line of
    /// `--message-format json`.
    pub fn to_json(&self) -> serde_json::Value {
        let d = &self.diagnostic;
        serde_json::json!({
            "type": "diagnostic",
            "severity": d.severity.name(),
            "file": d.file.as_str(),
            "line": d.line,
            "column": d.column,
            "message": d.message.as_str(),
            "subject": self.subject,
            "compilers": self.compilers,
            "artifacts": self.artifacts.iter().map(|a| serde_json::json!({
                "program": a.program, "variant": a.variant, "target": a.target,
            })).collect::<Vec<_>>(),
            "included_from": d.included_from.iter().map(|s| serde_json::json!({
                "file": s.file.as_str(), "line": s.line,
            })).collect::<Vec<_>>(),
        })
    }
}

/// Diagnostics folded into distinct reports as they come.
#[derive(Clone, Debug, Default)]
pub struct Reports {
    reports: Vec<Report>,
    index: BTreeMap<Key, usize>,
}

impl Reports {
    /// Adds `diagnostics` of `artifact` (none: of `subject`), said by `compiler` ("" when none).
    pub fn add(&mut self, artifact: Option<&ArtifactId>, compiler: &str, diagnostics: &[Diagnostic]) {
        for diagnostic in diagnostics {
            let key: Key = (
                diagnostic.severity,
                diagnostic.file.to_string(),
                diagnostic.line,
                diagnostic.column,
                diagnostic.message.to_string(),
            );
            let at = *self.index.entry(key).or_insert_with(|| {
                self.reports.push(Report {
                    diagnostic: diagnostic.clone(),
                    compilers: BTreeSet::new(),
                    artifacts: BTreeSet::new(),
                    subject: None,
                });
                self.reports.len() - 1
            });
            let report = &mut self.reports[at];
            if !compiler.is_empty() {
                report.compilers.insert(compiler.to_owned());
            }
            if let Some(artifact) = artifact {
                report.artifacts.insert(artifact.clone());
            }
        }
    }

    /// Adds why `artifact` (none: the command's one compile) failed, said
    /// by `compiler` ("" when none): the failure with no place first, when
    /// it has one, then the compiler's located diagnostics.
    pub fn add_error(&mut self, artifact: Option<&ArtifactId>, compiler: &str, error: &ArtifactError) {
        if let Some(message) = error.unplaced() {
            self.add(artifact, compiler, &[unplaced(&message)]);
        }
        self.add(artifact, compiler, error.diagnostics());
    }

    /// Adds a failure of `subject` that is no artifact's, with its message.
    pub fn add_failure(&mut self, subject: &str, message: &str) {
        self.reports.push(Report {
            diagnostic: unplaced(message),
            compilers: BTreeSet::new(),
            artifacts: BTreeSet::new(),
            subject: Some(subject.to_owned()),
        });
    }

    /// The reports of one failure with no place and no subject (a crashed
    /// command's).
    pub fn of_message(message: &str) -> Vec<Report> {
        let mut reports = Self::default();
        reports.add(None, "", &[unplaced(message)]);
        reports.into_sorted()
    }

    /// The reports: errors first, then warnings, each in the order first seen.
    pub fn into_sorted(self) -> Vec<Report> {
        let mut reports = self.reports;
        reports.sort_by_key(Report::severity);
        reports
    }

    /// How many distinct reports of `severity`.
    pub fn count(&self, severity: Severity) -> usize {
        self.reports.iter().filter(|r| r.severity() == severity).count()
    }
}

/// The failures of a build as its summary line counts them: `N failed`,
/// and `N failed (last good kept for M)` when `M` of them keep their last
/// good object in the catalog (marked stale).
pub fn failed_count(failed: usize, kept_last_good: usize) -> String {
    if kept_last_good == 0 {
        format!("{failed} failed")
    } else {
        format!("{failed} failed (last good kept for {kept_last_good})")
    }
}

/// A failure with no place as a report's diagnostic: what a person reads
/// as `error: message`, with no file.
fn unplaced(message: &str) -> Diagnostic {
    Diagnostic::error("", 0, message.trim_end())
}

#[cfg(test)]
mod tests {
    use super::*;
    use xr_sourcebuild::IncludeSite;

    fn artifact(variant: &str, target: &str) -> ArtifactId {
        ArtifactId { program: "unlit".into(), variant: variant.into(), target: target.into() }
    }

    #[test]
    fn one_report_per_distinct_diagnostic() {
        let mut reports = Reports::default();
        let typo = Diagnostic::error("unlit.frag", 10, "'x' : undeclared identifier");
        for variant in ["unlit[A=0]", "unlit[A=1]"] {
            for target in ["gl-glsl", "vk-spirv", "gl-spirv"] {
                reports.add(Some(&artifact(variant, target)), &format!("c-{target}"), std::slice::from_ref(&typo));
            }
        }
        let mut other_line = typo.clone();
        other_line.line = 11;
        reports.add(Some(&artifact("unlit[A=0]", "gl-glsl")), "c-gl-glsl", &[other_line]);
        let mut warning = typo.clone();
        warning.severity = Severity::Warning;
        reports.add(Some(&artifact("unlit[A=0]", "gl-glsl")), "c-gl-glsl", &[warning]);
        assert_eq!((reports.count(Severity::Error), reports.count(Severity::Warning)), (2, 1));
        let sorted = reports.into_sorted();
        assert_eq!(sorted[0].artifacts.len(), 6);
        assert_eq!(sorted[0].compilers.len(), 3);
        assert_eq!(sorted[0].struck(), "in 6 artifacts: unlit × 2 variants × gl-glsl, gl-spirv, vk-spirv");
        assert_eq!(sorted[1].struck(), "in unlit[A=0] (gl-glsl)");
        assert_eq!(sorted[0].headline(), "unlit.frag:10: error: 'x' : undeclared identifier");
        assert_eq!(sorted[2].severity(), Severity::Warning);
    }

    #[test]
    fn the_failed_count_says_how_many_keep_their_last_good_object() {
        assert_eq!(failed_count(0, 0), "0 failed");
        assert_eq!(failed_count(18, 0), "18 failed");
        assert_eq!(failed_count(108, 108), "108 failed (last good kept for 108)");
    }

    #[test]
    fn part_of_a_matrix_says_how_much() {
        let mut reports = Reports::default();
        let d = Diagnostic::error("a", 1, "m");
        for (variant, target) in [("v1", "t1"), ("v1", "t2"), ("v2", "t1")] {
            reports.add(Some(&artifact(variant, target)), "c", std::slice::from_ref(&d));
        }
        assert_eq!(reports.into_sorted()[0].struck(), "in 3 artifacts: unlit: 3 of 2 variants × t1, t2");
    }

    #[test]
    fn a_failure_without_a_place_folds_across_variants_before_the_located_ones() {
        let mut reports = Reports::default();
        let warning = Diagnostic::new(Severity::Warning, "a.frag", 2, 0, "unused");
        for variant in ["p[A=0]", "p[A=1]"] {
            let message = format!("program '{variant}': entry point 'main' not found");
            let error = ArtifactError::of_compile(&message, std::slice::from_ref(&warning), variant);
            reports.add_error(Some(&artifact(variant, "vk-spirv")), "c", &error);
        }
        let sorted = reports.into_sorted();
        assert_eq!(sorted.len(), 2, "{sorted:?}");
        assert_eq!(sorted[0].headline(), "error: entry point 'main' not found");
        assert_eq!(sorted[0].artifacts.len(), 2);
        assert_eq!(sorted[1].headline(), "a.frag:2: warning: unused");
    }

    #[test]
    fn json_names_everything() {
        let mut reports = Reports::default();
        let mut d = Diagnostic::error("inc/b.glsl", 2, "bad");
        d.column = 5;
        d.included_from = vec![IncludeSite { file: "main.frag".into(), line: 3 }].into();
        reports.add(Some(&artifact("unlit", "vk-spirv")), "xr-compiler-vk-spirv", &[d]);
        let json = reports.into_sorted()[0].to_json();
        assert_eq!(json["type"], "diagnostic");
        assert_eq!(json["severity"], "error");
        assert_eq!(
            (json["file"].as_str(), json["line"].as_u64(), json["column"].as_u64()),
            (Some("inc/b.glsl"), Some(2), Some(5))
        );
        assert_eq!(json["included_from"][0]["line"], 3);
        assert_eq!(json["artifacts"][0]["target"], "vk-spirv");
        assert_eq!(json["compilers"][0], "xr-compiler-vk-spirv");
    }
}
