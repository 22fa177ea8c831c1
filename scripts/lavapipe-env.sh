# Sourced by the scripts that run XR on Vulkan (tests, main job,
# benchmarks, the real-world check): where scripts/setup-lavapipe.sh put a
# current lavapipe, the Vulkan loader is told of it beside the system's
# drivers (VK_ADD_DRIVER_FILES), and the Vulkan device picks it over the
# system's older one. A driver list the caller set is left as it is.
#
#   . scripts/lavapipe-env.sh    # from the checkout's root
lavapipe_manifest="$PWD/${CARGO_TARGET_DIR:-target}/lavapipe/lvp_icd.json"
case "${CARGO_TARGET_DIR:-}" in /*) lavapipe_manifest="$CARGO_TARGET_DIR/lavapipe/lvp_icd.json" ;; esac
if [ -f "$lavapipe_manifest" ] && [ -z "${VK_ADD_DRIVER_FILES:-}${VK_DRIVER_FILES:-}${VK_ICD_FILENAMES:-}" ]; then
    export VK_ADD_DRIVER_FILES="$lavapipe_manifest"
fi
unset lavapipe_manifest
