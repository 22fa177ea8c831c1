//! `xr-bench constant-setters`: what setting one constant by its handle
//! costs against the raw call an engine would make instead, side by side
//! on the same device, alternating rounds:
//!
//! - OpenGL: `ConstantTable::set_vector` on a `vec4` uniform of a program
//!   built by each GL build system, against `glProgramUniform4fv` on a
//!   program the benchmark links itself from the same source; the same for
//!   an array of 16 `vec4` (`set_vec4_array`), a `mat4` (`set_matrix4`),
//!   and the three at once (`set_values`, one call across the ABI) against
//!   the three raw calls; then the same through setters resolved once per
//!   handle (`ConstantTableBox::setter`).
//! - Vulkan: `set_vector` on a `vec4` push constant of a vk-spirv program,
//!   against `vkCmdPushConstants` of the same 16 bytes into a recording
//!   command buffer, and against copying them into a byte array (what an
//!   engine does before its one `vkCmdPushConstants` per draw, which is
//!   also when XR pushes the table's bytes).
//!
//! `--only KIND` runs one side of one OpenGL comparison alone, `--sets`
//! times in one loop ([`measured`]), for counting its instructions with
//! callgrind (`scripts/bench-setters-callgrind.sh`): a set's cost in
//! instructions does not move with the load of a shared machine.

use anyhow::{Context, bail};
use ash::vk::{self, Handle};
use glow::HasContext;
use std::{ffi::CString, hint::black_box, time::Instant};
use xr_device::{DeviceBox, DeviceCapabilities, DeviceKind, DeviceOptions, NativeHandles};
use xr_host::Registry;
use xr_sourcebuild::{
    AttachedBuildSystemBox, BuildOptions, BuiltProgram, ConstantHandle, ConstantSet, ConstantTableExt, ConstantType,
    ConstantValue, ProgramDesc, ScalarKind, ShaderStage, SourceDesc, typed,
};

/// Arguments of `xr-bench constant-setters`.
#[derive(clap::Args)]
pub struct Args {
    /// Sets per round: short rounds, so that a burst of load from
    /// elsewhere on the machine spoils a few rounds of each side rather
    /// than whole comparisons.
    #[arg(long, default_value_t = 40_000, value_parser = clap::value_parser!(u64).range(1..))]
    sets: u64,
    /// Rounds of each side (alternating); the median round is reported.
    #[arg(long, default_value_t = 51, value_parser = clap::value_parser!(u64).range(1..))]
    rounds: u64,
    /// Runs only this side of one OpenGL comparison, `--sets` times in one
    /// loop (no rounds), on the programs of `--system`.
    #[arg(long, value_enum)]
    only: Option<Only>,
    /// The GL build system `--only` uses.
    #[arg(long, default_value = "xr-compiler-glsl", requires = "only")]
    system: String,
}

/// One side of one OpenGL comparison: the raw call, a set through the
/// table, through a resolved setter, through a typed setter, or through a
/// generated binding's handle (`xr_sourcebuild::typed`); of the
/// `vec4`, the 16 `vec4` or the `mat4`.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
enum Only {
    RawVector,
    TableVector,
    ResolvedVector,
    TypedVector,
    RawArray,
    TableArray,
    ResolvedArray,
    TypedArray,
    RawMatrix,
    TableMatrix,
    ResolvedMatrix,
    TypedMatrix,
    GeneratedVector,
    GeneratedArray,
    GeneratedMatrix,
}

const VERTEX: &str = "#version 450
layout(location = 0) in vec2 p;
void main() { gl_Position = vec4(p, 0.0, 1.0); }
";
const GL_FRAGMENT: &str = "#version 450
layout(location = 0) uniform vec4 u_color;
layout(location = 1) uniform vec4 u_array[16];
layout(location = 17) uniform mat4 u_matrix;
layout(location = 0) out vec4 color;
void main() {
    vec4 sum = vec4(0.0);
    for (int i = 0; i < 16; i++) { sum += u_array[i]; }
    color = u_color + u_matrix * sum;
}
";
const VK_FRAGMENT: &str = "#version 450
layout(push_constant) uniform Push { vec4 u_color; } push;
layout(location = 0) out vec4 color;
void main() { color = push.u_color; }
";

