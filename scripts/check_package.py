#!/usr/bin/env python3
"""Build the sdist and the wheel, install the wheel into a fresh venv, and run it there.

    python scripts/check_package.py [--out DIR] [--online]

1. Copies the source tree (without .git, .venv and build output) to ``DIR/src`` and builds there with
   ``python -m build --no-isolation``: the sdist first, then the wheel *from the sdist*, so a file the
   sdist forgets breaks the wheel.  Nothing is written into the repository.
2. Checks the archives: the sdist carries the bundled memory (``company_context/``), the licence and
   the README; the wheel carries every ``retriever`` subpackage, ``py.typed``, the word-embedding
   table with its notice and licence (``retriever/text/data/``) and the ``retriever`` command;
   the metadata has a licence expression, classifiers, keywords and the README as markdown.
3. Creates a venv without pip and installs the wheel into it (``pip --python``, no index).
   Dependencies: with ``--online`` pip resolves them from the index; by default (offline, as in the
   test suite) exactly the wheel's declared dependencies and theirs are linked from this interpreter's
   environment, so an undeclared dependency fails the import.
4. From a folder outside the repository, runs ``retriever --version`` and a ``retriever query --json``
   against the sdist's ``company_context``, and checks the package was imported from the venv and
   loads its embedding table there.

Exits 0 and prints one line per check; 1 with the failing step's output otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from importlib import metadata
from pathlib import Path

try:
    import build  # checked here: the script builds with it in a subprocess
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name
except ImportError:  # README's first command installs the package alone
    sys.exit(
        "scripts/check_package.py builds with 'build' and 'packaging'; "
        "install them with: .venv/bin/pip install -e '.[test]'"
    )

REPO = Path(__file__).resolve().parent.parent
_NOT_SOURCE = shutil.ignore_patterns(
    ".git", ".venv", "build", "dist", "*.egg-info", "__pycache__", "*.pyc", ".*_cache", ".hypothesis", "bench-out"
)
QUESTION = "Who owns the Helix EU data residency project?"
DATA = {f"retriever/text/data/{name}" for name in ("embeddings.npz", "NOTICE", "LICENSE-Apache-2.0")}


class CheckFailed(Exception):
    """A step failed; the message says which and shows its output."""


def run(command: list[str], cwd: Path, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=600, check=False)
    if done.returncode != 0:
        raise CheckFailed(f"{' '.join(command)} exited {done.returncode}:\n{done.stdout[-2000:]}{done.stderr[-4000:]}")
    return done.stdout


def build(out: Path) -> tuple[Path, Path]:
    """(sdist, wheel) built from a copy of the source tree; the wheel from the sdist."""
    source = out / "src"
    shutil.copytree(REPO, source, ignore=_NOT_SOURCE, symlinks=True)
    run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out / "dist"), str(source)], cwd=out)
    [sdist] = (out / "dist").glob("*.tar.gz")
    [wheel] = (out / "dist").glob("*.whl")
    return sdist, wheel


def check_sdist(sdist: Path, out: Path) -> Path:
    """The sdist's files are there; returns the folder it was unpacked into."""
    with tarfile.open(sdist) as archive:
        names = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
        archive.extractall(out / "sdist", filter="data")
    needed = {"LICENSE", "README.md", "PKG-INFO", "company_context/README.md", "scripts/bench.py", "eval/README.md"}
    if missing := sorted(needed - names):
        raise CheckFailed(f"the sdist lacks {', '.join(missing)}")
    [unpacked] = (out / "sdist").iterdir()
    return unpacked


def check_wheel(wheel: Path) -> list[Requirement]:
    """The wheel's files and metadata are fit to publish; returns its (unconditional) dependencies."""
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        info = next(n.split("/")[0] for n in names if n.split("/")[0].endswith(".dist-info"))
        meta = archive.read(f"{info}/METADATA").decode()
        entry_points = archive.read(f"{info}/entry_points.txt").decode()
    packages = {p.relative_to(REPO).as_posix() for p in (REPO / "retriever").rglob("__init__.py")}
    if missing := sorted(packages - names) + sorted({"retriever/py.typed", *DATA} - names):
        raise CheckFailed(f"the wheel lacks {', '.join(missing)}")
    if any(n.startswith(("company_context/", "tests/")) for n in names):
        raise CheckFailed("the wheel carries the bundled memory or the tests; it should hold the package only")
    if "retriever = retriever.adapters.cli:main" not in entry_points:
        raise CheckFailed("the wheel does not install the retriever command")
    headers = [line.split(":", 1)[0] for line in meta.split("\n\n", 1)[0].splitlines()]
    for header in ("License-Expression", "License-File", "Classifier", "Keywords", "Description-Content-Type"):
        if header not in headers:
            raise CheckFailed(f"the wheel's METADATA has no {header}")
    lines = [line.split(":", 1)[1].strip() for line in meta.splitlines() if line.startswith("Requires-Dist:")]
    requires = [Requirement(line) for line in lines]
    return [r for r in requires if r.marker is None or r.marker.evaluate({"extra": ""})]


