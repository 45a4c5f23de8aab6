"""Renderers: one module per output format; all wording lives here.

Maintainers: renderers take the report document and return text; they never
compute facts or decide anything.
"""

from impact.render.concise import render_concise
from impact.render.github import render_github
from impact.render.json_format import render_json
from impact.render.markdown import render_markdown
from impact.render.sarif import render_sarif
from impact.render.text import render_text

RENDERERS = {"concise": render_concise, "text": render_text, "json": render_json,
             "markdown": render_markdown, "sarif": render_sarif, "github": render_github}

__all__ = ["RENDERERS", "render_concise", "render_github", "render_json", "render_markdown",
           "render_sarif", "render_text"]
