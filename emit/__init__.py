"""The emitter: builds every shipped kernel variant at two revisions in a sandboxed child.

Maintainers: `emit/child.py` runs code from the revisions under analysis and
must import nothing from `impact` (an import-linter contract checks this).
The runner and the child are not written yet; this package holds their place
in the distribution so the layout and the import contract are fixed now.
"""
