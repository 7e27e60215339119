"""The bundled rulesets: one folder per ruleset or expansion, each with a ruleset.yaml."""

DEFAULT_RULESET = "shogun"  # what `daimyo play` runs when no COMBO is given
