# Sourced by the scripts: `$target` is where cargo puts what it builds,
# CARGO_TARGET_DIR when it is set (relative to the checkout, as cargo takes
# it), else the checkout's target/. An absolute path, so a script that
# changes directory still finds xr, its plugins and the setup's downloads.
target=${CARGO_TARGET_DIR:-target}
case $target in
/*) ;;
*) target="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/$target" ;;
esac
