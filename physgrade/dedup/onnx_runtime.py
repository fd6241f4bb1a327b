"""ONNX Runtime, imported with its telemetry off: a module of its own, so that the engine
(:mod:`physgrade.dedup.engine`) and the model files (:mod:`physgrade.dedup.models`), which the
engine loads, both reach it without importing each other."""

from __future__ import annotations

import os
from types import ModuleType


def runtime() -> ModuleType:
    """The ``onnxruntime`` module, with its telemetry off: use it for every import of it.

    Official builds (onnxruntime-gpu 1.31 on Linux among them) keep a device id and a queue of
    usage events addressed to Microsoft in ``Microsoft/DeveloperTools/.onnxruntime`` under the
    user's cache folder (``$XDG_CACHE_HOME``, else ``~/.cache``), written as soon as the library
    loads; ``ORT_DISABLE_TELEMETRY`` set before that prevents it. Worker processes inherit the
    variable. Should something else have loaded the library first, turning events off still
    stops what would be queued.
    """
    os.environ["ORT_DISABLE_TELEMETRY"] = "1"
    import onnxruntime

    onnxruntime.disable_telemetry_events()
    return onnxruntime
