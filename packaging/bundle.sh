#!/usr/bin/env bash
# Build physgrade's one-folder bundle with PyInstaller (packaging/physgrade.spec), from the app's
# exact set in uv.lock (no test tools, no PyTorch) installed into OUT/venv with the bundle extra
# (PyInstaller). Run packaging/setup.sh first: it brings uv (.uv/) and the Python to use.
#   packaging/bundle.sh [--smoke] [OUT]
# OUT (default build/bundle) gets venv/, dist/physgrade/, the bundle (and on macOS
# dist/physgrade.app), and work/, PyInstaller's own. Then it prints the bundle's size on disk and
# its largest parts.
# --smoke: then start the bundle as a user would, headless on Linux under xvfb-run, with
#   physgrade demo --smoke (physgrade_ui/smoke.py): it opens the demo, shows a response with
#   mathematics and saves a screenshot (OUT/smoke.png); the demo project, the home folder and
#   every per-user folder are temporary.
# Exits non-zero when the build or the smoke test fails.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"

smoke=0
out=""
for argument in "$@"; do
  case "$argument" in
    --smoke) smoke=1 ;;
    -h|--help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "usage: packaging/bundle.sh [--smoke] [OUT]" >&2; exit 2 ;;
    *) out="$argument" ;;
  esac
done
out="${out:-build/bundle}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"

uv="$root/.uv/bin/uv"
[ -x "$uv" ] || uv="$(command -v uv)" || { echo "no uv: run packaging/setup.sh first" >&2; exit 1; }
base="$root/.venv/bin/python"
[ -x "$base" ] || base="$root/.venv/Scripts/python.exe"  # Windows (Git Bash)
[ -x "$base" ] || { echo "no .venv: run packaging/setup.sh first" >&2; exit 1; }
echo "installing the app's locked packages and PyInstaller into $out/venv"
UV_PROJECT_ENVIRONMENT="$out/venv" UV_PYTHON_DOWNLOADS=never \
  UV_PYTHON="$("$base" -c 'import sys; print(sys._base_executable)')" \
  "$uv" sync --frozen --quiet --extra bundle
python="$out/venv/bin/python"
[ -x "$python" ] || python="$out/venv/Scripts/python.exe"

echo "building the bundle into $out/dist (takes a few minutes)"
started=$SECONDS
# PyInstaller's INFO lines are many; its warnings and errors still show, and the full log is kept.
if ! "$python" -m PyInstaller --noconfirm --clean --log-level WARN \
     --distpath "$out/dist" --workpath "$out/work" packaging/physgrade.spec \
     > "$out/pyinstaller.log" 2>&1; then
  tail -n 40 "$out/pyinstaller.log" >&2
  echo "the build failed (the whole log: $out/pyinstaller.log)" >&2
  exit 1
fi
echo "built in $((SECONDS - started)) s"

bundle="$out/dist/physgrade"
executable="$bundle/physgrade"
[ -x "$executable" ] || executable="$bundle/physgrade-cli.exe"
[ -x "$executable" ] || { echo "the build made no executable in $bundle" >&2; exit 1; }

echo
echo "size on disk: $(du -sh "$bundle" | cut -f1)  ($bundle)"
internal="$bundle/_internal"
# (sorted in full before head stops reading: no broken pipe under pipefail)
megabytes() { sort -rn | awk 'NR <= 12 { size = $1; $1 = ""; printf "  %8.1f MB %s\n", size / 1024, $0 }'; }
echo "largest parts (folders and files in _internal):"
( cd "$internal" && du -s -k -- * | megabytes )
echo "largest files:"
( cd "$internal" && find . -type f -exec du -k {} + | sed 's| \./| |' | megabytes )

if [ "$smoke" = 1 ]; then
  echo
  scratch="$(mktemp -d)"
  trap 'rm -rf "$scratch"' EXIT
  mkdir -p "$scratch/home" "$scratch/tmp"
  # The smoke run's own home and per-user folders: the user's demo and settings are untouched.
  run=(env HOME="$scratch/home" XDG_CONFIG_HOME="$scratch/home/.config"
       XDG_CACHE_HOME="$scratch/home/.cache" XDG_DATA_HOME="$scratch/home/.local/share"
       XDG_STATE_HOME="$scratch/home/.local/state" TMPDIR="$scratch/tmp"
       "$executable" demo --db "$scratch/demo.physgrade" --smoke "$out/smoke.png")
  # As root (containers, CI) QtWebEngine's sandbox cannot start: physgrade_ui.reading_view
  # turns it off itself, as it does out of a bundle.
  if [ "$(uname)" = Linux ] && [ -z "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]; then
    command -v xvfb-run >/dev/null 2>&1 ||
      { echo "no display and no xvfb-run (apt-get install xvfb) for the smoke test" >&2; exit 1; }
    run=(xvfb-run -a -s "-screen 0 1440x900x24" "${run[@]}")
  fi
  echo "smoke test: physgrade demo --db $scratch/demo.physgrade --smoke $out/smoke.png"
  started=$SECONDS
  command -v timeout >/dev/null 2>&1 && run=(timeout 300 "${run[@]}")  # not on macOS
  if ! "${run[@]}"; then
    echo "the smoke test failed: the bundle did not render the demo" >&2
    exit 1
  fi
  [ -s "$out/smoke.png" ] || { echo "the smoke test saved no screenshot" >&2; exit 1; }
  echo "smoke test passed in $((SECONDS - started)) s: $out/smoke.png"
fi
