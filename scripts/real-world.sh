#!/usr/bin/env bash
# Real shaders from public collections, built on a live device through
# `xr compile --device`: every program glslc accepts must build.
#
#   scripts/real-world.sh vulkan-glsl DIR   # SaschaWillems/Vulkan: shaders/glsl/<sample>/<name>.<stage>
#   scripts/real-world.sh vulkan-hlsl DIR   # the same collection's shaders/hlsl
#   scripts/real-world.sh vulkan-slang DIR  # the same collection's shaders/slang (<sample>/<name>.slang)
#   scripts/real-world.sh opengl DIR        # JoeyDeVries/LearnOpenGL: src/**/<name>.vs/.fs/.gs
#   scripts/real-world.sh opengl-vulkan DIR # the same GLSL, written for OpenGL, built for Vulkan (vk-spirv)
#   scripts/real-world.sh --smoke           # this repository's own samples (CI)
#
# DIR is a checkout (or a bare mirror) of the collection; nothing of it is
# copied into this repository. A program is the files of one sample that
# share a name (`phong.vert` + `phong.frag`), or one compute file. For each,
# glslc is asked first (the baseline: a program counts if glslc compiles all
# its files); then `xr compile FILES --target T --device` builds it on the
# device (Vulkan under its validation layers) and prints its resource table.
# Slang: a program is one `.slang` file and every entry point it declares
# (`xr compile a.slang` builds them all); the baseline is its author's own
# compile: the program counts when the author ships its SPIR-V
# (`<name>.vert.spv`, …). Mesh programs are a name's task (if any), mesh
# and fragment (if any) stages; a ray tracing program is a sample's ray
# tracing files, its one ray generation stage first, then its miss, hit
# and callable stages in name order (which gives their groups, docs/BUILD.md).
# Vulkan runs on the setup's current lavapipe where there is no GPU
# (scripts/setup-lavapipe.sh). Results: one line per program in target/real-world/<kind>.tsv and a
# summary on stdout.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/target-dir.sh

kind="${1:?usage: scripts/real-world.sh vulkan-glsl|vulkan-hlsl|vulkan-slang|opengl|opengl-vulkan DIR | --smoke}"
profile="${PROFILE:-release}"
if [ "$kind" = --smoke ]; then
    profile=debug
fi
xr="$target/$profile/xr"
if [ ! -x "$xr" ]; then
    packages=(-p xr-cli)
    for plugin in $(grep -v -e '^#' -e '^$' plugins.txt); do packages+=(-p "$plugin-cdylib"); done
    cargo build $([ "$profile" = release ] && echo --release) "${packages[@]}"
fi
export XR_GL_DEVICE="${XR_GL_DEVICE:-software}"
scripts/setup-lavapipe.sh
. scripts/lavapipe-env.sh
out=$target/real-world
mkdir -p "$out"

# A checkout, or a bare mirror's `$2` exported into a scratch directory.
source_dir() {
    local dir="$1" part="$2"
    if [ "$(git -C "$dir" rev-parse --is-bare-repository 2>/dev/null || echo false)" = true ]; then
        local scratch="$out/source-$(basename "$(dirname "$dir")")"
        if [ ! -d "$scratch" ]; then
            mkdir -p "$scratch"
            git -C "$dir" archive HEAD "$part" | tar -x -C "$scratch"
        fi
        echo "$scratch"
    else
        echo "$dir"
    fi
}