/// Runs every comparison and prints a table.
pub fn run(args: Args) -> anyhow::Result<()> {
    let registry = Registry::discover();
    if let Some(only) = args.only {
        return run_only(&registry, &args, only);
    }
    let mut rows = Vec::new();
    rows.extend(opengl(&registry, &args)?);
    rows.extend(vulkan(&registry, &args)?);
    println!(
        "\n## Constant table setters vs the raw call ({} sets a round, median of {} rounds)\n",
        args.sets, args.rounds
    );
    println!("| device | XR setter | ns per set | raw call | ns per set | XR / raw |");
    println!("|---|---|---:|---|---:|---:|");
    for row in rows {
        println!(
            "| {} | {} | {:.1} | {} | {:.1} | {:.2}x |",
            row.device, row.ours, row.ours_ns, row.raw, row.raw_ns, row.ratio
        );
    }
    Ok(())
}

struct Row {
    device: String,
    ours: String,
    ours_ns: f64,
    raw: &'static str,
    raw_ns: f64,
    /// The median of the side-by-side rounds' ratios.
    ratio: f64,
}

/// Median nanoseconds per call of `ours` and `raw`, measured in alternating
/// rounds so that both see the same machine, and the median ratio of
/// rounds run side by side.
fn compare(args: &Args, mut ours: impl FnMut(usize), mut raw: impl FnMut(usize)) -> Comparison {
    let time = |f: &mut dyn FnMut(usize)| {
        let started = Instant::now();
        for i in 0..args.sets as usize {
            f(i);
        }
        started.elapsed().as_nanos() as f64 / args.sets as f64
    };
    // One warm-up round each.
    time(&mut ours);
    time(&mut raw);
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for _ in 0..args.rounds {
        a.push(time(&mut ours));
        b.push(time(&mut raw));
    }
    // Each round of ours against the round of raw next to it in time, so
    // that a slow stretch of the machine weighs on both sides of a ratio.
    let mut ratios: Vec<f64> = a.iter().zip(&b).map(|(ours, raw)| ours / raw).collect();
    Comparison { ours_ns: median(&mut a), raw_ns: median(&mut b), ratio: median(&mut ratios) }
}

/// The raw calls a set of the vector, of the array, of the matrix and of
/// all three is measured against ([`each_then_all`]).
const RAW_CALLS: [&str; 4] =
    ["glProgramUniform4fv", "glProgramUniform4fv, count 16", "glProgramUniformMatrix4fv", "the 3 calls"];

/// Sets of the vector, the array and the matrix with `ours`, each against
/// its raw call in `raw`, then of all three at once against `raw`'s fourth:
/// the comparisons in that order, the order of [`RAW_CALLS`].
fn each_then_all(
    args: &Args,
    ours: (impl Fn(usize), impl Fn(usize), impl Fn(usize)),
    raw: (impl Fn(usize), impl Fn(usize), impl Fn(usize), impl Fn(usize)),
) -> [Comparison; 4] {
    let (vector, array, matrix) = &ours;
    [
        compare(args, vector, &raw.0),
        compare(args, array, &raw.1),
        compare(args, matrix, &raw.2),
        compare(
            args,
            |i| {
                vector(i);
                array(i);
                matrix(i);
            },
            &raw.3,
        ),
    ]
}

