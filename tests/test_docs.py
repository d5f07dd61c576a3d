"""The manual stands alone: what the code cites of it exists, and nothing of the project
points outside the repository. (`make test` also builds the site with `mkdocs build
--strict`, which fails on a broken link between its pages.)"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from tests.conftest import BASE_DIR

# `docs/memory.md, "Search and scores"`, the heading possibly wrapped onto the next
# comment or docstring line.
CITATION = re.compile(r'(docs/[\w./-]+\.md)(?:,\s*(?:#\s*)?\\?"([^"\\]+)\\?")?')


def tracked(*patterns: str) -> list[Path]:
    listed = subprocess.run(["git", "ls-files", *patterns], cwd=BASE_DIR, capture_output=True, text=True, check=True).stdout
    return [BASE_DIR / name for name in listed.split()]


def headings(page: Path) -> set[str]:
    return {normal(line.lstrip("#")) for line in page.read_text().splitlines() if re.match(r"#{1,6} ", line)}


def normal(text: str) -> str:
    return " ".join(text.replace("`", "").replace("#", " ").split())


def citations(text: str) -> list[tuple[str, str | None]]:
    return [(page, normal(heading) if heading else None) for page, heading in CITATION.findall(text)]


def test_what_the_code_cites_of_the_manual_exists() -> None:
    cited = 0
    for source in tracked("*.py", "*.html", "Makefile", "*.cfg", ".importlinter", "*.toml", "mkdocs.yml", "README.md", "CHANGELOG.md"):
        for page, heading in citations(source.read_text()):
            cited += 1
            assert (BASE_DIR / page).is_file(), f"{source.relative_to(BASE_DIR)} cites {page}, which does not exist"
            if heading:
                assert heading in headings(BASE_DIR / page), f'{source.relative_to(BASE_DIR)} cites {page}, "{heading}": no such heading'
    assert cited > 40


def test_it_reads_a_citation_wrapped_onto_the_next_comment_line() -> None:
    text = '# routed as the planner says (docs/memory.md, "Search\n    # and scores"); see also docs/api.md.'
    assert citations(text) == [("docs/memory.md", "Search and scores"), ("docs/api.md", None)]


def test_nothing_points_outside_the_repository() -> None:
    outside = re.compile(r"\bCONTRACT\.md\b|\bDESIGN\.md\b|\.\./shared\b")
    found = [
        f"{path.relative_to(BASE_DIR)}:{number}"
        for path in tracked()
        if path.is_file() and path.suffix not in (".png", ".json", ".zip", ".onnx", ".bin")
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1)
        if outside.search(line)
    ]
    assert found == []


def test_the_readme_is_a_first_screen_not_the_manual() -> None:
    readme = (BASE_DIR / "README.md").read_text()
    assert len(readme.splitlines()) <= 200
    assert "make run" in readme and "make test" in readme
    assert "/api/v1/memories/search" in readme  # a first search, with curl, before any link


def _importlinter_layers() -> list[set[str]]:
    """The layers contract of .importlinter, lowest first: each layer's packages."""
    text = (BASE_DIR / ".importlinter").read_text()
    block = text.split("[importlinter:contract:layers]", 1)[1].split("\n[", 1)[0]
    lines = block.split("layers =", 1)[1].splitlines()
    layers = [
        {name.strip() for name in line.split("|")}
        for line in (line.strip() for line in lines) if line and not line.startswith("#")
    ]
    return list(reversed(layers))


def test_the_concepts_pages_layer_table_is_the_import_contract() -> None:
    # The table newcomers read to find a package's room is the one import-linter enforces.
    page = (BASE_DIR / "docs" / "concepts.md").read_text()
    table = page.split("## The layers", 1)[1].split("\n\n| layer |", 1)[1].split("\n\n", 1)[0]
    rows = [line for line in table.splitlines() if re.match(r"\| \d+ \|", line)]
    documented = [set(re.findall(r"`([\w.]+)`", row.split("|")[2])) for row in rows]
    assert documented == _importlinter_layers()


def test_the_concepts_page_names_every_package_of_the_hub() -> None:
    page = (BASE_DIR / "docs" / "concepts.md").read_text()
    packages = {path.parent.name for path in (BASE_DIR / "memoryhub").glob("*/__init__.py")}
    assert {name for name in packages if f"`memoryhub.{name}`" not in page} == set()
