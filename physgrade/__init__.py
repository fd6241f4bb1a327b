"""physgrade: grade language-model physics solutions with the P-REFS rubric.

The core library: project store, rubrics, imports and exports, statistics and the command line.
It never imports Qt nor the desktop application, a thin layer over it (the ``ui`` folder) that
the command line reaches through the ``physgrade.app`` entry point.
"""

__version__ = "0.1.0"