/// Median nanoseconds per call of each side, and the median of the
/// ratios of rounds run side by side.
struct Comparison {
    ours_ns: f64,
    raw_ns: f64,
    ratio: f64,
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// How many different values each comparison cycles through. They are
/// made before timing, so that both sides of a comparison only read them
/// (computed per set, the two sides' code computed them at different costs).
const VALUES: usize = 256;

static COLORS: [[f32; 4]; VALUES + 16] = {
    let mut colors = [[0.0; 4]; VALUES + 16];
    let mut i = 0;
    while i < colors.len() {
        let x = (i % VALUES) as f32 / 255.0;
        colors[i] = [x, 1.0 - x, 0.5, 1.0];
        i += 1;
    }
    colors
};

static MATRICES: [[f32; 16]; VALUES] = {
    let mut matrices = [[0.0; 16]; VALUES];
    let mut i = 0;
    while i < VALUES {
        let mut k = 0;
        while k < 16 {
            matrices[i][k] = ((i + k) % 17) as f32 / 16.0;
            k += 1;
        }
        i += 1;
    }
    matrices
};

/// 16 vec4 that change with `i`.
fn colors(i: usize) -> &'static [[f32; 4]] {
    &COLORS[i % VALUES..i % VALUES + 16]
}

/// A mat4 that changes with `i`.
fn matrix4(i: usize) -> &'static [f32; 16] {
    &MATRICES[i % VALUES]
}

/// A vec4 that changes with `i`.
fn color(i: usize) -> &'static [f32; 4] {
    &COLORS[i % VALUES]
}

/// A device with the build system `system` attached and the benchmark's
/// program built (the device and build system live as long as it).
struct Setup {
    _device: DeviceBox,
    capabilities: DeviceCapabilities,
    handles: NativeHandles,
    _compiler: AttachedBuildSystemBox,
    built: BuiltProgram,
}

impl Setup {
    fn open(registry: &Registry, kind: DeviceKind, system: &str, fragment: &str) -> anyhow::Result<Self> {
        let device = registry.open_device(kind, &DeviceOptions::default())?;
        let capabilities = device.capabilities().into_result()?;
        let handles = device.native_handles().into_result()?;
        let mut compiler = registry
            .build_system_named(system)
            .with_context(|| format!("{system} is not loaded"))?
            .attach(&handles, &capabilities)
            .into_result()?;
        let desc = ProgramDesc::new(
            "setters",
            [
                SourceDesc::new("glsl", ShaderStage::Vertex, "setters.vert", VERTEX),
                SourceDesc::new("glsl", ShaderStage::Fragment, "setters.frag", fragment),
            ],
        );
        let built = compiler.build_program(&desc, &BuildOptions::default()).into_result()?;
        Ok(Self { _device: device, capabilities, handles, _compiler: compiler, built })
    }
}

/// A program built by a GL build system, and the benchmark's own program
/// from the same source with the raw calls an engine would make on it.
struct GlBench {
    setup: Setup,
    raw: RawGl,
    /// `u_color`, `u_array` and `u_matrix` in the built program.
    handles: [ConstantHandle; 3],
}

impl GlBench {
    fn open(registry: &Registry, system: &str) -> anyhow::Result<Self> {
        let setup = Setup::open(registry, DeviceKind::OPENGL, system, GL_FRAGMENT)?;
        let Some(loader) = setup.handles.gl.into_option() else { bail!("the OpenGL device has no GL loader") };
        let constants = &setup.built.constants;
        let handles = [constants.handle("u_color")?, constants.handle("u_array")?, constants.handle("u_matrix")?];

        // SAFETY: the loader comes from the live device above; its context is
        // made current before GL is loaded and stays current on this thread.
        let gl = unsafe {
            if !(loader.make_current)(loader.context) {
                bail!("the device's OpenGL context cannot be made current");
            }
            glow::Context::from_loader_function(|name| match CString::new(name) {
                Ok(name) => (loader.get_proc_address)(loader.context, name.as_ptr()),
                Err(_) => std::ptr::null(),
            })
        };
        let (program, locations) = raw_gl_program(&gl)?;
        Ok(Self { setup, raw: RawGl { gl, program, locations }, handles })
    }
}

