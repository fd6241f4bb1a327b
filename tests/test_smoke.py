"""``physgrade demo --smoke PNG``, the check a build runs (packaging/bundle.sh --smoke runs it
in the PyInstaller bundle): here from the virtual environment, as a real process on the suite's
virtual display."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtGui import QImage

from physgrade.cli import main
from physgrade_ui.smoke import INKED, SIZE, inked_share


def test_smoke_saves_a_screenshot_of_rendered_mathematics_and_exits_0(tmp_path: Path) -> None:
    db, png = tmp_path / "demo.physgrade", tmp_path / "shots" / "shot.png"
    config = tmp_path / "config"  # where the user's settings would be
    done = subprocess.run([sys.executable, "-m", "physgrade.cli", "demo", "--db", str(db),
                           "--smoke", str(png)], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "XDG_CONFIG_HOME": str(config)})
    assert done.returncode == 0, done.stderr
    assert f"smoke: saved {png} ({SIZE.width()}×{SIZE.height()})" in done.stdout
    assert "formulas rendered" in done.stdout
    image = QImage(str(png))
    assert (image.width(), image.height()) == (SIZE.width(), SIZE.height())
    assert inked_share(image) > 10 * INKED  # a window with text, not one colour
    # Settings of its own: the user's are neither read nor written.
    assert not list(config.rglob("*.conf"))


def test_a_blank_image_has_no_ink() -> None:
    blank = QImage(40, 30, QImage.Format.Format_RGB32)
    blank.fill(0xFFFFFF)
    assert inked_share(blank) == 0.0
    blank.setPixel(3, 4, 0x000000)
    assert inked_share(blank) == pytest.approx(1 / (40 * 30))
    assert inked_share(QImage()) == 0.0


def test_smoke_cannot_go_with_no_gui(tmp_path: Path, capsys) -> None:
    assert main(["demo", "--db", str(tmp_path / "demo.physgrade"), "--no-gui",
                 "--smoke", str(tmp_path / "shot.png")]) == 1
    assert capsys.readouterr().err == ("physgrade: --smoke opens the app; it cannot go with "
                                       "--no-gui\n")
    assert not (tmp_path / "demo.physgrade").exists()


def test_the_desktop_entry_is_valid_and_names_the_bundled_icon() -> None:
    """packaging/physgrade.desktop, as freedesktop's own validator reads it (setup.sh --test
    installs desktop-file-utils), with an icon of that name in the resources."""
    root = Path(__file__).resolve().parent.parent
    entry = root / "packaging" / "physgrade.desktop"
    checked = subprocess.run(["desktop-file-validate", str(entry)], capture_output=True, text=True)
    assert checked.returncode == 0 and not checked.stdout.strip(), checked.stdout
    fields = dict(line.split("=", 1) for line in entry.read_text().splitlines() if "=" in line)
    assert fields["Exec"].split()[0] == "physgrade"
    icon = QImage(str(root / "resources" / "icons" / f"{fields['Icon']}.png"))
    assert icon.width() == icon.height() == 256 and inked_share(icon) > 0.1
