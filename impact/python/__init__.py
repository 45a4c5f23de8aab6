"""Python side of impact: facts about rocKE kernel sources, read with the standard `ast`."""

# Maintainers: this package parses bytes it is handed; it must never touch git or the filesystem.

from impact.python.facts import extract_python_facts, module_name_for, package_name_for

__all__ = ["extract_python_facts", "module_name_for", "package_name_for"]
