//! Slang's global session and compile requests, safely wrapped.
//!
//! A global session holds Slang's core module, compiled when it is created
//! (about 0.2 s, the expensive part of a first compile); a compile request
//! made from it costs little. A global session may not be used from two
//! threads at once, so each thread that compiles keeps its own, made on its
//! first compile: `xr build` compiles on a few threads (one per job), each
//! of which then pays the creation once, and no compile waits on another.
//! (docs/PLUGINS.md gives the measurement against one session behind a
//! lock.)

use crate::{ffi, library::Slang};
use std::{
    cell::Cell,
    ffi::{CStr, CString, c_char, c_int},
};

thread_local! {
    static SESSION: Cell<*mut ffi::Session> = const { Cell::new(std::ptr::null_mut()) };
}

/// A global session of this thread (see [`session`]).
#[derive(Clone, Copy)]
pub struct Session(*mut ffi::Session);

/// This thread's global session, made on first use. It lives as long as the
/// thread (Slang's teardown at process exit is not needed, and running it
/// from a thread-local destructor would race the library's own).
pub fn session(slang: &Slang) -> Result<Session, String> {
    SESSION.with(|cell| {
        if cell.get().is_null() {
            // SAFETY: a null argument is the documented default.
            let session = unsafe { (slang.api.spCreateSession)(std::ptr::null()) };
            if session.is_null() {
                return Err("the Slang library could not create a session".to_owned());
            }
            cell.set(session);
        }
        Ok(Session(cell.get()))
    })
}

/// A compile request, destroyed when dropped.
pub struct Request<'a> {
    slang: &'a Slang,
    raw: *mut ffi::Request,
    // C strings handed to Slang, kept alive for the request's life.
    keep: Vec<CString>,
}

/// A string for Slang: interior NULs (which no path or identifier has)
/// are dropped rather than refused.
fn c_string(text: &str) -> CString {
    CString::new(text.replace('\0', "")).unwrap_or_default()
}

impl<'a> Request<'a> {
    /// A new request of `session`.
    pub fn new(slang: &'a Slang, session: Session) -> Result<Self, String> {
        // SAFETY: `session` came from `spCreateSession` of this library.
        let raw = unsafe { (slang.api.spCreateCompileRequest)(session.0) };
        if raw.is_null() {
            return Err("the Slang library could not create a compile request".to_owned());
        }
        Ok(Self { slang, raw, keep: Vec::new() })
    }

    fn c(&mut self, text: &str) -> *const c_char {
        let s = c_string(text);
        let pointer = s.as_ptr();
        self.keep.push(s);
        pointer
    }

    /// Compiles to SPIR-V with the named profile (`spirv_1_0` …).
    pub fn target_spirv(&mut self, session: Session, profile: &str) -> Result<(), String> {
        let name = self.c(profile);
        // SAFETY: valid request and session; `name` outlives the call.
        let id = unsafe { (self.slang.api.spFindProfile)(session.0, name) };
        if id == 0 {
            return Err(format!("the Slang library does not know the profile {profile}"));
        }
        // SAFETY: valid request; target index 0 is the one just set.
        unsafe {
            (self.slang.api.spSetCodeGenTarget)(self.raw, ffi::TARGET_SPIRV);
            (self.slang.api.spSetTargetProfile)(self.raw, 0, id);
        }
        Ok(())
    }

    /// Matrix layout of every matrix without an explicit one.
    pub fn matrix_layout(&mut self, mode: u32) {
        // SAFETY: valid request.
        unsafe { (self.slang.api.spSetMatrixLayoutMode)(self.raw, mode) }
    }

    /// Optimisation level (`ffi::OPTIMIZATION_*`).
    pub fn optimization(&mut self, level: u32) {
        // SAFETY: valid request.
        unsafe { (self.slang.api.spSetOptimizationLevel)(self.raw, level) }
    }

    /// Options as `slangc` takes them (`-fvk-use-entrypoint-name`).
    pub fn arguments(&mut self, arguments: &[&str]) -> Result<(), String> {
        let pointers: Vec<*const c_char> = arguments.iter().map(|a| self.c(a)).collect();
        // SAFETY: `pointers` holds `arguments.len()` strings alive in `keep`.
        let result = unsafe {
            (self.slang.api.spProcessCommandLineArguments)(self.raw, pointers.as_ptr(), pointers.len() as c_int)
        };
        if result < 0 {
            return Err(format!(
                "the Slang library refused the options {}: {}",
                arguments.join(" "),
                self.diagnostics()
            ));
        }
        Ok(())
    }

    /// A directory searched for `import`ed modules and `#include`d files.
    pub fn search_path(&mut self, dir: &str) {
        let dir = self.c(dir);
        // SAFETY: valid request; `dir` lives in `keep`.
        unsafe { (self.slang.api.spAddSearchPath)(self.raw, dir) }
    }

