//! The functions of the Slang library this plugin calls, declared here
//! from `slang.h` (Slang 2026.12) and looked up by name when the library is
//! opened: the plugin links nothing of Slang, so it builds without it and
//! loads without it.
//!
//! These are Slang's C entry points (`sp…`), not its COM interfaces: plain
//! functions over opaque handles, stable across the releases that keep them.

use std::ffi::{c_char, c_int, c_uint, c_void};

/// `SlangSession*`: the global session (the core module, compiled once).
pub type Session = c_void;
/// `SlangCompileRequest*`.
pub type Request = c_void;
/// `SlangReflection*`.
pub type Reflection = c_void;
/// `SlangReflectionEntryPoint*`.
pub type ReflectionEntryPoint = c_void;

/// `SLANG_SPIRV` (`SlangCompileTarget`).
pub const TARGET_SPIRV: c_int = 6;
/// `SLANG_SOURCE_LANGUAGE_SLANG` (`SlangSourceLanguage`): the Slang API's
/// number for Slang source, not SPIR-V's `SourceLanguage::Slang` (11).
pub const SLANG_SOURCE_LANGUAGE_SLANG: c_int = 1;
/// `SLANG_SOURCE_LANGUAGE_HLSL`.
pub const SLANG_SOURCE_LANGUAGE_HLSL: c_int = 2;
/// `SLANG_MATRIX_LAYOUT_ROW_MAJOR`.
pub const MATRIX_LAYOUT_ROW_MAJOR: c_uint = 1;
/// `SLANG_MATRIX_LAYOUT_COLUMN_MAJOR`.
pub const MATRIX_LAYOUT_COLUMN_MAJOR: c_uint = 2;
/// `SLANG_OPTIMIZATION_LEVEL_NONE`, `_DEFAULT`, `_HIGH`.
pub const OPTIMIZATION_NONE: u32 = 0;
/// See [`OPTIMIZATION_NONE`].
pub const OPTIMIZATION_DEFAULT: u32 = 1;
/// See [`OPTIMIZATION_NONE`].
pub const OPTIMIZATION_HIGH: u32 = 2;

/// `SlangStage` values of the stages XR builds.
pub mod stage {
    /// `SLANG_STAGE_VERTEX`.
    pub const VERTEX: u32 = 1;
    /// `SLANG_STAGE_HULL` (tessellation control).
    pub const HULL: u32 = 2;
    /// `SLANG_STAGE_DOMAIN` (tessellation evaluation).
    pub const DOMAIN: u32 = 3;
    /// `SLANG_STAGE_GEOMETRY`.
    pub const GEOMETRY: u32 = 4;
    /// `SLANG_STAGE_FRAGMENT`.
    pub const FRAGMENT: u32 = 5;
    /// `SLANG_STAGE_COMPUTE`.
    pub const COMPUTE: u32 = 6;

    /// `SLANG_STAGE_RAY_GENERATION`.
    pub const RAY_GENERATION: u32 = 7;
    /// `SLANG_STAGE_INTERSECTION`.
    pub const INTERSECTION: u32 = 8;
    /// `SLANG_STAGE_ANY_HIT`.
    pub const ANY_HIT: u32 = 9;
    /// `SLANG_STAGE_CLOSEST_HIT`.
    pub const CLOSEST_HIT: u32 = 10;
    /// `SLANG_STAGE_MISS`.
    pub const MISS: u32 = 11;
    /// `SLANG_STAGE_CALLABLE`.
    pub const CALLABLE: u32 = 12;
    /// `SLANG_STAGE_MESH`.
    pub const MESH: u32 = 13;
    /// `SLANG_STAGE_AMPLIFICATION` (task).
    pub const AMPLIFICATION: u32 = 14;
}

/// Declares [`Api`]: one function pointer per symbol, looked up by its name.
macro_rules! api {
    ($($name:ident: fn($($arg:ty),*) $(-> $ret:ty)?;)*) => {
        /// The Slang library's functions, looked up when it is opened.
        #[allow(non_snake_case, missing_docs)]
        pub struct Api {
            $(pub $name: unsafe extern "C" fn($($arg),*) $(-> $ret)?,)*
        }

        impl Api {
            /// Looks every function up in `library`; the error names the
            /// first missing.
            ///
            /// # Safety
            /// `library` must be Slang 2026.12 (or one with the same
            /// signatures for these names): the types are taken on trust.
            pub unsafe fn load(library: &libloading::Library) -> Result<Self, String> {
                Ok(Self {
                    // SAFETY: the caller vouches for the signatures.
                    $($name: unsafe {
                        *library
                            .get::<unsafe extern "C" fn($($arg),*) $(-> $ret)?>(concat!(stringify!($name), "\0").as_bytes())
                            .map_err(|_| stringify!($name).to_owned())?
                    },)*
                })
            }
        }
    };
}

api! {
    spCreateSession: fn(*const c_char) -> *mut Session;
    spDestroySession: fn(*mut Session);
    spFindProfile: fn(*mut Session, *const c_char) -> c_uint;
    spCreateCompileRequest: fn(*mut Session) -> *mut Request;
    spDestroyCompileRequest: fn(*mut Request);
    spSetCodeGenTarget: fn(*mut Request, c_int);
    spSetTargetProfile: fn(*mut Request, c_int, c_uint);
    spSetMatrixLayoutMode: fn(*mut Request, c_uint);
    spSetOptimizationLevel: fn(*mut Request, u32);
    spProcessCommandLineArguments: fn(*mut Request, *const *const c_char, c_int) -> i32;
    spAddSearchPath: fn(*mut Request, *const c_char);
    spAddTranslationUnit: fn(*mut Request, c_int, *const c_char) -> c_int;
    spTranslationUnit_addPreprocessorDefine: fn(*mut Request, c_int, *const c_char, *const c_char);
    spAddTranslationUnitSourceString: fn(*mut Request, c_int, *const c_char, *const c_char);
    spAddEntryPoint: fn(*mut Request, c_int, *const c_char, u32) -> c_int;
    spCompile: fn(*mut Request) -> i32;
    spGetDiagnosticOutput: fn(*mut Request) -> *const c_char;
    spGetDependencyFileCount: fn(*mut Request) -> c_int;
    spGetDependencyFilePath: fn(*mut Request, c_int) -> *const c_char;
    spGetEntryPointCode: fn(*mut Request, c_int, *mut usize) -> *const c_void;
    spGetReflection: fn(*mut Request) -> *mut Reflection;
    spReflection_getEntryPointCount: fn(*mut Reflection) -> u64;
    spReflection_getEntryPointByIndex: fn(*mut Reflection, u64) -> *mut ReflectionEntryPoint;
    spReflectionEntryPoint_getName: fn(*mut ReflectionEntryPoint) -> *const c_char;
    spReflectionEntryPoint_getStage: fn(*mut ReflectionEntryPoint) -> u32;
}

/// `spGetBuildTagString`'s type: looked up alone first, to check the
/// version before anything else is trusted.
pub type BuildTagFn = unsafe extern "C" fn() -> *const c_char;