/// The benchmark's own GL program and its uniforms' locations (`u_color`,
/// `u_array`, `u_matrix`): the raw calls, each the same in every
/// comparison it appears in.
struct RawGl {
    gl: glow::Context,
    program: glow::Program,
    locations: [glow::UniformLocation; 3],
}

impl RawGl {
    /// `glProgramUniform4fv` of one `vec4`.
    fn vector(&self, i: usize) {
        // SAFETY: `program` is a linked program of this context; the
        // location is its vec4 uniform's.
        unsafe { self.gl.program_uniform_4_f32_slice(self.program, Some(&self.locations[0]), black_box(color(i))) }
    }

    /// `glProgramUniform4fv` of 16 `vec4`.
    fn array(&self, i: usize) {
        // SAFETY: as above; 16 vec4 for the 16 elements.
        unsafe {
            self.gl.program_uniform_4_f32_slice(
                self.program,
                Some(&self.locations[1]),
                black_box(colors(i).as_flattened()),
            )
        }
    }

    /// `glProgramUniformMatrix4fv` of one `mat4`.
    fn matrix(&self, i: usize) {
        // SAFETY: as above; 16 floats for one mat4.
        unsafe {
            self.gl.program_uniform_matrix_4_f32_slice(
                self.program,
                Some(&self.locations[2]),
                false,
                black_box(matrix4(i)),
            )
        }
    }
}