# run NAME TARGET GLSLC_ARGS... -- FILES...: one program.
results=""
run() {
    local name="$1" target="$2"
    shift 2
    local glslc_args=()
    while [ "$1" != -- ]; do glslc_args+=("$1"); shift; done
    shift
    local files=("$@") accepted=yes
    for file in "${files[@]}"; do
        glslc "${glslc_args[@]}" "$file" -o /dev/null >/dev/null 2>&1 || accepted=no
    done
    local xr_args=()
    [ -n "${LANG_ARG:-}" ] && xr_args+=(--lang "$LANG_ARG")
    # The Vulkan version is an option of the Vulkan compiler only.
    [ "$target" = vk-spirv ] && xr_args+=(--option "vulkan=${VULKAN:-1.0}")
    # Slang programs are written for SPIR-V 1.4 (their authors compile with
    # -profile spirv_1_4): Vulkan 1.2's environment, unless VULKAN says.
    [ "$kind" = vulkan-slang ] && xr_args=(--option "vulkan=${VULKAN:-1.3}")
    local log status first code=0
    log=$("$xr" compile "${files[@]}" "${xr_args[@]}" --target "$target" --device 2>&1) || code=$?
    if [ "$code" -eq 0 ]; then
        status=pass
        first=$(echo "$log" | grep -c "^  " || true)" resources and constants"
    elif [ "$code" -gt 128 ]; then
        # A compiler or driver that takes `xr` down: never expected (XR
        # builds on the device in a child process and refuses what it
        # cannot build before the driver), counted apart by `summary`.
        status=fail
        first="ended by signal $((code - 128))"
    else
        status=fail
        first=$(echo "$log" | grep -v "^\s*$" | grep -m1 -E "error|refused|failed|cannot|no " || echo "$log" | head -1)
    fi
    # Mesh and ray tracing programs are counted apart: their stages' files,
    # or a Slang file its caller says holds them (modern_program=yes).
    local program_kind=raster
    for file in "${files[@]}"; do
        case "${file##*.}" in task | mesh | rgen | rmiss | rchit | rahit | rint | rcall) program_kind=mesh-rt ;; esac
    done
    [ "${modern_program:-no}" = yes ] && program_kind=mesh-rt
    printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$accepted" "$status" "${first//$'\t'/ }" "$program_kind" >> "$results"
}

summary() {
    local accepted passed
    accepted=$(awk -F'\t' '$2 == "yes"' "$results" | wc -l)
    passed=$(awk -F'\t' '$2 == "yes" && $3 == "pass"' "$results" | wc -l)
    echo "$kind: $(wc -l < "$results") programs, glslc accepts $accepted, xr builds $passed of those on the device"
    # Every program, whether glslc takes it or not (the authors compiled
    # them all, some with a newer glslang than Debian's), and the mesh and
    # ray tracing programs among them.
    echo "$kind: xr builds $(awk -F'\t' '$3 == "pass"' "$results" | wc -l) of all $(wc -l < "$results") programs;" \
        "mesh and ray tracing: $(awk -F'\t' '$5 == "mesh-rt" && $3 == "pass"' "$results" | wc -l)" \
        "of $(awk -F'\t' '$5 == "mesh-rt"' "$results" | wc -l)"
    echo "mesh and ray tracing programs that failed (first line of each):"
    awk -F'\t' '$5 == "mesh-rt" && $3 == "fail" { print "  " $1 ": " $4 }' "$results"
    echo "glslc-accepted programs that failed (first line of each):"
    awk -F'\t' '$2 == "yes" && $3 == "fail" { print "  " $1 ": " $4 }' "$results" | head -40
    echo "results: $results"
    local signals
    signals=$(awk -F'\t' '$4 ~ /^ended by signal/' "$results" | wc -l)
    echo "xr compile ended by a signal: $signals (of $(wc -l < "$results"))"
    if [ "$signals" -gt 0 ]; then
        echo "real-world: $signals programs ended xr by a signal" >&2
        exit 1
    fi
}

stage_flag() {
    case "$1" in
        vert|vs) echo vert ;; frag|fs) echo frag ;; geom|gs) echo geom ;;
        tesc|tcs) echo tesc ;; tese|tes) echo tese ;; comp|cs) echo comp ;;
        task|mesh|rgen|rmiss|rchit|rahit|rint|rcall) echo "$1" ;;
    esac
}

