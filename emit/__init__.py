"""The emitter: builds every shipped kernel variant at two revisions in a sandboxed child.

Maintainers: the child (`emit/child/`, a package run by path) runs code from the
revisions under analysis and must import nothing from `impact` (an import-linter
contract checks each of its modules); what it needs of impact's rules, and the
library's names it calls (the surface map's emitter conventions), it reads from the
data file `emit/rules.py` writes. `emit/runner.py` decides which children run:
`emit/trees.py` writes each revision out of git objects, `emit/children.py` starts
and bounds them through `emit/jail.py`'s settings and `emit/sandbox.py` (the jail:
namespaces, a read-only file system, limits; like the child it imports nothing from
`impact`), `emit/results.py` reads back what they wrote, `emit/reuse.py` serves and
fills the cache of built groups (`emit/cache.py`), and `emit/emitfile.py` writes,
reads and merges the emit file.
"""