def dependency_closure(requirements: list[Requirement]) -> list[metadata.Distribution]:
    """The installed distributions these requirements need, and theirs (extras and markers honoured)."""
    found: dict[str, metadata.Distribution] = {}
    pending = [(r, frozenset(r.extras)) for r in requirements]
    while pending:
        requirement, extras = pending.pop()
        name = canonicalize_name(requirement.name)
        dist = metadata.distribution(name)  # PackageNotFoundError: this environment cannot vouch for it
        if not requirement.specifier.contains(dist.version, prereleases=True):
            raise CheckFailed(f"{name} {dist.version} is installed but the wheel requires {requirement}")
        known = name in found
        found[name] = dist
        for line in dist.requires or []:
            nested = Requirement(line)
            wanted = nested.marker is None or any(nested.marker.evaluate({"extra": e}) for e in {"", *extras})
            if wanted and (not known or extras):
                pending.append((nested, frozenset(nested.extras)))
    return list(found.values())


def link_dependencies(dists: list[metadata.Distribution], target: Path) -> None:
    """Link each distribution's top-level files and folders (its dist-info included) into ``target``."""
    target.mkdir(parents=True)
    for dist in dists:
        base = Path(str(dist.locate_file("")))
        tops = {Path(str(f)).parts[0] for f in dist.files or [] if not str(f).startswith("..")}
        for top in sorted(tops - {"__pycache__"}):
            _link(base / top, target / top)


def _link(source: Path, link: Path) -> None:
    if not source.exists() or source.suffix == ".pth":
        return
    if not link.exists():
        link.symlink_to(source, target_is_directory=source.is_dir())
    elif source.is_dir() and link.is_symlink():  # a namespace folder shared by two distributions
        first = link.resolve()
        link.unlink()
        link.mkdir()
        for child in [*first.iterdir(), *source.iterdir()]:
            _link(child, link / child.name)


def install(wheel: Path, out: Path, online: bool) -> Path:
    """A fresh venv holding the wheel (and its dependencies); returns its bin folder."""
    venv = out / "venv"
    run([sys.executable, "-m", "venv", "--without-pip", str(venv)], cwd=out)
    python = venv / "bin" / "python"
    pip = [sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet", "--disable-pip-version-check"]
    if online:
        run([*pip, str(wheel)], cwd=out)
        return venv / "bin"
    run([*pip, "--no-deps", "--no-index", str(wheel)], cwd=out)
    deps = out / "deps"
    link_dependencies(dependency_closure(check_wheel(wheel)), deps)
    purelib = run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"], cwd=out).strip()
    (Path(purelib) / "zz_checked_dependencies.pth").write_text(f"{deps}\n", encoding="utf-8")
    return venv / "bin"


def check_installed(bin_dir: Path, memory: Path, out: Path) -> list[str]:
    """Run the installed command from outside the repository; the lines to report."""
    home = out / "home"
    home.mkdir()
    env = {"PATH": f"{bin_dir}{os.pathsep}/usr/bin:/bin", "HOME": str(home), "RETRIEVER_STATE_DIR": str(out / "state")}
    version = run([str(bin_dir / "retriever"), "--version"], cwd=home, env=env).strip()
    where = run([str(bin_dir / "python"), "-c", "import retriever; print(retriever.__file__)"], cwd=home, env=env)
    if not Path(where.strip()).is_relative_to(bin_dir.parent):
        raise CheckFailed(f"retriever was imported from {where.strip()}, not from the fresh venv")
    table = "from retriever.text import embeddings; t = embeddings.table(); print(t.vectors.shape if t else None)"
    if run([str(bin_dir / "python"), "-c", table], cwd=home, env=env).strip() != "(29525, 256)":
        raise CheckFailed("the installed package does not load its word-embedding table")
    answer = json.loads(run(["retriever", "query", "--json", "--root", str(memory), QUESTION], cwd=home, env=env))
    facts = answer["retrieval"]["facts"]
    if not (answer["memory_ready"] and facts and facts[0]["source_path"].startswith("company_context/")):
        raise CheckFailed(f"the query against {memory} found nothing: {json.dumps(answer)[:500]}")
    return [f"installed: {version}", f"query: {len(facts)} facts, first from {facts[0]['source_path']}"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=None, help="work folder (default: a temporary one, removed)")
    parser.add_argument("--online", action="store_true", help="let pip resolve the dependencies from the index")
    args = parser.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="retriever-package-"))
    out.mkdir(parents=True, exist_ok=True)
    try:
        sdist, wheel = build(out)
        sizes = [f"{p.name} ({p.stat().st_size // 1024} KiB)" for p in (sdist, wheel)]
        print(f"built: {', '.join(sizes)}")
        unpacked = check_sdist(sdist, out)
        print(f"sdist: {len(list((unpacked / 'company_context').rglob('*.md')))} memory files, LICENSE, README")
        check_wheel(wheel)
        print("wheel: every subpackage, py.typed, the embedding table, the retriever command, PyPI metadata")
        for line in check_installed(install(wheel, out, args.online), unpacked / "company_context", out):
            print(line)
    except (CheckFailed, metadata.PackageNotFoundError, subprocess.TimeoutExpired) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    finally:
        if args.out is None:
            shutil.rmtree(out, ignore_errors=True)
    print("ok")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
