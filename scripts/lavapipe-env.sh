# Sourced by the scripts that run XR on Vulkan (tests, main job,
# benchmarks, the real-world check): where scripts/setup-lavapipe.sh put a
# current lavapipe, the Vulkan loader is told of it beside the system's
# drivers (VK_ADD_DRIVER_FILES), and the Vulkan device picks it over the
# system's older one. A driver list the caller set is left as it is.
#
#   . scripts/lavapipe-env.sh    # from any directory
#
# The target directory is found as cargo and the other scripts find it
# (scripts/target-dir.sh): CARGO_TARGET_DIR, absolute or relative to the
# checkout, else the checkout's target/; wherever the caller stands.
lavapipe_manifest="${CARGO_TARGET_DIR:-target}/lavapipe/lvp_icd.json"
case "$lavapipe_manifest" in
/*) ;;
*) lavapipe_manifest="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/$lavapipe_manifest" ;;
esac
if [ -f "$lavapipe_manifest" ] && [ -z "${VK_ADD_DRIVER_FILES:-}${VK_DRIVER_FILES:-}${VK_ICD_FILENAMES:-}" ]; then
    export VK_ADD_DRIVER_FILES="$lavapipe_manifest"
fi
unset lavapipe_manifest
