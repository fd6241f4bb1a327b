#!/usr/bin/env bash
# Set physgrade up on this machine, from nothing: the system libraries Qt needs (on Debian or
# Ubuntu, through apt-get), then a virtual environment in .venv with physgrade installed in it.
#   packaging/setup.sh          the app
#   packaging/setup.sh --test   the app plus what the tests and checks need (pytest, Xvfb,
#                               xdotool, ruff, mypy, PyTorch for the reference embeddings)
#   packaging/setup.sh --export the app plus sentence-transformers and PyTorch, to use other
#                               embedding models than BERT ones (about 3 GB more on Linux)
# Python's packages are the exact set locked in uv.lock.
# Running it again is cheap: it brings .venv to the lock, adding what is missing and removing
# what the lock does not name.
set -euo pipefail
cd "$(dirname "$0")/.."

with_tests=0
with_export=0
case "${1:-}" in
  --test) with_tests=1 ;;
  --export) with_export=1 ;;
  "") ;;
  *) echo "usage: packaging/setup.sh [--test | --export]" >&2; exit 2 ;;
esac

qt_libs="libxkbcommon-x11-0 libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1 libxcb-shape0
  libxcb-render-util0 libxcb-image0 libegl1 libgl1 libnss3 libxcomposite1 libxdamage1
  libxrandr2 libxtst6 libasound2 libxkbfile1 libfontconfig1 libdbus-1-3 fonts-dejavu-core"
test_tools="xvfb xdotool desktop-file-utils"
packages="$qt_libs"
[ "$with_tests" = 1 ] && packages="$packages $test_tools"

if command -v apt-get >/dev/null 2>&1; then
  missing=""
  for p in $packages; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
  done
  if [ -n "$missing" ]; then
    sudo=""
    [ "$(id -u)" != 0 ] && sudo="sudo"
    echo "installing system packages:$missing"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends $missing >/dev/null
  fi
elif [ "$(uname -s)" = Linux ]; then
  echo "note: not a Debian-like system; make sure Qt 6's X11/EGL libraries are installed" >&2
fi

python=""
for candidate in python3.11 python3.12 python3.13 python3.14 python3; do
  if command -v "$candidate" >/dev/null 2>&1 &&
     "$candidate" -c 'import sys; sys.exit(not (3, 11) <= sys.version_info < (3, 15))' 2>/dev/null; then
    python="$candidate"; break
  fi
done
[ -n "$python" ] || { echo "physgrade needs Python 3.11 to 3.14" >&2; exit 1; }

# What the locked wheels need of the system (README.md, Installing), said before uv says it in
# its own words: Qt's wheels need glibc 2.34 on x86_64 Linux and 2.39 on aarch64; ONNX Runtime
# has no wheels for Intel Macs after Python 3.13.
"$python" - <<'PY' || exit 1
import platform, sys
system, machine = platform.system(), platform.machine().lower()
if system == "Linux":
    need = {"x86_64": (2, 34), "amd64": (2, 34), "aarch64": (2, 39), "arm64": (2, 39)}.get(machine)
    libc, version = platform.libc_ver()
    have = tuple(int(part) for part in version.split(".")[:2]) if libc == "glibc" else None
    if need is None or have is None or have < need:
        sys.exit(f"physgrade's Qt needs Linux on x86_64 with glibc 2.34 or newer, or on aarch64 "
                 f"with glibc 2.39 or newer; this is {machine} with {libc or 'no glibc'} {version}")
elif system == "Darwin" and machine == "x86_64" and sys.version_info >= (3, 14):
    sys.exit("on an Intel Mac physgrade needs Python 3.11 to 3.13 (ONNX Runtime has no wheels "
             "for a newer one there)")
PY

# The exact set in uv.lock, installed by uv (a pinned copy kept in .uv/, beside the project).
uv_version=0.13.9
if ! [ -x .uv/bin/uv ] || [ "$(.uv/bin/uv --version)" != "uv $uv_version" ]; then
  rm -rf .uv
  # pip's notes about absent local mirror folders are noise; its errors still show.
  "$python" -m pip install -q --disable-pip-version-check --root-user-action=ignore \
    --target .uv "uv==$uv_version" 2>&1 | sed '/^WARNING: Location .* is ignored/d'
fi
# What uv.lock says of PyTorch: `locked --no-install-package` the flags that leave it and its CUDA
# libraries out, `locked ==` its version.
locked() {
  "$python" - "$1" <<'PY'
import re, sys, tomllib
packages = tomllib.load(open("uv.lock", "rb"))["package"]
if sys.argv[1] == "==":
    print(next(p["version"] for p in packages if p["name"] == "torch"))
else:
    print(" ".join(f"--no-install-package {p['name']}" for p in packages
                   if re.fullmatch(r"torch|triton|cuda-.*|nvidia-.*", p["name"])))
PY
}
export UV_PROJECT_ENVIRONMENT=.venv UV_PYTHON="$python"
echo "installing physgrade into .venv from uv.lock (the first time downloads about 740 MB)"
if [ "$with_tests" = 0 ]; then
  extras=""
  [ "$with_export" = 1 ] && extras="--extra export"
  # shellcheck disable=SC2086
  .uv/bin/uv sync --frozen --quiet $extras
else
  # The tests compare embeddings with sentence-transformers', which runs on PyTorch. PyPI's
  # Linux PyTorch is the CUDA build (about 3 GB with its NVIDIA libraries): uv installs the
  # rest of the lock, and pip installs the locked PyTorch from wherever pip is set to look,
  # a CPU build where one is at hand (PIP_FIND_LINKS, a local index), else PyPI's.
  # shellcheck disable=SC2046
  .uv/bin/uv sync --frozen --quiet --extra test $(locked --no-install-package)
  "$python" -m pip --python .venv/bin/python install -q --disable-pip-version-check \
    --root-user-action=ignore "torch==$(locked ==)" 2>&1 | sed '/^WARNING: Location .* is ignored/d'
fi
echo "ready: .venv/bin/physgrade"