fn opengl(registry: &Registry, args: &Args) -> anyhow::Result<Vec<Row>> {
    let mut rows = Vec::new();
    for system in ["xr-compiler-glsl", "xr-compiler-gl-spirv"] {
        // The device and build system bound by name: they must outlive the program.
        let GlBench { setup: Setup { _device, capabilities, _compiler, mut built, .. }, raw, handles } =
            GlBench::open(registry, system)?;
        let [handle, array, matrix] = handles;
        let device = format!("OpenGL ({})", capabilities.renderer);
        let row = |ours: &str, raw: &'static str, Comparison { ours_ns, raw_ns, ratio }| Row {
            device: device.clone(),
            ours: format!("{ours} ({system})"),
            ours_ns,
            raw,
            raw_ns,
            ratio,
        };
        let raw_vector = |i: usize| raw.vector(i);
        let raw_array = |i: usize| raw.array(i);
        let raw_matrix = |i: usize| raw.matrix(i);
        let raw_all = |i: usize| {
            raw_vector(i);
            raw_array(i);
            raw_matrix(i);
        };
        rows.push(row(
            "set_vector",
            "glProgramUniform4fv",
            compare(
                args,
                |i| {
                    built.constants.set_vector(handle, color(i)).expect("set");
                },
                raw_vector,
            ),
        ));
        rows.push(row(
            "set_vec4_array, 16",
            "glProgramUniform4fv, count 16",
            compare(
                args,
                |i| {
                    built.constants.set_vec4_array(array, colors(i)).expect("set");
                },
                raw_array,
            ),
        ));
        rows.push(row(
            "set_matrix4",
            "glProgramUniformMatrix4fv",
            compare(
                args,
                |i| {
                    built.constants.set_matrix4(matrix, matrix4(i)).expect("set");
                },
                raw_matrix,
            ),
        ));
        rows.push(row(
            "set_values, all 3",
            "the 3 calls",
            compare(
                args,
                |i| {
                    let (c, a, m) = (color(i), colors(i), matrix4(i));
                    let sets = [
                        ConstantSet {
                            handle,
                            value: ConstantValue::floats(ConstantType::vector(ScalarKind::Float, 4), c),
                        },
                        ConstantSet {
                            handle: array,
                            value: ConstantValue::floats(ConstantType::vector(ScalarKind::Float, 4), a.as_flattened()),
                        },
                        ConstantSet { handle: matrix, value: ConstantValue::floats(ConstantType::matrix(4, 4), m) },
                    ];
                    built.constants.set_values(&sets).expect("set");
                },
                raw_all,
            ),
        ));
        // The same sets through handles as generated bindings resolve them
        // at load (`xr bindgen`): typed, set through the table.
        let (typed_vector, typed_matrix) = (
            typed::Constant::<typed::Vec4>::resolve(&built.constants, "u_color")?,
            typed::Constant::<typed::Mat4>::resolve(&built.constants, "u_matrix")?,
        );
        let typed_array = typed::Constant::<typed::Vec4>::resolve(&built.constants, "u_array")?;
        rows.push(row(
            "generated handle set (vec4)",
            "glProgramUniform4fv",
            compare(args, |i| typed_vector.set(&mut built.constants, color(i)).expect("set"), raw_vector),
        ));
        rows.push(row(
            "generated handle set_array (vec4), 16",
            "glProgramUniform4fv, count 16",
            compare(args, |i| typed_array.set_array(&mut built.constants, colors(i)).expect("set"), raw_array),
        ));
        rows.push(row(
            "generated handle set (mat4)",
            "glProgramUniformMatrix4fv",
            compare(args, |i| typed_matrix.set(&mut built.constants, matrix4(i)).expect("set"), raw_matrix),
        ));
        let raw_calls = (raw_vector, raw_array, raw_matrix, raw_all);
        let rows_of = |ours: [&str; 4], comparisons: [Comparison; 4]| {
            ours.into_iter()
                .zip(RAW_CALLS)
                .zip(comparisons)
                .map(|((ours, raw), c)| row(ours, raw, c))
                .collect::<Vec<_>>()
        };
        // The same sets through setters resolved once per handle.
        let (vector, vectors, matrix) =
            (built.constants.setter(handle)?, built.constants.setter(array)?, built.constants.setter(matrix)?);
        rows.extend(rows_of(
            ["resolved set_vector", "resolved set_vec4_array, 16", "resolved set_matrix4", "3 resolved setters"],
            each_then_all(
                args,
                (
                    |i| vector.set_vector(color(i)).expect("set"),
                    |i| vectors.set_vec4_array(colors(i)).expect("set"),
                    |i| matrix.set_matrix4(matrix4(i)).expect("set"),
                ),
                raw_calls,
            ),
        ));
        // And through typed setters: the type checked once, not per set.
        let (vector, vectors, matrix) = (vector.floats::<4>()?, vectors.floats::<4>()?, matrix.floats::<16>()?);
        rows.extend(rows_of(
            ["typed set (vec4)", "typed set_array (vec4), 16", "typed set (mat4)", "3 typed setters"],
            each_then_all(
                args,
                (
                    |i| vector.set(color(i)).expect("set"),
                    |i| vectors.set_array(colors(i)).expect("set"),
                    |i| matrix.set(matrix4(i)).expect("set"),
                ),
                raw_calls,
            ),
        ));
    }
    Ok(rows)
}

