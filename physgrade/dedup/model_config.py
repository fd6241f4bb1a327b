"""A model folder's settings, read or refused: the error every step of preparing a model raises,
and the reading of its JSON files, shared by :mod:`physgrade.dedup.models` and the exporter it
calls (:mod:`physgrade.dedup.bert_onnx`), which would otherwise import each other."""

from __future__ import annotations

import json
from pathlib import Path


class ModelError(Exception):
    """A model that cannot be found or used; the message names the path and what is missing."""


def read_json(path: Path) -> dict:
    """A model's JSON settings file as a dict: empty when absent, refused when unreadable."""
    try:
        loaded = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise ModelError(f"{path}: cannot be read ({exc})") from exc
    return loaded if isinstance(loaded, dict) else {}