    /// A translation unit of `source` in `language` (`ffi::SLANG_SOURCE_LANGUAGE_*`),
    /// read from `path`; its index.
    pub fn translation_unit(&mut self, path: &str, source: &str, language: c_int) -> c_int {
        let (path, source) = (self.c(path), self.c(source));
        // SAFETY: valid request; a null module name lets Slang name it.
        unsafe {
            let unit = (self.slang.api.spAddTranslationUnit)(self.raw, language, std::ptr::null());
            (self.slang.api.spAddTranslationUnitSourceString)(self.raw, unit, path, source);
            unit
        }
    }

    /// `#define name value` in translation unit `unit`.
    pub fn define(&mut self, unit: c_int, name: &str, value: &str) {
        let (name, value) = (self.c(name), self.c(value));
        // SAFETY: valid request and unit; both strings live in `keep`.
        unsafe { (self.slang.api.spTranslationUnit_addPreprocessorDefine)(self.raw, unit, name, value) }
    }

    /// Entry point `name` of unit `unit` for `stage` (`ffi::stage`); its index.
    pub fn entry_point(&mut self, unit: c_int, name: &str, stage: u32) -> c_int {
        let name = self.c(name);
        // SAFETY: valid request and unit; `name` lives in `keep`.
        unsafe { (self.slang.api.spAddEntryPoint)(self.raw, unit, name, stage) }
    }

    /// Compiles; false when Slang reported errors ([`Request::diagnostics`]).
    pub fn compile(&mut self) -> bool {
        // SAFETY: valid request.
        unsafe { (self.slang.api.spCompile)(self.raw) >= 0 }
    }

    /// Everything Slang said, errors and warnings.
    pub fn diagnostics(&self) -> String {
        // SAFETY: valid request; the text is owned by it.
        let text = unsafe { (self.slang.api.spGetDiagnosticOutput)(self.raw) };
        if text.is_null() {
            return String::new();
        }
        // SAFETY: a NUL-terminated string owned by the request.
        unsafe { CStr::from_ptr(text) }.to_string_lossy().into_owned()
    }

    /// The files the compile read (the units' own and every import and include).
    pub fn dependencies(&self) -> Vec<String> {
        // SAFETY: valid request after a compile.
        let count = unsafe { (self.slang.api.spGetDependencyFileCount)(self.raw) };
        (0..count)
            .filter_map(|i| {
                // SAFETY: `i` is below the count; the path is owned by the request.
                let path = unsafe { (self.slang.api.spGetDependencyFilePath)(self.raw, i) };
                // SAFETY: a NUL-terminated string owned by the request.
                (!path.is_null()).then(|| unsafe { CStr::from_ptr(path) }.to_string_lossy().into_owned())
            })
            .collect()
    }

    /// The SPIR-V words of entry point `index`, after a successful compile.
    pub fn code(&self, index: c_int) -> Option<Vec<u32>> {
        let mut size = 0usize;
        // SAFETY: valid request after a compile; `size` receives the length.
        let data = unsafe { (self.slang.api.spGetEntryPointCode)(self.raw, index, &mut size) };
        if data.is_null() || size == 0 || !size.is_multiple_of(4) {
            return None;
        }
        // SAFETY: `size` bytes at `data`, owned by the request, which
        // outlives this copy. SPIR-V words are little-endian on this host.
        let bytes = unsafe { std::slice::from_raw_parts(data.cast::<u8>(), size) };
        Some(bytes.chunks_exact(4).map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]])).collect())
    }

    /// The entry points the compiled units declare (`[shader("…")]`), with
    /// their Slang stages.
    pub fn declared_entry_points(&self) -> Vec<(String, u32)> {
        // SAFETY: valid request after a compile; the reflection is owned by it.
        let reflection = unsafe { (self.slang.api.spGetReflection)(self.raw) };
        if reflection.is_null() {
            return Vec::new();
        }
        // SAFETY: a reflection of this request.
        let count = unsafe { (self.slang.api.spReflection_getEntryPointCount)(reflection) };
        (0..count)
            .filter_map(|i| {
                // SAFETY: `i` is below the count.
                let entry = unsafe { (self.slang.api.spReflection_getEntryPointByIndex)(reflection, i) };
                if entry.is_null() {
                    return None;
                }
                // SAFETY: an entry point of this request's reflection.
                let (name, stage) = unsafe {
                    (
                        (self.slang.api.spReflectionEntryPoint_getName)(entry),
                        (self.slang.api.spReflectionEntryPoint_getStage)(entry),
                    )
                };
                // SAFETY: a NUL-terminated string owned by the request.
                (!name.is_null()).then(|| (unsafe { CStr::from_ptr(name) }.to_string_lossy().into_owned(), stage))
            })
            .collect()
    }
}

impl Drop for Request<'_> {
    fn drop(&mut self) {
        // SAFETY: made by spCreateCompileRequest, destroyed once.
        unsafe { (self.slang.api.spDestroyCompileRequest)(self.raw) }
    }
}