/// `xr-bench constant-setters --only KIND`: one warm-up set (a set
/// through the table resolves its handle's setter then), then `--sets`
/// sets of `only` in [`measured`], timed.
fn run_only(registry: &Registry, args: &Args, only: Only) -> anyhow::Result<()> {
    let GlBench { setup: Setup { _device, _compiler, mut built, .. }, raw, handles } =
        GlBench::open(registry, &args.system)?;
    let [handle, array, matrix] = handles;
    let table = &mut built.constants;
    let run = |set: &mut dyn FnMut(usize)| {
        set(0);
        let started = Instant::now();
        measured(args.sets, set);
        let ns = started.elapsed().as_nanos() as f64 / args.sets as f64;
        println!("{only:?} ({}): {} sets, {ns:.1} ns per set", args.system, args.sets);
    };
    match only {
        Only::RawVector => run(&mut |i| raw.vector(i)),
        Only::RawArray => run(&mut |i| raw.array(i)),
        Only::RawMatrix => run(&mut |i| raw.matrix(i)),
        Only::TableVector => run(&mut |i| table.set_vector(handle, color(i)).expect("set")),
        Only::TableArray => run(&mut |i| table.set_vec4_array(array, colors(i)).expect("set")),
        Only::TableMatrix => run(&mut |i| table.set_matrix4(matrix, matrix4(i)).expect("set")),
        Only::ResolvedVector => {
            let setter = table.setter(handle)?;
            run(&mut |i| setter.set_vector(color(i)).expect("set"));
        }
        Only::ResolvedArray => {
            let setter = table.setter(array)?;
            run(&mut |i| setter.set_vec4_array(colors(i)).expect("set"));
        }
        Only::ResolvedMatrix => {
            let setter = table.setter(matrix)?;
            run(&mut |i| setter.set_matrix4(matrix4(i)).expect("set"));
        }
        Only::TypedVector => {
            let setter = table.setter(handle)?.floats::<4>()?;
            run(&mut |i| setter.set(color(i)).expect("set"));
        }
        Only::TypedArray => {
            let setter = table.setter(array)?.floats::<4>()?;
            run(&mut |i| setter.set_array(colors(i)).expect("set"));
        }
        Only::TypedMatrix => {
            let setter = table.setter(matrix)?.floats::<16>()?;
            run(&mut |i| setter.set(matrix4(i)).expect("set"));
        }
        Only::GeneratedVector => {
            let constant = typed::Constant::<typed::Vec4>::resolve(table, "u_color")?;
            run(&mut |i| constant.set(table, color(i)).expect("set"));
        }
        Only::GeneratedArray => {
            let constant = typed::Constant::<typed::Vec4>::resolve(table, "u_array")?;
            run(&mut |i| constant.set_array(table, colors(i)).expect("set"));
        }
        Only::GeneratedMatrix => {
            let constant = typed::Constant::<typed::Mat4>::resolve(table, "u_matrix")?;
            run(&mut |i| constant.set(table, matrix4(i)).expect("set"));
        }
    }
    Ok(())
}

/// The measured sets, alone in a function that is never inlined, so that
/// callgrind can count only them (`--toggle-collect`).
#[inline(never)]
fn measured(sets: u64, set: &mut dyn FnMut(usize)) {
    for i in 0..sets as usize {
        set(i);
    }
}

/// The benchmark's own program from the same source, and its uniforms'
/// locations (`u_color`, `u_array`, `u_matrix`).
fn raw_gl_program(gl: &glow::Context) -> anyhow::Result<(glow::Program, [glow::UniformLocation; 3])> {
    // SAFETY: plain GL object creation on the current context.
    unsafe {
        let program = gl.create_program().map_err(anyhow::Error::msg)?;
        for (kind, source) in [(glow::VERTEX_SHADER, VERTEX), (glow::FRAGMENT_SHADER, GL_FRAGMENT)] {
            let shader = gl.create_shader(kind).map_err(anyhow::Error::msg)?;
            gl.shader_source(shader, source);
            gl.compile_shader(shader);
            if !gl.get_shader_compile_status(shader) {
                bail!("raw GL shader: {}", gl.get_shader_info_log(shader));
            }
            gl.attach_shader(program, shader);
        }
        gl.link_program(program);
        if !gl.get_program_link_status(program) {
            bail!("raw GL program: {}", gl.get_program_info_log(program));
        }
        let location =
            |name: &str| gl.get_uniform_location(program, name).with_context(|| format!("{name} has no location"));
        Ok((program, [location("u_color")?, location("u_array")?, location("u_matrix")?]))
    }
}

