"""physgrade: grade language-model physics solutions with the P-REFS rubric.

The core library: project store, rubrics, imports and exports, statistics and the command line.
It never imports Qt; the desktop application in ``physgrade_ui`` is a thin layer over it.
"""

__version__ = "0.1.0"
