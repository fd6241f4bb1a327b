"""The seeds' own measures beyond the P-REFS v2 analyses (:mod:`physgrade.analyses`): one module
per kind of measure, each defined as the study that introduced it defines it (see
docs/statistics.md, where each is quoted with its section)."""
