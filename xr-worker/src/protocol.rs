//! The worker protocol: what goes over the pipes between `xr build` and
//! a compiler worker.
//!
//! One request, one reply, in order, on the worker's stdin and a copy of
//! its stdout taken before any plugin could print (the worker points its
//! own stdout at stderr, see [`crate::serve::take_protocol_stdout`]). Each
//! message is a frame: its length as a little-endian `u32`, then that many
//! bytes of [postcard](https://docs.rs/postcard) (serde's compact binary
//! form) of a [`Job`] or a [`Reply`]. A job is self-contained — the
//! program's sources, defines, include directories, the target, the
//! options and the name of the build system to run — so the same unit of
//! work could go to a worker on another machine; the files a compile
//! includes are read by the worker, and the reply says which it read, with
//! their hashes.
//!
//! Versioning: both ends are the same `xr` executable (the build starts its
//! workers from its own path), so the protocol has no negotiation; a frame
//! that does not decode ends the worker's conversation as a crash would.

use crate::wire::{
    WireDiagnostic, WireError, WireFileRead, WireRequest, diagnostics_from_wire, diagnostics_to_wire, files_to_wire,
};
use serde::{Deserialize, Serialize, de::DeserializeOwned};
use std::io::{self, Read, Write};
use xr_sourcebuild::{Diagnostic, FileRead, OfflineRequest};

/// Frames larger than this are refused instead of allocated: a corrupt
/// length must not make either side try to allocate gigabytes.
pub const MAX_FRAME: u32 = 1 << 30;

/// One compile for a worker.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Job {
    /// The build system to run, by the name its plugin gives it.
    pub compiler: String,
    /// What to compile.
    pub request: WireRequest,
    /// Compile in full (`compile_offline`): the stage outputs and the
    /// reflection too, for a guarded source or bindings; else for the store
    /// (`compile_for_store`), which may leave them out.
    pub whole: bool,
}

impl Job {
    /// A job for `compiler`, for the store.
    pub fn new(compiler: &str, request: &OfflineRequest) -> Self {
        Self { compiler: compiler.to_owned(), request: request.into(), whole: false }
    }

    /// A job for `compiler`, in full.
    pub fn whole(compiler: &str, request: &OfflineRequest) -> Self {
        Self { whole: true, ..Self::new(compiler, request) }
    }
}

/// A worker's answer to one [`Job`].
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum Reply {
    /// The compile succeeded: the artifact, the files read, the warnings.
    Compiled {
        /// The artifact's bytes.
        bytes: Vec<u8>,
        /// Every file the compile read, with the hash of its contents.
        files_read: Vec<WireFileRead>,
        /// The compiler's warnings.
        warnings: Vec<WireDiagnostic>,
        /// Each stage's output (a whole job's; else empty).
        stage_outputs: Vec<Vec<u8>>,
        /// The reflection's JSON (a whole job's; else empty).
        reflection: String,
    },
    /// The compiler refused the program (or the worker has no such compiler).
    Failed {
        /// One line.
        message: String,
        /// The compiler's diagnostics.
        diagnostics: Vec<WireDiagnostic>,
    },
}

impl Reply {
    /// The reply that carries `result`.
    pub fn of(result: Result<Compiled, CompileFailure>) -> Self {
        match result {
            Ok(c) => Reply::Compiled {
                bytes: c.bytes,
                files_read: files_to_wire(&c.files_read),
                warnings: diagnostics_to_wire(&c.warnings),
                stage_outputs: c.stage_outputs,
                reflection: c.reflection,
            },
            Err(f) => Reply::Failed { message: f.message, diagnostics: diagnostics_to_wire(&f.diagnostics) },
        }
    }

    /// The result this reply carries.
    pub fn into_result(self) -> Result<Compiled, CompileFailure> {
        match self {
            Reply::Compiled { bytes, files_read, warnings, stage_outputs, reflection } => Ok(Compiled {
                bytes,
                files_read: files_read
                    .into_iter()
                    .map(|(path, hash)| FileRead { path: path.into(), hash: hash.into() })
                    .collect(),
                warnings: diagnostics_from_wire(warnings),
                stage_outputs,
                reflection,
            }),
            Reply::Failed { message, diagnostics } => {
                Err(CompileFailure { message, diagnostics: diagnostics_from_wire(diagnostics) })
            }
        }
    }
}

/// A compile's result: what the build stores and journals.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Compiled {
    /// The artifact's bytes.
    pub bytes: Vec<u8>,
    /// Every file the compile read, with the hash of its contents.
    pub files_read: Vec<FileRead>,
    /// The compiler's warnings.
    pub warnings: Vec<Diagnostic>,
    /// Each stage's output, in the program's order: a whole compile's
    /// (a preprocessor's text); empty for the store.
    pub stage_outputs: Vec<Vec<u8>>,
    /// The reflection's JSON: a whole compile's; empty for the store.
    pub reflection: String,
}

/// Why a compile produced nothing: the compiler's error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompileFailure {
    /// One line.
    pub message: String,
    /// The compiler's diagnostics, when it gave any.
    pub diagnostics: Vec<Diagnostic>,
}

