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
