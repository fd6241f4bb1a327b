"""The app's look in one place: neutral greys, one accent colour, readable type, room to breathe.

Kept in code (not in ``resources/``) so that widgets and the HTML of the reading pane share the
same few colours.
"""

from __future__ import annotations

from PySide6.QtGui import QColor, QFont, QPalette
from PySide6.QtWidgets import QApplication

ACCENT = "#2d6cb5"
TEXT = "#1f2328"
MUTED = "#5f6873"
BORDER = "#d5d9de"
SURFACE = "#ffffff"
ALTERNATE = "#f7f8fa"
BACKGROUND = "#f4f5f7"
GOOD = "#1f7a4d"
GOOD_BACKGROUND = "#e3f3ea"
WARN = "#8a5a00"
WARN_BACKGROUND = "#fbefd6"
BAD = "#b3261e"
BAD_BACKGROUND = "#fbe6e4"
#: Words one text of a duplicate pair has and the other has not.
DIFF_BACKGROUND = "#fde3a7"

BASE_POINT_SIZE = 10
HEADER_POINT_SIZE = 9

STYLESHEET = f"""
QLabel[role="muted"] {{ color: {MUTED}; }}
QLabel[role="title"] {{ font-size: 15pt; font-weight: 600; }}
QLabel[role="section"] {{ font-size: 11pt; font-weight: 600; padding-top: 6px; }}
QLabel[role="number"] {{ font-size: 20pt; font-weight: 600; color: {TEXT}; }}
QLabel[role="error"] {{ color: #b3261e; }}
QFrame[role="card"] {{
    background: {SURFACE}; border: 1px solid {BORDER}; border-radius: 6px;
}}
QListWidget#navigation {{
    background: {SURFACE}; border: none; border-right: 1px solid {BORDER};
    padding-top: 8px; outline: none;
}}
QListWidget#navigation::item {{ padding: 9px 16px; border-radius: 4px; margin: 1px 6px; }}
QListWidget#navigation::item:selected {{ background: {ACCENT}; color: white; }}
QListWidget#navigation::item:hover:!selected {{ background: {BACKGROUND}; }}
QTableView, QTableWidget, QTextBrowser, QPlainTextEdit, QLineEdit, QComboBox {{
    background: {SURFACE}; border: 1px solid {BORDER}; border-radius: 4px;
    selection-background-color: {ACCENT}; selection-color: white;
}}
QLineEdit, QComboBox {{ padding: 5px 7px; }}
QLineEdit:focus, QPlainTextEdit:focus, QComboBox:focus {{ border: 1px solid {ACCENT}; }}
QTableView {{ gridline-color: {BORDER}; }}
QTableView::item {{ padding: 0 3px; }}
QHeaderView::section {{
    background: {BACKGROUND}; color: {MUTED}; border: none;
    border-bottom: 1px solid {BORDER}; padding: 6px 6px; font-weight: 600;
    font-size: {HEADER_POINT_SIZE}pt;
}}
QPushButton {{
    background: {SURFACE}; border: 1px solid {BORDER}; border-radius: 4px; padding: 6px 16px;
}}
QPushButton:hover {{ border-color: {ACCENT}; }}
QPushButton:default, QPushButton[role="primary"] {{
    background: {ACCENT}; color: white; border-color: {ACCENT};
}}
QProgressBar {{
    background: {SURFACE}; border: 1px solid {BORDER}; border-radius: 4px;
    min-height: 12px; max-height: 12px; text-align: center;
}}
QProgressBar::chunk {{ background: {ACCENT}; border-radius: 3px; }}
QSplitter::handle {{ background: {BACKGROUND}; }}
QFrame[role="criterion"] {{
    background: {SURFACE}; border: 1px solid {BORDER}; border-radius: 6px;
}}
QFrame[role="criterion"][current="true"] {{ border: 2px solid {ACCENT}; background: #f3f7fc; }}
QLabel[role="criterion-key"] {{ color: {ACCENT}; font-weight: 700; font-family: monospace; }}
QLabel[role="criterion-name"] {{ font-weight: 600; }}
QLabel[role="step-mark"] {{ font-weight: 600; color: {TEXT}; }}
QLabel[role="step-mark"][state="none"] {{ font-weight: normal; color: {MUTED}; }}
QLabel[role="step-mark"][state="wrong"] {{ color: {BAD}; }}
QLabel[role="step-mark"][state="right"] {{ color: {GOOD}; }}
QLabel[role="total"] {{ font-size: 16pt; font-weight: 600; color: {TEXT}; }}
QLabel[role="key"] {{
    font-family: monospace; font-weight: 700; color: {ACCENT}; padding-right: 6px;
}}
QPushButton[role="value"] {{
    min-width: 34px; max-width: 46px; padding: 4px 4px; font-weight: 600;
}}
QPushButton[role="value"]:checked {{
    background: {ACCENT}; color: white; border-color: {ACCENT};
}}
QPushButton[role="small"] {{ padding: 4px 8px; }}
QPushButton[role="small"]:checked {{ background: #e6eef8; border-color: {ACCENT}; color: {ACCENT}; }}
QWidget#reading-bar {{ border-bottom: 1px solid {BORDER}; }}
QProgressBar[role="pace"] {{ min-height: 18px; max-height: 18px; font-size: 9pt; }}
QToolButton {{
    background: {SURFACE}; border: 1px solid {BORDER}; border-radius: 4px; padding: 4px 6px;
}}
QToolButton:hover {{ border-color: {ACCENT}; }}
QToolButton[active="true"] {{ background: #e6eef8; border-color: {ACCENT}; color: {ACCENT}; }}
QToolButton::menu-indicator {{ image: none; width: 0; }}
QStatusBar {{ color: {MUTED}; }}
QPushButton:disabled, QPushButton:default:disabled, QToolButton:disabled, QComboBox:disabled,
QSpinBox:disabled, QLineEdit:disabled {{
    background: {BACKGROUND}; color: {MUTED}; border-color: {BORDER};
}}
QLabel:disabled, QCheckBox:disabled {{ color: {MUTED}; }}
QLabel[role="provider"] {{
    font-size: 12pt; font-weight: 700; color: {ACCENT}; background: #e6eef8;
    border: 1px solid {ACCENT}; border-radius: 4px; padding: 2px 12px;
}}
QLabel[role="provider"][gpu="true"] {{
    color: {GOOD}; background: {GOOD_BACKGROUND}; border-color: {GOOD};
}}
QLabel[role="decision"] {{ font-weight: 600; padding: 2px 10px; border-radius: 4px; }}
QLabel[role="decision"][decision="none"] {{ color: {MUTED}; background: {BACKGROUND}; }}
QLabel[role="decision"][decision="confirmed"] {{ color: {GOOD}; background: {GOOD_BACKGROUND}; }}
QLabel[role="decision"][decision="rejected"] {{ color: {BAD}; background: {BAD_BACKGROUND}; }}
QLabel[role="alias"] {{ font-size: 16pt; font-weight: 700; color: {TEXT}; }}
QLabel[role="person"] {{ font-weight: 600; color: {ACCENT}; }}
QLabel[role="judge-score"] {{
    font-family: monospace; font-weight: 700; color: {TEXT}; background: {BACKGROUND};
    border: 1px solid {BORDER}; border-radius: 4px; padding: 2px 6px;
}}
QLabel[role="rationale"] {{ color: {MUTED}; font-style: italic; padding-left: 46px; }}
QLabel[role="review-state"] {{ font-weight: 600; padding: 2px 10px; border-radius: 4px; }}
QLabel[role="review-state"][state="open"] {{ color: {WARN}; background: {WARN_BACKGROUND}; }}
QLabel[role="review-state"][state="done"] {{ color: {GOOD}; background: {GOOD_BACKGROUND}; }}
QLabel[role="finished"] {{
    color: {GOOD}; background: {GOOD_BACKGROUND}; border-radius: 4px; padding: 6px 10px;
    font-weight: 600;
}}
QPushButton[role="agree"] {{
    min-width: 34px; max-width: 40px; padding: 4px 4px; font-weight: 600;
}}
QPushButton[role="agree"][value="2"]:checked, QPushButton[role="verdict"][verdict="correct"]:checked {{
    background: {GOOD}; color: white; border-color: {GOOD};
}}
QPushButton[role="agree"][value="1"]:checked, QPushButton[role="verdict"][verdict="lenient"]:checked {{
    background: {WARN}; color: white; border-color: {WARN};
}}
QPushButton[role="agree"][value="0"]:checked, QPushButton[role="verdict"][verdict="strict"]:checked {{
    background: {BAD}; color: white; border-color: {BAD};
}}
QPushButton[role="verdict"] {{ padding: 7px 10px; font-weight: 600; }}
QLabel[role="picker-title"] {{ font-weight: 600; color: {MUTED}; }}
QPushButton[role="bloom"] {{
    padding: 9px 10px; font-size: 11pt; font-weight: 600; text-align: left;
}}
QPushButton[role="bloom"][suggested="true"] {{
    background: {WARN_BACKGROUND}; border: 2px dashed {WARN}; color: {WARN};
}}
QPushButton[role="bloom"]:checked, QPushButton[role="bloom"][suggested="true"]:checked {{
    background: {ACCENT}; color: white; border: 2px solid {ACCENT};
}}
QFrame#bloom_pickers[adjudicating="true"] {{ border: 2px solid {WARN}; }}
QFrame#bloom_pickers[adjudicating="true"] QPushButton[role="bloom"]:checked {{
    background: {GOOD}; border-color: {GOOD};
}}
QFrame[role="suggestion"] {{
    background: {WARN_BACKGROUND}; border: 1px dashed {WARN}; border-radius: 6px;
}}
QLabel[role="suggestion-title"] {{ color: {WARN}; font-weight: 600; }}
QLabel[role="suggestion-value"] {{ font-size: 14pt; font-weight: 700; color: {TEXT}; }}
QLabel[role="rationale-plain"] {{ color: {MUTED}; font-style: italic; }}
QLabel[role="adjudicating"] {{
    color: {WARN}; background: {WARN_BACKGROUND}; border: 1px solid {WARN}; border-radius: 4px;
    padding: 8px 10px; font-weight: 600;
}}
QLabel[role="bloom-state"] {{ font-weight: 600; padding: 2px 10px; border-radius: 4px; }}
QLabel[role="bloom-state"][state="open"] {{ color: {MUTED}; background: {BACKGROUND}; }}
QLabel[role="bloom-state"][state="done"] {{ color: {GOOD}; background: {GOOD_BACKGROUND}; }}
QLabel[role="position"] {{ font-weight: 600; color: {TEXT}; }}
QLabel[role="label-value"] {{ font-weight: 600; }}
QLabel[role="final-name"] {{ color: {GOOD}; font-weight: 700; }}
QLabel[role="final-value"] {{ color: {GOOD}; font-weight: 700; }}
QTreeWidget#clusters {{ background: {SURFACE}; border: 1px solid {BORDER}; border-radius: 4px; }}
QTreeWidget#clusters::item {{ padding: 3px 2px; }}
QLabel[role="level-value"] {{
    font-family: monospace; font-weight: 700; font-size: 9pt; color: {ACCENT};
    border-radius: 3px; padding: 0 3px; min-width: 22px;
}}
QLabel[role="level-value"][chosen="true"] {{ background: {ACCENT}; color: white; }}
QLabel[role="criterion-help"] {{ font-size: 9pt; color: {MUTED}; }}
QLabel[role="level"] {{ font-size: 9pt; color: {TEXT}; }}
QLabel[role="level"][chosen="true"] {{ color: {ACCENT}; }}
QLabel[role="refusal"] {{
    color: {WARN}; background: {WARN_BACKGROUND}; border: 1px solid {WARN}; border-radius: 4px;
    padding: 1px 6px; font-size: 9pt; font-weight: 600;
}}
QListWidget#disputes::item {{ padding: 6px 8px; border-bottom: 1px solid {BORDER}; }}
QListWidget#disputes::item:selected {{ background: {ACCENT}; color: white; }}
QLabel[role="decision-head"] {{
    color: {MUTED}; font-weight: 600; font-size: {HEADER_POINT_SIZE}pt; padding: 4px 8px;
    border-bottom: 2px solid {BORDER};
}}
QLabel[role="decision-cell"] {{
    background: {SURFACE}; padding: 4px 8px; border-top: 1px solid transparent;
    border-bottom: 1px solid {BORDER};
}}
QLabel[role="decision-cell"][column="criterion"] {{ border-left: 3px solid transparent; }}
QLabel[role="decision-cell"][disputed="true"] {{ background: {WARN_BACKGROUND}; }}
QLabel[role="decision-cell"][current="true"] {{
    border-top: 1px solid {ACCENT}; border-bottom: 1px solid {ACCENT};
}}
QLabel[role="decision-cell"][current="true"][column="criterion"] {{
    border-left: 3px solid {ACCENT};
}}
QLabel[role="decision-cell"][current="true"][disputed="false"] {{ background: #eef4fb; }}
QLabel[role="decision-head"][column="final"], QLabel[role="decision-cell"][column="final"] {{
    border-left: 1px solid {BORDER};
}}
"""


def apply(app: QApplication) -> None:
    """Give the whole application the house style (Fusion, so every platform looks alike)."""
    app.setStyle("Fusion")
    palette = QPalette(app.palette())
    role = QPalette.ColorRole
    for color_role, color in ((role.Window, BACKGROUND), (role.Base, SURFACE),
                              (role.AlternateBase, ALTERNATE), (role.Highlight, ACCENT),
                              (role.HighlightedText, "#ffffff"), (role.Text, TEXT),
                              (role.WindowText, TEXT), (role.Button, SURFACE),
                              (role.ButtonText, TEXT), (role.PlaceholderText, MUTED)):
        palette.setColor(color_role, QColor(color))
    app.setPalette(palette)
    font = QFont(app.font())
    font.setPointSize(BASE_POINT_SIZE)
    app.setFont(font)
    app.setStyleSheet(STYLESHEET)
