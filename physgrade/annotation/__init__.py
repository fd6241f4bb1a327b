"""Bloom's taxonomy annotation sessions: the queue of questions an annotator labels
(``session``), the final-label rule and adjudication (``adjudication``), and the agreement and
distribution figures for reports (``figures``, which loads the statistics stack)."""
