"""The emitter's child: build every shipped variant of one materialised revision on the CPU.

Run by path inside the sandbox, on code from the analysed revision (emit/child/__main__.py)::

    python -I -B .../emit/child/__main__.py --tree DIR --python-root REL [--python-root REL ...]
        --descriptor-root REL --rules FILE --out FILE [--family-budget SECONDS]
        [--flavor FLAVOR] [--only FILE] [--reads FILE]

It imports only the standard library and the tree's own modules (never ``impact``). What
impact knows it reads as data from ``--rules`` (written by emit/rules.py, schema
impact/contracts/emit_rules.schema.json): the generic-target table, the backend pins the
packer states, the variants impact's descriptor reader found (kernel sources already
normalised), and the library's own names, from the surface map's ``[conventions.emitter]``
(the producer, the lowering, the enumerators, the flavor ladder: emit/child/context.py
`Emitter`). No module here spells one. A rules file without them is refused (the child
writes an error document); impact emit starts no child for a map without them (every
revision reads not-started), so a library the map does not describe is never "built equal".

It writes one JSON document (schema_version 1, impact/contracts/emit_child.schema.json) to
``--out`` through a temporary file and a rename, and exits 0 once that document is written,
even when variants failed. ``--only FILE`` (JSON ``{"families": [family id, ...]}``, written
by the parent) builds and probes only the enumerated families it names; enumeration,
``skipped`` and ``not_inspected`` are as without it. The document always lists every family
enumerated (``enumerated``: id, source, arch, variant count), so the parent can plan, split
and check that its children's documents cover each family exactly once. ``--reads FILE``
records what tree code read, per window, for the parent's cache (emit/child/reads.py).

The modules, by job: `entry` (the command line), `context` (the tree, the rules, the
library's names), `reads` (what tree code read), `flavor` (the LLVM flavor), `enumeration`
(which variants ship), `hooks` (the watch on the tree's builder and lowering), `build` (a
family through the tree's producer), `kernels` (a lowered kernel's record and IR digest),
`probes` (the support-predicate tables), `specs` (spec dicts as text and keys),
`document` (the steps in order, bounded, and the document's shape) and `vocabulary` (the
statuses of the emitter's documents, which the parent and impact's fold import too).

Maintainers: every module of this package imports nothing from ``impact`` (an import-linter
contract in pyproject.toml checks each one) and no module of it imports another lazily
(emit/child/__main__.py drops them from sys.modules before tree code runs).
"""
