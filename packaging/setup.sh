#!/usr/bin/env bash
# Set physgrade up on this machine, from nothing: the system libraries Qt needs (on Debian or
# Ubuntu, through apt-get), then a virtual environment in .venv with physgrade installed in it.
#   packaging/setup.sh          the app
#   packaging/setup.sh --test   the app plus what the tests and checks need (pytest, Xvfb,
#                               xdotool, ruff, mypy)
# Running it again is cheap: what is already there is kept.
set -euo pipefail
cd "$(dirname "$0")/.."

with_tests=0
case "${1:-}" in
  --test) with_tests=1 ;;
  "") ;;
  *) echo "usage: packaging/setup.sh [--test]" >&2; exit 2 ;;
esac

qt_libs="libxkbcommon-x11-0 libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1 libxcb-shape0
  libxcb-render-util0 libxcb-image0 libegl1 libgl1 libnss3 libxcomposite1 libxdamage1
  libxrandr2 libxtst6 libasound2 libxkbfile1 libfontconfig1 libdbus-1-3 fonts-dejavu-core"
test_tools="xvfb xdotool"
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
else
  echo "note: not a Debian-like system; make sure Qt 6's X11/EGL libraries are installed" >&2
fi

python=""
for candidate in python3.11 python3.12 python3.13 python3; do
  if command -v "$candidate" >/dev/null 2>&1 &&
     "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
    python="$candidate"; break
  fi
done
[ -n "$python" ] || { echo "physgrade needs Python 3.11 or newer" >&2; exit 1; }

[ -x .venv/bin/python ] || "$python" -m venv .venv
extra=""
[ "$with_tests" = 1 ] && extra="[test]"
echo "installing physgrade into .venv (the first time takes a few minutes)"
# pip's notes about absent local mirror folders are noise; its errors still show.
.venv/bin/python -m pip install -q -e ".$extra" 2>&1 | sed '/^WARNING: Location .* is ignored/d'
echo "ready: .venv/bin/physgrade"
