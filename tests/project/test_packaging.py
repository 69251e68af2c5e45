"""The release artifacts: the sdist and the wheel, built from a copy of the checkout as a
release builds them, carry the license, the typing marker and complete metadata."""

import email
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest
from paths import REPO

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib

ROOT = REPO
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
PROJECT = PYPROJECT["project"]
SKIP = shutil.ignore_patterns(".git", ".pytest_cache", ".hypothesis", "build", "dist",
                              "*.egg-info", "__pycache__", ".venv")


@pytest.fixture(scope="module")
def artifacts(tmp_path_factory) -> dict:
    """{"sdist": path, "wheel": path}: `python -m build` of a copy of the checkout (the
    wheel is built from the sdist, so a file the sdist misses fails the wheel too)."""
    tmp = tmp_path_factory.mktemp("packaging")
    source = tmp / "source"
    shutil.copytree(ROOT, source, ignore=SKIP)
    out = tmp / "dist"
    done = subprocess.run([sys.executable, "-m", "build", "--outdir", str(out), str(source)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    (sdist,), (wheel,) = sorted(out.glob("*.tar.gz")), sorted(out.glob("*.whl"))
    return {"sdist": sdist, "wheel": wheel}


def wheel_files(wheel: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(wheel) as z:
        return {n: z.read(n) for n in z.namelist()}


def sdist_files(sdist: Path) -> dict[str, bytes]:
    with tarfile.open(sdist) as t:
        return {m.name.split("/", 1)[1]: t.extractfile(m).read()
                for m in t.getmembers() if m.isfile() and "/" in m.name}


def metadata(artifacts: dict) -> list[email.message.Message]:
    """The wheel's METADATA and the sdist's PKG-INFO."""
    wheel = wheel_files(artifacts["wheel"])
    (name,) = [n for n in wheel if n.endswith(".dist-info/METADATA")]
    return [email.message_from_bytes(wheel[name]),
            email.message_from_bytes(sdist_files(artifacts["sdist"])["PKG-INFO"])]


def test_the_license_is_mit_and_a_file_of_the_checkout():
    text = (ROOT / "LICENSE").read_text()
    assert text.startswith("MIT License") and "Copyright (c) 2026 the rune_jit developers" in text
    assert PROJECT["license"] == "MIT" and PROJECT["license-files"] == ["LICENSE"]
    assert (ROOT / "rune_jit" / "py.typed").exists()


def test_requires_python_and_the_version_classifiers_agree():
    """Every Python from the oldest requires-python admits to the newest named has its
    classifier (and CI tests each of them: .ci/run)."""
    oldest = re.fullmatch(r">=\s*3\.(\d+)", PROJECT["requires-python"])
    assert oldest, PROJECT["requires-python"]
    named = sorted(int(m.group(1)) for c in PROJECT["classifiers"]
                   if (m := re.fullmatch(r"Programming Language :: Python :: 3\.(\d+)", c)))
    assert named == list(range(int(oldest.group(1)), named[-1] + 1)) and named[-1] >= 13


@pytest.mark.slow
def test_the_wheel_and_the_sdist_ship_the_license_and_py_typed(artifacts):
    license_text = (ROOT / "LICENSE").read_bytes()
    wheel = wheel_files(artifacts["wheel"])
    assert wheel["rune_jit/py.typed"] == b""
    (shipped,) = [n for n in wheel if n.endswith(".dist-info/licenses/LICENSE")]
    assert wheel[shipped] == license_text
    sdist = sdist_files(artifacts["sdist"])
    assert sdist["LICENSE"] == license_text and "rune_jit/py.typed" in sdist


@pytest.mark.slow
def test_the_metadata_is_complete(artifacts):
    for meta in metadata(artifacts):
        assert meta["License-Expression"] == "MIT"
        assert meta.get_all("License-File") == ["LICENSE"]
        assert "License" not in meta  # the legacy field: the expression replaces it
        assert meta["Requires-Python"] == PROJECT["requires-python"]
        classifiers = meta.get_all("Classifier")
        assert classifiers == PROJECT["classifiers"]
        for needed in ["Programming Language :: Python :: 3 :: Only",
                       "Operating System :: POSIX :: Linux",
                       "Topic :: Scientific/Engineering",
                       "Intended Audience :: Science/Research",
                       "Development Status :: 3 - Alpha",
                       *[f"Programming Language :: Python :: 3.{v}" for v in (10, 11, 12, 13)]]:
            assert needed in classifiers
        urls = dict(u.split(", ", 1) for u in meta.get_all("Project-URL"))
        assert set(urls) == {"Homepage", "Source", "Issues", "Documentation"}
        assert all(u.startswith("https://github.com/rune-jit/rune_jit") for u in urls.values())
        assert urls["Documentation"].endswith("/docs")
