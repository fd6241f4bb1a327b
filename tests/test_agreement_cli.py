"""``physgrade agreement FILE.csv``: the JSON and the table users read, and every refused input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from physgrade.cli import build_parser, main
from physgrade.stats.agreement import COEFFICIENTS, SCALES

# Krippendorff (2011), 4 coders x 12 units, one row per unit; an empty cell is a missing rating.
KRIPPENDORFF_CSV = """unit,A,B,C,D
u1,1,1,,1
u2,2,2,3,2
u3,3,3,3,3
u4,3,3,3,3
u5,2,2,2,2
u6,1,2,3,4
u7,4,4,4,4
u8,1,1,2,1
u9,2,2,2,2
u10,,5,5,5
u11,,,1,1
u12,,3,,
"""
PUBLISHED_ALPHA = {"nominal": 0.743, "ordinal": 0.815, "interval": 0.849, "ratio": 0.797}


def write(tmp_path: Path, text: str, name: str = "ratings.csv") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def run(capsys, *args) -> tuple[int, str, str]:
    code = main(["agreement", *map(str, args)])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("scale", SCALES)
def test_json_on_krippendorffs_data(tmp_path, capsys, scale):
    path = write(tmp_path, KRIPPENDORFF_CSV)
    code, out, err = run(capsys, path, "--scale", scale, "--id-column", "unit", "--json")
    assert code == 0 and err == ""
    report = json.loads(out)
    assert set(report) == {"n_items", "n_raters", "scale", "coefficients"}
    assert (report["n_items"], report["n_raters"], report["scale"]) == (12, 4, scale)
    assert tuple(report["coefficients"]) == COEFFICIENTS
    for name, coefficient in report["coefficients"].items():
        assert set(coefficient) == {"value", "ci95", "n", "reason"}, name
        if coefficient["value"] is None:
            assert coefficient["ci95"] is None and coefficient["reason"], name
        else:
            assert len(coefficient["ci95"]) == 2 and coefficient["n"] == 11, name
    alpha = report["coefficients"]["krippendorff_alpha"]
    assert alpha["value"] == pytest.approx(PUBLISHED_ALPHA[scale], abs=5e-4)
    assert alpha["ci95"][0] < alpha["value"] <= alpha["ci95"][1]
    assert report["coefficients"]["gwet_ac1"]["value"] == pytest.approx(0.77544, abs=5e-6)  # irrCAC
    assert "2 raters" in report["coefficients"]["cohen_kappa"]["reason"]


def test_text_table(tmp_path, capsys):
    path = write(tmp_path, KRIPPENDORFF_CSV)
    code, out, err = run(capsys, path, "--scale", "ordinal", "--id-column", "unit")
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert lines[0] == f"{path}: 12 items, 4 raters, ordinal scale"
    assert lines[1].split() == ["coefficient", "value", "95%", "CI", "n", "note"]
    rows = {line.split()[0]: line for line in lines[2:]}
    assert tuple(rows) == COEFFICIENTS
    assert rows["krippendorff_alpha"].split()[1] == "0.815"
    assert rows["gwet_ac1"].split()[1:5] == ["0.775", "[0.461,", "1.000]", "11"]
    assert "n/a" in rows["cohen_kappa"] and "exactly 2 raters, not 4" in rows["cohen_kappa"]
    note_column = lines[1].index("note")
    assert rows["cohen_kappa"].index("Cohen") == note_column  # notes line up under their heading


def test_two_raters_text_ratings_and_na_cells(tmp_path, capsys):
    words = write(tmp_path, "id,human,judge\n1,yes,yes\n2,yes,no\n3,no,no\n4,N/A,yes\n5,yes,yes\n",
                  "words.csv")
    numbers = write(tmp_path, "id,human,judge\n1,1,1\n2,1,0\n3,0,0\n4,,1\n5,1,1\n", "numbers.csv")
    reports = []
    for path in (words, numbers):
        code, out, _ = run(capsys, path, "--scale", "nominal", "--id-column", "id", "--json")
        assert code == 0
        reports.append(json.loads(out))
    assert reports[0] == reports[1]
    assert reports[0]["coefficients"]["cohen_kappa"]["n"] == 4
    assert reports[0]["coefficients"]["gwet_ac2_linear"]["reason"].endswith("nominal")


def test_categories_and_seed(tmp_path, capsys):
    path = write(tmp_path, "a,b\n0,0\n0,0\n1,1\n0,1\n1,1\n0,0\n")
    _, out, _ = run(capsys, path, "--scale", "ordinal", "--json")
    _, on_scale, _ = run(capsys, path, "--scale", "ordinal", "--categories", "0,1,2", "--json")
    observed, full = (json.loads(text)["coefficients"] for text in (out, on_scale))
    assert full["gwet_ac1"]["value"] > observed["gwet_ac1"]["value"]  # a third category lowers p_e
    assert full["cohen_kappa"]["value"] == observed["cohen_kappa"]["value"]
    _, again, _ = run(capsys, path, "--scale", "ordinal", "--json")
    assert again == out
    _, seeded, _ = run(capsys, path, "--scale", "ordinal", "--seed", "3", "--json")
    assert json.loads(seeded)["coefficients"]["krippendorff_alpha"] != observed["krippendorff_alpha"]
    _, none, _ = run(capsys, path, "--scale", "ordinal", "--resamples", "0", "--json")
    alpha = json.loads(none)["coefficients"]["krippendorff_alpha"]
    assert alpha["value"] == observed["krippendorff_alpha"]["value"] and alpha["ci95"] is None


@pytest.mark.parametrize("text, args, message", [
    ("id,judge-a,judge-b\n1,1,1\n2,2,2\n3,0,1\n4,1,1\n5,2,1\n6,1,high\n7,0,0\n", [],
     '{path}, line 7, column "judge-b": "high" is not a number (ordinal scales need numeric ratings)'),
    ("id,judge-a\n1,1\n2,2\n", [],
     "{path}: agreement needs at least 2 rater columns, found 1 (judge-a)"),
    ("item,a,b\n1,1,1\n", [],
     '{path}: there is no column "id" to identify items; the columns are item, a, b'),
    ("", [], "{path} is empty: it needs a header row naming the raters"),
    ("id,a,a\n1,1,1\n", [], '{path}, line 1: column "a" appears twice in the header'),
    ("id,a,\n1,1,1\n", [], "{path}, line 1: column 3 has no name"),
    ("id,a,b\n1,1,1\n2,1\n", [], "{path}, line 3: 2 cells, but the header has 3 columns"),
    ("id,a,b\n1,1,1\n2,1,3\n", ["--categories", "0,1,2"],
     '{path}, line 3, column "b": 3 is not one of the categories 0, 1, 2'),
    ("id,a,b\n1,1,1\n", ["--categories", "low,high"],
     '{path}: category "low" is not a number (ordinal scales need numeric ratings)'),
], ids=["not a number", "one rater", "unknown id column", "empty file", "duplicate header",
        "unnamed column", "short row", "outside the categories", "text categories"])
def test_bad_input_is_refused_with_its_place(tmp_path, capsys, text, args, message):
    path = write(tmp_path, text)
    code, out, err = run(capsys, path, "--scale", "ordinal", "--id-column", "id", *args)
    assert code == 1 and out == ""
    assert err == f"physgrade: {message.format(path=path)}\n"


def test_nominal_text_outside_the_categories(tmp_path, capsys):
    path = write(tmp_path, "a,b\nyes,yes\nno,maybe\n")
    code, out, err = run(capsys, path, "--scale", "nominal", "--categories", "yes,no")
    assert code == 1 and out == ""
    assert err == f'physgrade: {path}, line 3, column "b": "maybe" is not one of the categories yes, no\n'


def test_non_utf8_file(tmp_path, capsys):
    path = tmp_path / "ratings.csv"
    path.write_bytes(b"a,b\n\xff,1\n")
    code, out, err = run(capsys, path, "--scale", "nominal")
    assert code == 1 and out == "" and err.startswith(f"physgrade: {path} is not UTF-8 text")


def test_scale_choices_are_the_library_scales():
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command").choices["agreement"]
    assert tuple(next(a for a in sub._actions if a.dest == "scale").choices) == SCALES


def test_real_process(tmp_path):
    path = write(tmp_path, KRIPPENDORFF_CSV)
    result = subprocess.run([sys.executable, "-m", "physgrade.cli", "agreement", str(path), "--scale",
                             "interval", "--id-column", "unit", "--json"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    alpha = json.loads(result.stdout)["coefficients"]["krippendorff_alpha"]["value"]
    assert alpha == pytest.approx(0.849, abs=5e-4)
    bad = subprocess.run([sys.executable, "-m", "physgrade.cli", "agreement", str(path), "--scale",
                          "interval"], capture_output=True, text=True, timeout=120)
    assert bad.returncode == 1 and bad.stdout == ""
    assert bad.stderr == f'physgrade: {path}, line 2, column "unit": "u1" is not a number ' \
                         "(interval scales need numeric ratings)\n"
