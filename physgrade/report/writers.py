"""A report on disk: one self-contained HTML file, a CSV file per table, every number in JSON.

The HTML shows each table as readers see it (people with few grades folded into one row); the
CSV and JSON files keep every rater's own row.

The HTML opens offline with its plots embedded; it holds no script, and every text in it
(model names, rater names, notes from imported files) is escaped.
"""

from __future__ import annotations

import base64
import csv
import html
import json
from pathlib import Path
from typing import Any, Callable, Iterable

from physgrade.files import write_whole
from physgrade.report.model import Figure, Report, Table, cell_parts
from physgrade.stats.estimate import Estimate
from physgrade.tasks import Task

FORMATS = ("html", "csv", "json")
HTML_NAME, CSV_FOLDER, JSON_NAME = "report.html", "csv", "report.json"

_CSS = """
body { font: 14px/1.45 "DejaVu Sans", "Segoe UI", Helvetica, Arial, sans-serif; color: #1f2328;
       margin: 0 auto; max-width: 1200px; padding: 24px 32px 64px; }
h1 { font-size: 24px; margin-bottom: 4px; } h2 { font-size: 19px; margin-top: 40px;
     border-bottom: 1px solid #d5d9de; padding-bottom: 4px; }
h3 { font-size: 15px; margin: 24px 0 6px; }
.muted, .note, caption { color: #5f6873; } .note { font-size: 12px; margin: 4px 0 0; }
table { border-collapse: collapse; font-size: 12.5px; margin: 6px 0; }
th, td { padding: 4px 10px; border-bottom: 1px solid #e4e7eb; text-align: left;
         vertical-align: top; }
.whole { white-space: nowrap; }
th { background: #f4f5f7; color: #5f6873; font-weight: 600; }
td.number, th.number { text-align: right; font-variant-numeric: tabular-nums; }
tr:nth-child(even) td { background: #fafbfc; }
figure { margin: 16px 0; } figure img { max-width: 100%; height: auto; }
figcaption { color: #5f6873; font-size: 12px; max-width: 900px; }
dl { display: grid; grid-template-columns: max-content auto; gap: 2px 16px; font-size: 13px; }
dt { color: #5f6873; } dd { margin: 0; }
nav ul { padding-left: 20px; list-style: none; } .scroll { overflow-x: auto; }
td.na { color: #5f6873; font-size: 11.5px; white-space: normal; min-width: 9em; }
"""


def write_report(report: Report, out_dir: str | Path, formats: Iterable[str] = FORMATS,
                 task: Task | None = None) -> list[Path]:
    """Write the chosen formats into ``out_dir`` (created if needed); returns what was written.

    Each file is written under a temporary name and moved into place, so a failed or
    cancelled export never leaves a half-written report behind.
    """
    task = task or Task()
    chosen = check_formats(formats)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    writers: dict[str, Callable[[Report, Path], list[Path]]] = {
        "html": _write_html, "csv": _write_csv, "json": _write_json}
    written: list[Path] = []
    for done, name in enumerate(chosen):
        task.report(done, len(chosen), f"writing {name.upper()}")
        written += writers[name](report, out)
    task.report(len(chosen), len(chosen), "done")
    return written


def check_formats(formats: Iterable[str]) -> list[str]:
    """The formats asked for, each once, in order; unknown ones are refused by name."""
    chosen = list(dict.fromkeys(f.strip().lower() for f in formats if f.strip()))
    unknown = [f for f in chosen if f not in FORMATS]
    if unknown:
        raise ValueError(f"report formats are {', '.join(FORMATS)}; not {', '.join(unknown)}")
    if not chosen:
        raise ValueError("choose at least one report format")
    return chosen


# -- JSON ---------------------------------------------------------------------------------------


def report_dict(report: Report) -> dict[str, Any]:
    """Every number of the report (figures are named; their numbers are in the tables)."""
    return {"title": report.title, "settings": report.settings, "sections": [
        {"title": s.title, "intro": s.intro, "tables": [t.as_dict() for t in s.tables],
         "figures": [{"name": f.name, "title": f.title, "caption": f.caption}
                     for f in s.figures]} for s in report.sections]}


def _write_json(report: Report, out: Path) -> list[Path]:
    text = json.dumps(report_dict(report), indent=1, ensure_ascii=False, allow_nan=False)
    return [write_whole(out / JSON_NAME, lambda stream: stream.write(text + "\n"))]


# -- CSV ----------------------------------------------------------------------------------------


def csv_rows(table: Table) -> list[list[Any]]:
    """The table with a header; an estimate fills five columns: value, the two ends of its
    95% interval, its n, and why it could not be computed (if so)."""
    estimated = [any(isinstance(row[i], Estimate) for row in table.rows)
                 for i in range(len(table.columns))]
    header: list[Any] = []
    for column, wide in zip(table.columns, estimated):
        header += [column, f"{column} ci95 low", f"{column} ci95 high", f"{column} n",
                   f"{column} note"] if wide else [column]
    rows = [header]
    for row in table.rows:
        out: list[Any] = []
        for cell, wide in zip(row, estimated):
            if not wide:
                out.append("" if cell is None else cell)
            elif isinstance(cell, Estimate):
                low, high = cell.ci95 if cell.ci95 else ("", "")
                out += ["" if cell.value is None else cell.value, low, high, cell.n,
                        cell.reason or ""]
            else:
                out += ["" if cell is None else cell, "", "", "", ""]
        rows.append(out)
    return rows