impl CompileFailure {
    /// A failure with a message and no diagnostics.
    pub fn message(message: impl Into<String>) -> Self {
        Self { message: message.into(), diagnostics: Vec::new() }
    }
}

/// Why a frame could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    /// The pipe failed or closed in the middle of a frame.
    #[error("worker pipe: {0}")]
    Io(#[from] io::Error),
    /// The bytes are not a message of this protocol.
    #[error("worker pipe: undecodable frame: {0}")]
    Decode(#[from] postcard::Error),
    /// The message decoded but is not a valid request.
    #[error(transparent)]
    Invalid(#[from] WireError),
    /// A length beyond [`MAX_FRAME`].
    #[error("worker pipe: a frame of {0} bytes is larger than the protocol allows")]
    TooLarge(u64),
}

/// Writes `message` as one frame and flushes it.
pub fn write_frame<T: Serialize>(output: &mut impl Write, message: &T) -> Result<(), FrameError> {
    let bytes = postcard::to_stdvec(message)?;
    let length =
        u32::try_from(bytes.len()).ok().filter(|&n| n <= MAX_FRAME).ok_or(FrameError::TooLarge(bytes.len() as u64))?;
    output.write_all(&length.to_le_bytes())?;
    output.write_all(&bytes)?;
    output.flush()?;
    Ok(())
}

/// Reads one frame; `None` when the pipe closed between frames (the other
/// side ended cleanly).
pub fn read_frame<T: DeserializeOwned>(input: &mut impl Read) -> Result<Option<T>, FrameError> {
    let mut length = [0u8; 4];
    match input.read_exact(&mut length) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(e.into()),
    }
    let length = u32::from_le_bytes(length);
    if length > MAX_FRAME {
        return Err(FrameError::TooLarge(length.into()));
    }
    let mut bytes = vec![0u8; length as usize];
    input.read_exact(&mut bytes)?;
    Ok(Some(postcard::from_bytes(&bytes)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use xr_sourcebuild::{IncludeSite, ProgramDesc, Severity, ShaderStage, SourceDesc};

    fn request() -> OfflineRequest {
        let stage = SourceDesc::new("glsl", ShaderStage::Fragment, "/s/unlit.frag", "void main() {}")
            .with_include_dir("/s/include");
        OfflineRequest::new(ProgramDesc::new("unlit[TINT=1]", [stage]), "vk-spirv").with_option("profile", "ps_6_0")
    }

    #[test]
    fn jobs_and_replies_cross_the_pipe_unchanged() {
        let mut pipe = Vec::new();
        write_frame(&mut pipe, &Job::whole("xr-vk-spirv", &request())).unwrap();
        let mut warning = Diagnostic::new(Severity::Warning, "/s/unlit.frag", 3, 7, "unused");
        warning.included_from.push(IncludeSite { file: "/s/a.frag".into(), line: 2 });
        let compiled = Compiled {
            bytes: vec![3, 2, 0x23, 7],
            files_read: vec![FileRead::of_text("/s/unlit.frag", b"void main() {}")],
            warnings: vec![warning.clone()],
            stage_outputs: vec![b"#version 450".to_vec()],
            reflection: "{}".into(),
        };
        write_frame(&mut pipe, &Reply::of(Ok(compiled.clone()))).unwrap();
        let failure = CompileFailure { message: "unlit.frag:3: error".into(), diagnostics: vec![warning] };
        write_frame(&mut pipe, &Reply::of(Err(failure.clone()))).unwrap();
        let mut reader = pipe.as_slice();
        let job: Job = read_frame(&mut reader).unwrap().unwrap();
        assert_eq!(OfflineRequest::try_from(job.request).unwrap(), request());
        assert_eq!((job.compiler.as_str(), job.whole), ("xr-vk-spirv", true));
        assert_eq!(read_frame::<Reply>(&mut reader).unwrap().unwrap().into_result(), Ok(compiled));
        assert_eq!(read_frame::<Reply>(&mut reader).unwrap().unwrap().into_result(), Err(failure));
        assert!(read_frame::<Reply>(&mut reader).unwrap().is_none(), "a clean end between frames");
    }

    #[test]
    fn a_torn_or_oversized_frame_is_an_error_not_an_allocation() {
        let mut pipe = Vec::new();
        write_frame(&mut pipe, &Job::new("c", &request())).unwrap();
        pipe.truncate(pipe.len() - 3);
        assert!(matches!(read_frame::<Job>(&mut pipe.as_slice()), Err(FrameError::Io(_))));
        let huge = (MAX_FRAME + 1).to_le_bytes();
        assert!(matches!(read_frame::<Job>(&mut huge.as_slice()), Err(FrameError::TooLarge(_))));
        let garbage = [4u8, 0, 0, 0, 0xff, 0xff, 0xff, 0xff];
        assert!(matches!(read_frame::<Job>(&mut garbage.as_slice()), Err(FrameError::Decode(_))));
    }
}
