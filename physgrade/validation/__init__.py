"""Validation of LLM judges by experts: sampling, blind review sessions and audit figures.

- :mod:`~physgrade.validation.sampling` draws a stratified sample, the same for every judge;
- :mod:`~physgrade.validation.blind` gives judges the blind names reviewers see them under;
- :mod:`~physgrade.validation.session` is what one reviewer works through;
- :mod:`~physgrade.validation.reviews` holds the review scales and writes a reviewer's work.
"""
