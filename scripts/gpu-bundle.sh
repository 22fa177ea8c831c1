#!/usr/bin/env bash
# Packs XR's release binaries, plugins and sample shaders into target/gpu-bundle
# with check.sh, to run on a machine with a GPU (a GPU is picked up with no
# change). The bundle also carries glvnd's libEGL, the Vulkan loader and
# spirv-val from this machine, for GPU machines that have only the vendor's
# driver libraries (NVIDIA's in /usr/local/nvidia/lib64).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/target-dir.sh
cargo build --release --quiet
bundle=$target/gpu-bundle
rm -rf "$bundle" && mkdir -p "$bundle/lib" "$bundle/bin" "$bundle/shaders"
cp "$target"/release/{xr,triangle,pipelines} "$bundle/"
for plugin in $(grep -v -e '^#' -e '^$' plugins.txt); do # the plugins XR ships
    cp "$target/release/lib${plugin//-/_}.so" "$bundle/"
done
cp -r samples/triangle/shaders "$bundle/shaders/triangle"
cp -r samples/pipelines/shaders "$bundle/shaders/pipelines"
cp -L /usr/lib/x86_64-linux-gnu/{libEGL.so.1,libGLdispatch.so.0,libvulkan.so.1} "$bundle/lib/"
cp /usr/bin/spirv-val "$bundle/bin/"
cat > "$bundle/check.sh" <<'CHECK'
#!/usr/bin/env bash
# xr plugins, the triangle through every path, the pipelines sample twice. Writes to $OUT.
cd "$(dirname "$0")"
OUT=${OUT:-/tmp/xr-gpu-check}
export PATH="$PWD/bin:$PATH"
export LD_LIBRARY_PATH="$PWD/lib:/usr/local/nvidia/lib64:${LD_LIBRARY_PATH:-}"
nvidia-smi -L 2>/dev/null | head -3
./xr plugins
./triangle --out "$OUT" --shaders shaders/triangle
./pipelines --store "$OUT/store" --out "$OUT/pipelines.png" --shaders shaders/pipelines
./pipelines --store "$OUT/store" --out "$OUT/pipelines2.png" --shaders shaders/pipelines
md5sum "$OUT"/triangle-*.png
CHECK
chmod +x "$bundle/check.sh"
du -sh "$bundle"
