"""Loading: from files on disk to one resolved, checked ruleset.

It owns safe YAML with locations (`yamlio`), packages and combos (`package`), layering of
patches with provenance (`layering`) and JSON Schema checks (`schema`, `schemacheck`).
It may import `engine.base` and the rules language (`dsl`), nothing above.
"""