# The ray tracing program of one directory, on one line: its one ray
# generation stage, then its miss, closest-hit, any-hit, intersection and
# callable stages, each kind in name order. Nothing without exactly one
# ray generation stage.
ray_tracing_program_in() {
    local dir="$1" files=()
    [ "$(find "$dir" -maxdepth 1 -name '*.rgen' | wc -l)" -eq 1 ] || return 0
    for extension in rgen rmiss rchit rahit rint rcall; do
        while read -r file; do
            [ -n "$file" ] && files+=("$file")
        done < <(find "$dir" -maxdepth 1 -name "*.$extension" | sort)
    done
    echo "${files[*]}"
}

# Programs of one directory, one per line. Files that share a name make a
# program (`phong.vert` + `phong.frag`), in pipeline order; each compute
# file is one. Names with only tessellation or geometry stages
# (`displacement.tesc` + `.tese`) go between the vertex and fragment
# stages of each name that has those; vertex and fragment alone are then
# not tried (their fragment stage reads what the middle stages write).
programs_in() {
    local dir="$1" vertex="$2" middle="$3" fragment="$4" compute="$5"
    local stems graphics=() partial=()
    stems=$(find "$dir" -maxdepth 1 -type f | sed -E 's/\.[^./]+$//' | sort -u)
    while read -r stem; do
        [ -z "$stem" ] && continue
        [ -f "$stem.$compute" ] && echo "$stem.$compute"
        # A mesh program: task (if any), mesh, fragment (if any).
        if [ -f "$stem.mesh" ]; then
            local mesh=()
            [ -f "$stem.task" ] && mesh+=("$stem.task")
            mesh+=("$stem.mesh")
            [ -f "$stem.$fragment" ] && mesh+=("$stem.$fragment")
            echo "${mesh[*]}"
        fi
        local middles=()
        for extension in $middle; do
            [ -f "$stem.$extension" ] && middles+=("$stem.$extension")
        done
        if [ -f "$stem.$vertex" ]; then
            graphics+=("$stem")
        elif [ ${#middles[@]} -gt 0 ]; then
            partial+=("${middles[*]}")
        fi
    done <<< "$stems"
    # Middle stages go to the stem called `base` where there is one (the
    # collections' convention: base.vert + displacement.tesc/.tese +
    # base.frag), else to every stem without middle stages of its own.
    local takers=()
    for stem in "${graphics[@]}"; do
        [ "$(basename "$stem")" = base ] && takers=("$stem")
    done
    for stem in "${graphics[@]}"; do
        local own=()
        for extension in $middle; do
            [ -f "$stem.$extension" ] && own+=("$stem.$extension")
        done
        local end="" takes=no
        [ -f "$stem.$fragment" ] && end="$stem.$fragment"
        if [ ${#partial[@]} -gt 0 ] && [ ${#own[@]} -eq 0 ]; then
            if [ ${#takers[@]} -eq 0 ] || [ "${takers[0]}" = "$stem" ]; then
                takes=yes
            fi
        fi
        if [ $takes = yes ]; then
            for part in "${partial[@]}"; do
                echo "$stem.$vertex $part $end"
            done
        else
            echo "$stem.$vertex ${own[*]} $end"
        fi
    done
}

case "$kind" in
    --smoke)
        results="$out/smoke.tsv"
        : > "$results"
        kind=smoke
        run textured-mesh vk-spirv --target-env=vulkan1.0 -- samples/textured/shaders/mesh.vert samples/textured/shaders/mesh.frag
        run textured-paint vk-spirv --target-env=vulkan1.0 -- samples/textured/shaders/paint.comp
        run textured-mesh-gl gl-glsl --target-env=opengl -- samples/textured/shaders/mesh.vert samples/textured/shaders/mesh.frag
        summary
        failed=$(awk -F'\t' '$3 == "fail"' "$results" | wc -l)
        [ "$failed" -eq 0 ] || { echo "real-world smoke: $failed failed"; exit 1; }
        ;;
    vulkan-glsl | vulkan-hlsl)
        root=$(source_dir "${2:?give the directory of the collection}" shaders)
        language=${kind#vulkan-}
        results="$out/$kind.tsv"
        : > "$results"
        [ "$language" = hlsl ] && LANG_ARG=hlsl
        for sample in "$root"/shaders/"$language"/*/; do
            while read -r line; do
                [ -z "$line" ] && continue
                read -ra files <<< "$line"
                glslc_args=(--target-env=vulkan${VULKAN:-1.0})
                # Mesh and ray tracing stages are SPIR-V 1.4: glslc's baseline
                # is Vulkan 1.2's environment (XR raises its own the same way).
                case "${files[0]##*.}" in task | mesh | rgen) glslc_args=(--target-env=vulkan1.2) ;; esac
                if [ "$language" = hlsl ]; then
                    # glslc takes one stage per run: the first file's, for a lone file.
                    glslc_args+=(-x hlsl -fshader-stage="$(stage_flag "${files[0]##*.}")")
                fi
                # A ray tracing program by its ray generation stage, another by its last stage.
                named="${files[-1]}"
                [ "${files[0]##*.}" = rgen ] && named="${files[0]}"
                name="$(basename "$sample")/$(basename "${named%.*}")"
                if [ "$language" = hlsl ]; then
                    # Each HLSL file is checked with its own stage. glslang's HLSL
                    # has no mesh or ray tracing stages: there the baseline is the
                    # author's own compile (DXC), the SPIR-V shipped beside each file.
                    accepted=yes
                    for file in "${files[@]}"; do
                        case "${files[0]##*.}" in
                            task | mesh | rgen) [ -f "$file.spv" ] || accepted=no ;;
                            *) glslc "${glslc_args[0]}" -x hlsl -fshader-stage="$(stage_flag "${file##*.}")" "$file" -o /dev/null >/dev/null 2>&1 || accepted=no ;;
                        esac
                    done
                    run "$name" vk-spirv --version -- "${files[@]}"
                    sed -i "\$ s/^\([^\t]*\)\t[^\t]*\t/\1\t$accepted\t/" "$results"
                else
                    run "$name" vk-spirv "${glslc_args[@]}" -- "${files[@]}"
                fi
            done < <(programs_in "$sample" vert "tesc tese geom" frag comp; ray_tracing_program_in "$sample")
        done
        summary
        ;;
    vulkan-slang)
        scripts/setup-slang.sh
        root=$(source_dir "${2:?give the directory of the collection}" shaders)
        results="$out/$kind.tsv"
        : > "$results"
        others="$out/$kind-not-drawn.txt"
        : > "$others"
        # A sample's ray tracing program: its one file declaring a ray
        # generation entry point, with the sample's other files that declare
        # miss, hit or callable entry points (the author ships each entry's
        # SPIR-V by its own name, raygen.rgen.spv).
        ray_tracing_files=" "
        for dir in "$root"/shaders/slang/*/; do
            generation=$(grep -l 'shader("raygeneration")' "$dir"*.slang 2>/dev/null || true)
            [ "$(echo "$generation" | grep -c .)" -eq 1 ] || continue
            ls "$dir"*.rgen.spv >/dev/null 2>&1 || continue
            files=("$generation")
            for other in "$dir"*.slang; do
                [ "$other" = "$generation" ] && continue
                grep -qE 'shader\("(miss|closesthit|anyhit|intersection|callable)"\)' "$other" && files+=("$other")
            done
            ray_tracing_files+="${files[*]} "
            modern_program=yes
            run "$(basename "$dir")/$(basename "${generation%.slang}")" vk-spirv --version -- "${files[@]}"
            modern_program=no
            sed -i "\$ s/^\([^\t]*\)\t[^\t]*\t/\1\tyes\t/" "$results"
        done
        for file in "$root"/shaders/slang/*/*.slang; do
            case "$ray_tracing_files" in *" $file "*) continue ;; esac
            base="${file%.slang}"
            shipped=$( (ls "$base".*.spv 2>/dev/null || true) | sed -E 's/.*\.([a-z]+)\.spv$/\1/' | tr '\n' ' ')
            [ -z "$shipped" ] && continue
            name="$(basename "$(dirname "$file")")/$(basename "$base")"
            sample_dir=$(dirname "$file")
            files=("$file")
            entries=()
            declares() { grep -q "shader(\"$1\")" "$file"; }
            # Mesh and ray tracing programs are whole in their file.
            modern=no
            echo " $shipped" | grep -qE " (rgen|rmiss|rchit|rahit|rint|rcall|mesh|task) " && modern=yes
            if [ $modern = no ] && ! declares vertex && ! declares compute; then
                # Middle stages go with the sample's base.slang (its vertex
                # and fragment stages), else with its one other file that
                # ships a vertex stage, as for GLSL.
                taker=""
                if [ -f "$sample_dir/base.slang" ]; then
                    taker="$sample_dir/base.slang"
                else
                    takers=$(ls "$sample_dir"/*.vert.spv 2>/dev/null | sed 's/\.vert\.spv$/.slang/' | while read -r f; do [ -f "$f" ] && echo "$f"; done || true)
                    [ "$(echo "$takers" | grep -c .)" -eq 1 ] && taker="$takers"
                fi
                if echo " $shipped" | grep -qE " (tesc|tese|geom) " && [ -n "$taker" ]; then
                    files=("$taker" "$file")
                else
                    echo "$name: $shipped(no vertex or compute stage: not a program on its own)" >> "$others"
                    continue
                fi
            fi
            if declares compute && declares vertex; then
                # Compute and graphics entry points in one file are two
                # programs; the author names entry points <stage>Main.
                run "$name[compute]" vk-spirv --version -- "$file" --entry computeMain
                sed -i "\$ s/^\([^\t]*\)\t[^\t]*\t/\1\tyes\t/" "$results"
                name="$name[graphics]"
                entries=(--entry vertexMain --entry fragmentMain)
            fi
            # The author's compile is the baseline: glslc is not asked.
            modern_program=$modern
            run "$name" vk-spirv --version -- "${files[@]}" "${entries[@]}"
            modern_program=no
            sed -i "\$ s/^\([^\t]*\)\t[^\t]*\t/\1\tyes\t/" "$results"
        done
        summary
        echo "not programs on their own (no vertex, compute, mesh or ray generation stage): $(wc -l < "$others") files, in $others"
        ;;
    opengl | opengl-vulkan)
        # The same OpenGL GLSL, for OpenGL's driver or for Vulkan (loose
        # uniforms placed by XR in a push constant block).
        target=gl-glsl
        [ "$kind" = opengl-vulkan ] && target=vk-spirv
        root=$(source_dir "${2:?give the directory of the collection}" src)
        results="$out/$kind.tsv"
        : > "$results"
        LANG_ARG=glsl
        while read -r dir; do
            while read -r line; do
                [ -z "$line" ] && continue
                read -ra files <<< "$line"
                case "${files[0]##*.}" in vs|cs) ;; *) continue ;; esac
                accepted=yes
                for file in "${files[@]}"; do
                    glslc --target-env=opengl -fauto-map-locations -fauto-bind-uniforms \
                        -fshader-stage="$(stage_flag "${file##*.}")" "$file" -o /dev/null >/dev/null 2>&1 || accepted=no
                done
                name="${dir#"$root"/}/$(basename "${files[0]%.*}")"
                run "$name" "$target" --version -- "${files[@]}"
                sed -i "\$ s/^\([^\t]*\)\t[^\t]*\t/\1\t$accepted\t/" "$results"
            done < <(programs_in "$dir" vs "tcs tes gs" fs cs)
        done < <(find "$root/src" -type d | sort)
        summary
        ;;
    *)
        echo "unknown collection '$kind'" >&2
        exit 2
        ;;
esac
