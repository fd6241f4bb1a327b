#!/usr/bin/env bash
# Check that uv.lock is the lock of pyproject.toml, and that what it locks for users (the app,
# and the export extra) installs from wheels alone on each of the five supported platforms.
# Nothing is installed: uv resolves for another platform by its wheel tags.
#   packaging/check-lock.sh [UV]      UV: the uv to run (default: uv on PATH)
set -euo pipefail
cd "$(dirname "$0")/.."
uv="${1:-uv}"

# Fails when pyproject.toml changed without the lock; `uv lock` itself refuses a lock that lacks
# wheels for any of [tool.uv] required-environments.
"$uv" lock --check --quiet

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
"$uv" export --frozen --quiet --no-hashes --no-emit-project --extra export -o "$work/locked.txt"

# The export is the whole locked set, so --no-deps: each locked package needs a wheel for the
# platform, and the packages' own metadata is not read again (the lock overrides the model
# package's, whose sentence-transformers would bring PyTorch).
# Each platform as uv names it, with the oldest system its wheels ask for.
failed=0
for target in "x86_64-manylinux_2_34 Linux x86_64 (glibc 2.34)" \
              "aarch64-manylinux_2_39 Linux aarch64 (glibc 2.39)" \
              "aarch64-apple-darwin macOS 14 on Apple silicon" \
              "x86_64-apple-darwin macOS 13 on Intel" \
              "x86_64-pc-windows-msvc Windows x86_64"; do
  platform="${target%% *}"
  name="${target#* }"
  macos=""
  case "$platform" in
    aarch64-apple-darwin) macos=14.0 ;;
    x86_64-apple-darwin) macos=13.0 ;;
  esac
  if MACOSX_DEPLOYMENT_TARGET="$macos" "$uv" pip compile "$work/locked.txt" --quiet \
       --python-platform "$platform" --python-version 3.11 --only-binary :all: --no-deps \
       -o "$work/$platform.txt" 2>"$work/$platform.err"; then
    echo "lock: $name: $(grep -c '==' "$work/$platform.txt") packages, all from wheels"
  else
    echo "lock: $name: does not install" >&2
    cat "$work/$platform.err" >&2
    failed=1
  fi
done
exit "$failed"
