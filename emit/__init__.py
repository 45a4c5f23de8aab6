"""The emitter: builds every shipped kernel variant at two revisions in a sandboxed child.

Maintainers: `emit/child.py` runs code from the revisions under analysis and
must import nothing from `impact` (an import-linter contract checks this); what
it needs of impact's rules it reads from the data file `emit/rules.py` writes.
`emit/runner.py` materialises each revision, writes that file, runs the child
and shapes the emit file. `emit/sandbox.py` is the jail the runner starts the child
through (namespaces, a read-only file system, limits); like the child it imports
nothing from `impact`.
"""
