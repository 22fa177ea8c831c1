//! Persistent workers on a farm: a tool that starts once per worker
//! machine and serves many actions, so that what it does once per process
//! (a compiler building its built-in symbol tables, opening its library)
//! is not paid per action.
//!
//! REAPI itself has no such notion; farms that offer it (BuildBuddy, and
//! `xr-bot`) follow Bazel's: an action asks for one with two platform
//! properties, [`KEY_PROPERTY`] (actions with the same key share workers:
//! the client derives it from the tool's files and start-up arguments) and
//! [`PROTOCOL_PROPERTY`]. Its arguments that are flag files (`@file`,
//! `--flagfile=file`) are the request's; the others start the worker,
//! with `--persistent_worker` added. The worker reads [`WorkRequest`]s on
//! its standard input and answers each with a [`WorkResponse`] on its
//! standard output, in Bazel's JSON worker protocol (one object per line).
//! Each request's inputs are staged in `sandboxDir`, relative to the
//! worker's directory, and its outputs are read from there.
//!
//! The same action still runs once per process on a farm that keeps no
//! workers: the tool reads its flag files itself.

use serde::{Deserialize, Serialize};
use std::path::Path;

/// The platform property whose value names the worker an action may run in.
pub const KEY_PROPERTY: &str = "persistentWorkerKey";
/// The platform property naming the worker protocol: [`JSON_PROTOCOL`].
pub const PROTOCOL_PROPERTY: &str = "persistentWorkerProtocol";
/// Bazel's JSON worker protocol, the one this crate speaks.
pub const JSON_PROTOCOL: &str = "json";
/// The argument that makes a tool a persistent worker.
pub const PERSISTENT_FLAG: &str = "--persistent_worker";

/// One action's request to a persistent worker (Bazel's `WorkRequest`, in
/// the proto3 JSON mapping: fields at their default are left out, and a
/// reader takes the fields' proto names too). Fields this crate does not
/// use (`inputs`, `verbosity`, `cancel`) are read and ignored.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct WorkRequest {
    /// The request's arguments: the action's flag-file arguments.
    pub arguments: Vec<String>,
    /// Which request a response answers (0 for a worker that takes one at a time).
    #[serde(skip_serializing_if = "is_zero", alias = "request_id")]
    pub request_id: i32,
    /// Where the request's inputs are, relative to the worker's directory.
    #[serde(skip_serializing_if = "String::is_empty", alias = "sandbox_dir")]
    pub sandbox_dir: String,
}

/// A worker's answer to one [`WorkRequest`] (Bazel's `WorkResponse`). A
/// field it does not have is refused, so that a line that is not a
/// response (or a misspelt exit code) is never taken for a success.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct WorkResponse {
    /// The action's exit code.
    #[serde(skip_serializing_if = "is_zero", alias = "exit_code")]
    pub exit_code: i32,
    /// What the action printed (the farm returns it as the action's stderr).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub output: String,
    /// The request it answers.
    #[serde(skip_serializing_if = "is_zero", alias = "request_id")]
    pub request_id: i32,
    /// Whether the request was cancelled (never asked here).
    #[serde(skip_serializing_if = "std::ops::Not::not", alias = "was_cancelled")]
    pub was_cancelled: bool,
}

fn is_zero(n: &i32) -> bool {
    *n == 0
}

/// Whether `argument` names a flag file, whose lines are a request's arguments.
pub fn is_flag_file(argument: &str) -> bool {
    argument.starts_with('@') || argument.starts_with("--flagfile=")
}

/// `arguments` split as a farm splits them: those that start the worker
/// (the program first), and the flag files that make the request.
pub fn split_arguments(arguments: &[String]) -> (Vec<String>, Vec<String>) {
    let (requests, startup): (Vec<String>, Vec<String>) = arguments.iter().cloned().partition(|a| is_flag_file(a));
    (startup, requests)
}

/// `arguments` with each flag file replaced by its lines, one argument
/// each, the file read relative to `base`.
pub fn expand_flag_files(arguments: &[String], base: &Path) -> std::io::Result<Vec<String>> {
    let mut expanded = Vec::new();
    for argument in arguments {
        let file = argument.strip_prefix('@').or_else(|| argument.strip_prefix("--flagfile="));
        match file {
            Some(file) => {
                let path = base.join(file);
                let text = std::fs::read_to_string(&path).map_err(|e| {
                    std::io::Error::new(e.kind(), format!("reading the flag file {}: {e}", path.display()))
                })?;
                expanded.extend(text.lines().filter(|l| !l.is_empty()).map(str::to_owned));
            }
            None => expanded.push(argument.clone()),
        }
    }
    Ok(expanded)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_and_responses_are_bazels_json_with_defaults_left_out() {
        let request = WorkRequest { arguments: vec!["@args".into()], request_id: 0, sandbox_dir: "sandbox/3".into() };
        let text = serde_json::to_string(&request).expect("serializes");
        assert_eq!(text, r#"{"arguments":["@args"],"sandboxDir":"sandbox/3"}"#);
        let parsed: WorkRequest =
            serde_json::from_str(r#"{"arguments":["@a"],"requestId":7,"inputs":[],"verbosity":0}"#).expect("parses");
        assert_eq!(parsed, WorkRequest { arguments: vec!["@a".into()], request_id: 7, sandbox_dir: String::new() });
        let response = WorkResponse { exit_code: 1, output: "bad".into(), ..WorkResponse::default() };
        assert_eq!(serde_json::to_string(&response).expect("serializes"), r#"{"exitCode":1,"output":"bad"}"#);
        assert_eq!(serde_json::from_str::<WorkResponse>("{}").expect("parses"), WorkResponse::default());
        // The proto field names are proto3 JSON too.
        let snake: WorkResponse = serde_json::from_str(r#"{"exit_code":2,"request_id":3}"#).expect("parses");
        assert_eq!((snake.exit_code, snake.request_id), (2, 3));
        // What is not a response is refused, not read as exit code 0.
        assert!(serde_json::from_str::<WorkResponse>(r#"{"exitcode":1}"#).is_err());
        assert!(serde_json::from_str::<WorkResponse>(r#"{"type":"summary"}"#).is_err());
    }

    #[test]
    fn flag_files_make_the_request_and_the_rest_start_the_worker() {
        let arguments: Vec<String> =
            ["tool/bin/t", "--plugin-dir", "tool/plugins", "@args", "--flagfile=more"].map(String::from).to_vec();
        let (startup, request) = split_arguments(&arguments);
        assert_eq!(startup, ["tool/bin/t", "--plugin-dir", "tool/plugins"]);
        assert_eq!(request, ["@args", "--flagfile=more"]);
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::write(dir.path().join("args"), "--job\njob\n\n--reply\nreply\n").expect("writes");
        std::fs::write(dir.path().join("more"), "-v\n").expect("writes");
        let expanded = expand_flag_files(&request, dir.path()).expect("expands");
        assert_eq!(expanded, ["--job", "job", "--reply", "reply", "-v"]);
        let missing = expand_flag_files(&["@absent".to_owned()], dir.path()).expect_err("no such file");
        assert!(missing.to_string().contains("absent"), "{missing}");
    }
}
