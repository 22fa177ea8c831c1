//! A program's compiler options, checked against the compilers its plan
//! chose: what each target's compile takes.

use crate::manifest::{Place, Program, ProgramOption};
use crate::suggest;
use xr_host::Candidate;

/// The program's options as each target's compile takes them: a target's
/// own options must be declared by its compiler; a program-wide option goes
/// to the targets whose compilers declare it (an optimisation level means
/// nothing to a compiler that runs on the device) and must be declared by
/// at least one. Every value is checked against the declarations that take
/// it. A value equal to the compiler's declared default is left out, so
/// that spelling out a default keeps the keys of leaving it out. Every
/// option refused is an error at its value. `languages` are the program's
/// stages' (one per stage); `chosen` the compiler of a (language, target).
pub(super) fn resolve_options<'c>(
    program: &Program,
    languages: &[&str],
    chosen: &dyn Fn(&str, &str) -> Option<&'c Candidate>,
) -> Result<Vec<ProgramOption>, Vec<(Place, String)>> {
    let (mut resolved, mut errors) = (Vec::new(), Vec::new());
    for option in &program.options {
        let targets: Vec<&str> = match &option.target {
            Some(target) => vec![target.as_str()],
            None => program.targets.iter().map(|t| t.name.as_str()).collect(),
        };
        // The compilers that were asked and do not know the option, each once.
        let mut refusals: Vec<(&Candidate, xr_host::OptionError)> = Vec::new();
        let (mut taken, mut bad_value) = (false, None);
        for target in targets {
            let compilers: Vec<&Candidate> = languages.iter().filter_map(|language| chosen(language, target)).collect();
            let checks: Vec<(&Candidate, Result<(), xr_host::OptionError>)> = compilers
                .iter()
                .map(|c| (*c, xr_host::check_option(&c.name, &c.pair, &option.name, &option.value)))
                .collect();
            // A value a compiler refuses is wrong wherever the option goes.
            if let Some((compiler, Err(bad))) =
                checks.iter().find(|(_, c)| matches!(c, Err(xr_host::OptionError::BadValue { .. })))
            {
                bad_value = Some((*compiler, bad.clone()));
                break;
            }
            let mut unknown = checks.into_iter().filter_map(|(c, check)| check.err().map(|e| (c, e))).peekable();
            if unknown.peek().is_some() {
                for (compiler, error) in unknown {
                    if !refusals.iter().any(|(c, _)| c.name == compiler.name && c.pair == compiler.pair) {
                        refusals.push((compiler, error));
                    }
                }
            } else if !compilers.is_empty() {
                taken = true;
                let is_default =
                    compilers.iter().all(|c| c.pair.option(&option.name).is_some_and(|d| d.default == option.value));
                if !is_default {
                    resolved.push(ProgramOption { target: Some(target.to_owned()), ..option.clone() });
                }
            }
        }
        if let Some((candidate, error)) = bad_value {
            let values = candidate.pair.option(&option.name).map(|d| d.values.to_vec()).unwrap_or_default();
            let exact = values.iter().map(|v| v.pattern.as_str()).filter(|p| !p.contains('*'));
            errors.push((option.place.clone(), format!("{error}{}", suggest::did_you_mean(&option.value, exact))));
            continue;
        }
        // A target's own option must be taken there; a program-wide one somewhere.
        if refusals.is_empty() || (option.target.is_none() && taken) {
            continue;
        }
        let declared: Vec<&str> =
            refusals.iter().flat_map(|(c, _)| c.pair.options.iter().map(|o| o.name.as_str())).collect();
        let hint = suggest::did_you_mean(&option.name, declared);
        let message = match refusals.as_slice() {
            [(_, only)] => format!("{only}{hint}"),
            // Each compiler asked, with what it takes.
            several => format!(
                "no compiler of program '{}' takes option '{}' ({}){hint}",
                program.name,
                option.name,
                several
                    .iter()
                    .map(|(c, _)| {
                        let takes: Vec<String> = c.pair.options.iter().map(|o| o.usage()).collect();
                        let takes = if takes.is_empty() { "none".to_owned() } else { takes.join(", ") };
                        format!("{} for {} → {} takes {takes}", c.name, c.pair.language, c.pair.target)
                    })
                    .collect::<Vec<_>>()
                    .join("; "),
            ),
        };
        errors.push((option.place.clone(), message));
    }
    if errors.is_empty() { Ok(resolved) } else { Err(errors) }
}
