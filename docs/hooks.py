"""mkdocs hooks of the documentation site (``hooks:`` in ``mkdocs.yml``; not a page).

- The committed benchmark results (``benchmarks/results/``) and the notebooks (``notebooks/``)
  are served from where they live in the repository, not copied into ``docs/``: their files are
  added to the site as ``results/...`` and ``notebooks/...``, so a results page's relative
  image links work unchanged and the notebooks are rendered by mkdocs-jupyter.
- ``<!-- cli-help COMMAND -->`` in a page becomes the ``--help`` text of ``river-nrrls
  COMMAND`` (or of ``river-nrrls`` itself with ``main``), taken from the parser at build time,
  so that the documented usage cannot drift from the code.
- A link of a notebook to another notebook (``[2. Exactness](02_exactness.ipynb)``, which works
  in Jupyter and on GitHub) leads to that notebook's page of the site: mkdocs-jupyter leaves
  such links as they are, and the page of ``01_quick_start`` lives in ``01_quick_start/``.
- A footnote's back-link to a reference that is not in the text is dropped: the References
  section of a docstring lists its footnotes without citing each of them in the text, and
  the footnotes extension would link back to a place that does not exist.
"""

from __future__ import annotations

import pathlib
import re
import sys

from mkdocs.plugins import event_priority
from mkdocs.structure.files import File, Files

ROOT = pathlib.Path(__file__).resolve().parents[1]
#: The paper's benchmark harness (river_nrrls_bench, a distribution of its own): the site shows
#: its options from the clone, whether it is installed or not.
HARNESS = ROOT / "benchmarks" / "paper"

#: Repository folders served as the site folder of the same (last) name, and their file types.
MOUNTS = {
    "benchmarks/results": {".md", ".png", ".csv"},
    "notebooks": {".md", ".ipynb"},
}

_CLI_HELP = re.compile(r"<!-- cli-help (\w+) -->")
_NOTEBOOK_LINK = re.compile(r'href="([\w-]+)\.ipynb(#[^"]*)?"')
_BACKLINK = re.compile(r'<a class="footnote-backref" href="#([^"]+)"[^>]*>.*?</a>', re.S)


@event_priority(100)  # before mkdocs-jupyter's on_files, which picks up the notebooks added here
def on_files(files: Files, config) -> Files:
    for source, suffixes in MOUNTS.items():
        folder = ROOT / source
        for path in sorted(folder.rglob("*")):
            if path.is_file() and path.suffix in suffixes:
                # A real file (not File.generated): mkdocs-jupyter's wrapper needs its src_dir.
                relative = path.relative_to(folder.parent).as_posix()
                files.append(
                    File(
                        relative,
                        src_dir=str(folder.parent),
                        dest_dir=config["site_dir"],
                        use_directory_urls=config["use_directory_urls"],
                    )
                )
    return files


def _help(command: str) -> str:
    if str(HARNESS) not in sys.path:  # here: mkdocs restores sys.path after loading the hooks
        sys.path.insert(0, str(HARNESS))
    from river_nrrls import cli

    parser = cli.build_parser()
    if command == "main":
        return parser.format_help()
    subparsers = next(
        action for action in parser._actions if action.__class__.__name__ == "_SubParsersAction"
    )
    return subparsers.choices[command].format_help()


def on_page_markdown(markdown: str, page, config, files) -> str:
    def replace(match: re.Match) -> str:
        text = _help(match.group(1)).replace("\t", "    ")
        return "```text\n" + text.rstrip() + "\n```"

    return _CLI_HELP.sub(replace, markdown)


def _link_notebook_pages(html: str, own_stem: str) -> str:
    def replace(match: re.Match) -> str:
        stem, anchor = match.group(1), match.group(2) or ""
        if stem == own_stem or not (ROOT / "notebooks" / f"{stem}.ipynb").is_file():
            return match.group(0)
        return f'href="../{stem}/{anchor}"'

    return _NOTEBOOK_LINK.sub(replace, html)


def _drop_dead_backlinks(html: str) -> str:
    ids = set(re.findall(r'\bid="([^"]+)"', html))
    return _BACKLINK.sub(lambda match: match.group(0) if match.group(1) in ids else "", html)


def on_post_page(output: str, page, config) -> str:
    source = pathlib.PurePosixPath(page.file.src_uri)
    if source.suffix == ".ipynb":
        output = _link_notebook_pages(output, source.stem)
    return _drop_dead_backlinks(output)
