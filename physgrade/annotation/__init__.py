"""Bloom's taxonomy annotation sessions: the queue of questions an annotator labels
(``session``), writing labels and adjudications (``labels``), the final-label rule
(``adjudication``), and the agreement and distribution figures for reports (``figures``, which
loads the statistics stack)."""