def _write_csv(report: Report, out: Path) -> list[Path]:
    folder = out / CSV_FOLDER
    folder.mkdir(exist_ok=True)
    return [write_whole(folder / f"{table.name}.csv", _csv_writer(table))
            for table in report.tables()]


def _csv_writer(table: Table) -> Callable[[Any], None]:
    return lambda stream: csv.writer(stream).writerows(csv_rows(table))


# -- HTML ---------------------------------------------------------------------------------------


#: How the report's settings are labelled for readers (the JSON keeps the keys).
SETTING_LABELS = {"project": "Project", "created_at": "Created", "physgrade": "physgrade version",
                  "filter": "Filter", "responses": "Responses covered", "judges": "Judges",
                  "graders": "Graders", "analyses_rater": "Study analyses by",
                  "bootstrap_resamples": "Bootstrap resamples", "seed": "Random seed",
                  "consensus": "Human consensus", "consensus_values": "Consensus values",
                  "consensus_adjudicated": "Consensus values adjudicated", "n/a": "N/A",
                  "min_grades": "Own rows from (grades)", "folded": "Folded into others"}


def _html_cell(table: Table, row: int, column: int, numeric: bool) -> str:
    """A cell; an estimate that says why it has no value or no interval says so on hover."""
    cell = table.rows[row][column]
    kind = ("na" if isinstance(cell, Estimate) and cell.value is None
            else "number" if numeric else "")
    why = cell.reason if isinstance(cell, Estimate) and cell.reason else ""
    attributes = (f" class={kind}" if kind else "") + (
        f" title='{html.escape(why, quote=True)}'" if why else "")
    return f"<td{attributes}>{_wrapping(table.text(row, column))}</td>"


def _wrapping(text: str) -> str:
    """``text`` escaped, its :func:`~physgrade.report.model.cell_parts` that must stay whole
    marked so (a narrow window wraps a table rather than scrolling it sideways)."""
    return "".join(f"<span class=whole>{html.escape(part)}</span>" if whole
                   else html.escape(part) for part, whole in cell_parts(text))


def _html_figure(figure: Figure) -> str:
    data = base64.b64encode(figure.png).decode("ascii")
    return (f"<figure><img alt='{html.escape(figure.title, quote=True)}' "
            f"src='data:image/png;base64,{data}'><figcaption><b>{html.escape(figure.title)}.</b> "
            f"{html.escape(figure.caption)}</figcaption></figure>")


def _html_table(table: Table) -> str:
    numeric = [table.numeric(c) for c in range(len(table.columns))]
    head = "".join(f"<th{' class=number' if n else ''}>{html.escape(c)}</th>"
                   for c, n in zip(table.columns, numeric))
    body = "".join("<tr>" + "".join(_html_cell(table, r, c, numeric[c])
                                    for c in range(len(table.columns))) + "</tr>"
                   for r in range(len(table.rows)))
    if not table.rows:
        body = f"<tr><td colspan={len(table.columns)} class=muted>No data.</td></tr>"
    note = f"<p class=note>{html.escape(table.note)}</p>" if table.note else ""
    return (f"<h3 id='{table.name}'>{html.escape(table.title)}</h3><div class=scroll><table>"
            f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>{note}")


def report_html(report: Report) -> str:
    """The report as one HTML document with its figures embedded as PNG data."""
    settings = "".join(f"<dt>{html.escape(SETTING_LABELS.get(k, k))}</dt>"
                       f"<dd>{html.escape(_setting(v))}</dd>" for k, v in report.settings.items())
    contents = "".join(f"<li><a href='#section-{i}'>{html.escape(s.title)}</a></li>"
                       for i, s in enumerate(report.sections))
    parts = [f"<!DOCTYPE html><html lang=en><head><meta charset=utf-8>"
             f"<meta name=viewport content='width=device-width, initial-scale=1'>"
             f"<title>{html.escape(report.title)}</title><style>{_CSS}</style></head><body>"
             f"<h1>{html.escape(report.title)}</h1><dl>{settings}</dl>"
             f"<nav><ul>{contents}</ul></nav>"]
    for i, section in enumerate(report.sections):
        parts.append(f"<h2 id='section-{i}'>{html.escape(section.title)}</h2>")
        if section.intro:
            parts.append(f"<p>{html.escape(section.intro)}</p>")
        for table in section.tables:
            parts.append(_html_table(table.shown()))
            parts.extend(_html_figure(figure) for figure in section.figures_after(table))
        parts.extend(_html_figure(figure) for figure in section.figures_after(None))
    parts.append("</body></html>\n")
    return "".join(parts)


def _setting(value: Any) -> str:
    if isinstance(value, dict):
        return "; ".join(f"{k}: {', '.join(v) if isinstance(v, list) else v}"
                         for k, v in value.items()) or "none"
    if isinstance(value, list):
        return ", ".join(str(v) for v in value) or "none"
    return "—" if value is None else str(value)


def _write_html(report: Report, out: Path) -> list[Path]:
    text = report_html(report)
    return [write_whole(out / HTML_NAME, lambda stream: stream.write(text))]
