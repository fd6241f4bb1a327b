"""Files bundled with physgrade: the demo project, prompts, icons and styles."""
