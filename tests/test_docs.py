"""The docs cannot drift: every generated block (experiment tables from results/*.json, the command
reference from --help) equals what docs/generate.py writes now, every relative link of the README
and the docs points at a file, and the README stays a short manual."""
from __future__ import annotations

import importlib.util
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")
WRITTEN_ELSEWHERE = {"docs/guide/gpu-and-cluster.md"}  # another page's author lands it


def generator():
    spec = importlib.util.spec_from_file_location("docs_generate", ROOT / "docs" / "generate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_generated_blocks_are_what_the_results_say():
    stale = generator().stale()
    assert not stale, f"regenerate with `python docs/generate.py`: {stale}"


def test_every_generated_block_has_a_generator_and_every_generator_a_page():
    gen = generator()
    used = {m["name"] for page in gen.pages() for m in gen.BLOCK.finditer(page.read_text(encoding="utf-8"))}
    assert used == set(gen.GENERATORS)


def test_every_relative_link_resolves():
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    broken = []
    for page in pages:
        for target in LINK.findall(page.read_text(encoding="utf-8")):
            if "://" in target or target.startswith("mailto:"):
                continue
            path = (page.parent / target).resolve()
            name = path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else str(path)
            if not path.exists() and name not in WRITTEN_ELSEWHERE:
                broken.append(f"{page.relative_to(ROOT)}: {target}")
    assert not broken, "\n".join(broken)


def test_the_readme_is_a_short_manual():
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 200, f"README.md has {len(lines)} lines; move detail to docs/"


HEADLINE_WORDS = 30  # words of one cell of the README's headline tables: the result, the figure, the page


def headline_cells(text: str) -> list[str]:
    """Every cell of the tables under the README's "Headline results", header and rule rows left out."""
    section = text.split("## Headline results", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("|") and not line.startswith("|---")]
    return [cell.strip() for row in rows for cell in row.strip("|").split("|")
            if cell.strip() not in ("result", "figure", "page", "job", "command")]


def test_the_headline_tables_read_in_a_minute():
    """One line a result, at most HEADLINE_WORDS words a cell, what works apart from what does not."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    long = [f"{len(c.split())} words: {c[:60]}…" for c in headline_cells(text) if len(c.split()) > HEADLINE_WORDS]
    assert not long, "\n".join(long)
    section = text.split("## Headline results", 1)[1]
    assert section.index("**What works**") < section.index("**What does not (yet)**") < section.index(
        "**Which recipe for which job**")


def test_the_width_rule_catches_a_long_cell():
    text = "## Headline results\n| result | figure | page |\n|---|---|---|\n| x | " + "word " * 31 + "| p |\n## Next"
    assert [c for c in headline_cells(text) if len(c.split()) > HEADLINE_WORDS]
    assert not [c for c in headline_cells(text.replace("word " * 31, "word " * 30)) if len(c.split()) > HEADLINE_WORDS]
