"""physgrade's SQL schema: numbered migrations applied in order by physgrade.project."""
