"""LLM judges: versioned prompts, the Anthropic client layer, and runs that are cached,
resumable and safe to kill.

Modules: ``prompts`` (templates and their versions), ``tools`` (forced-tool schemas and the
validation of what a model returns), ``client`` (one call, retried and checked), ``pricing``
(token and cost estimates), ``runner`` (many calls at once, committed as they arrive),
``verdicts`` and ``bloom`` (what is asked and how answers are stored), ``batches`` (the Message
Batches API). Import from the submodules; this package loads nothing heavy.
"""