fn vulkan(registry: &Registry, args: &Args) -> anyhow::Result<Vec<Row>> {
    let Setup { _device, capabilities, handles, _compiler, mut built } =
        Setup::open(registry, DeviceKind::VULKAN, "xr-compiler-vk-spirv", VK_FRAGMENT)?;
    let Some(loader) = handles.vulkan.into_option() else { bail!("the Vulkan device has no loader") };
    let handle = built.constants.handle("u_color")?;

    // SAFETY: the handles are the live device's, loaded through its own
    // `vkGetInstanceProcAddr`; names are NUL-terminated.
    let (raw_device, pool, layout) = unsafe {
        let (context, get) = (loader.context, loader.get_instance_proc_addr);
        let instance = ash::Instance::load_with(
            |name| get(context, loader.instance, name.as_ptr()),
            vk::Instance::from_raw(loader.instance),
        );
        let raw_device = ash::Device::load(instance.fp_v1_0(), vk::Device::from_raw(loader.device));
        let pool = raw_device.create_command_pool(
            &vk::CommandPoolCreateInfo::default()
                .queue_family_index(loader.queue_family)
                .flags(vk::CommandPoolCreateFlags::RESET_COMMAND_BUFFER),
            None,
        )?;
        let range = [vk::PushConstantRange::default().stage_flags(vk::ShaderStageFlags::FRAGMENT).size(16)];
        let layout = raw_device
            .create_pipeline_layout(&vk::PipelineLayoutCreateInfo::default().push_constant_ranges(&range), None)?;
        (raw_device, pool, layout)
    };
    // SAFETY: the pool is this thread's; one primary buffer.
    let command_buffer = unsafe {
        raw_device.allocate_command_buffers(
            &vk::CommandBufferAllocateInfo::default().command_pool(pool).command_buffer_count(1),
        )?[0]
    };
    let begin = || {
        // SAFETY: a buffer of this pool, not in use by the device.
        unsafe {
            raw_device.reset_command_buffer(command_buffer, vk::CommandBufferResetFlags::empty()).expect("reset");
            raw_device.begin_command_buffer(command_buffer, &vk::CommandBufferBeginInfo::default()).expect("begin");
        }
    };
    let mut rows = Vec::new();
    let Comparison { ours_ns, raw_ns, ratio } = compare(
        args,
        |i| {
            built.constants.set_vector(handle, color(i)).expect("set");
        },
        |i| {
            // A recording buffer grows with every command: start a new one now and then.
            if i % 4096 == 0 {
                begin();
            }
            let value = color(i);
            // SAFETY: `value` is 16 bytes of plain floats, read during the call.
            let data = unsafe { std::slice::from_raw_parts(value.as_ptr().cast::<u8>(), 16) };
            // SAFETY: the buffer is recording; the range fits the layout's.
            unsafe { raw_device.cmd_push_constants(command_buffer, layout, vk::ShaderStageFlags::FRAGMENT, 0, data) };
        },
    );
    let device = format!("Vulkan ({})", capabilities.renderer);
    rows.push(Row {
        device: device.clone(),
        ours: "set_vector (push constant)".into(),
        ours_ns,
        raw: "vkCmdPushConstants",
        raw_ns,
        ratio,
    });
    let mut block = [0u8; 128];
    let Comparison { ours_ns, raw_ns, ratio } = compare(
        args,
        |i| {
            built.constants.set_vector(handle, color(i)).expect("set");
        },
        |i| {
            let value = color(i);
            for (k, v) in value.iter().enumerate() {
                block[k * 4..k * 4 + 4].copy_from_slice(&v.to_le_bytes());
            }
            black_box(&mut block);
        },
    );
    rows.push(Row {
        device,
        ours: "set_vector (push constant)".into(),
        ours_ns,
        raw: "copy into a byte array",
        raw_ns,
        ratio,
    });
    // SAFETY: nothing the device runs uses them.
    unsafe {
        raw_device.destroy_pipeline_layout(layout, None);
        raw_device.destroy_command_pool(pool, None);
    }
    Ok(rows)
}
