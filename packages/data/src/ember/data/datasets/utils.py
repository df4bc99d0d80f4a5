"""Downloading and checking dataset files: mirrors, SHA-256, resuming, safe extraction.

``download_url`` fetches one file, trying each mirror in turn. The bytes go to
``<file>.part`` first; an interrupted download is resumed from there with an HTTP
``Range`` request (a server that ignores it makes the download start over). The
finished file must match its SHA-256, else it is deleted and the next mirror is tried.
Only then is it renamed into place, so a file under its final name is always complete
and verified. When every mirror fails (no network, say) the error names each URL, why
it failed, and where to put the file by hand.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tarfile
import urllib.error
import urllib.request
from collections.abc import Sequence

__all__ = ["calculate_sha256", "check_integrity", "download_and_extract_archive", "download_url", "extract_archive"]

_CHUNK = 1 << 20
_USER_AGENT = "ember-data"
# Seconds to wait for a server to answer (or send more bytes) before trying the next mirror.
TIMEOUT = 30.0


def calculate_sha256(fpath: str, chunk_size: int = _CHUNK) -> str:
    h = hashlib.sha256()
    with open(fpath, "rb") as f:
        while chunk := f.read(chunk_size):
            h.update(chunk)
    return h.hexdigest()


def check_integrity(fpath: str, sha256: str | None = None) -> bool:
    """True if `fpath` exists and (when given) its SHA-256 is `sha256`."""
    if not os.path.isfile(fpath):
        return False
    if sha256 is None:
        return True
    return calculate_sha256(fpath) == sha256


def _fetch(url: str, part: str) -> None:
    """Downloads `url` into `part`, continuing from the bytes `part` already holds."""
    have = os.path.getsize(part) if os.path.exists(part) else 0
    request = urllib.request.Request(url, headers={"User-Agent": _USER_AGENT})
    if have:
        request.add_header("Range", f"bytes={have}-")
    try:
        response = urllib.request.urlopen(request, timeout=TIMEOUT)
    except urllib.error.HTTPError as e:
        if e.code == 416 and have:
            return  # "range not satisfiable": the part file already holds the whole file
        raise
    with response:
        resumed = have and response.status == 206
        with open(part, "ab" if resumed else "wb") as f:
            shutil.copyfileobj(response, f, _CHUNK)


def download_url(urls: str | Sequence[str], root: str, filename: str | None = None, sha256: str | None = None) -> str:
    """Downloads a file to ``root/filename`` from the first of `urls` that works and returns
    its path. Nothing is downloaded if a file with the right SHA-256 is already there.

    >>> download_url(["https://a.example/x.gz", "https://b.example/x.gz"], "data", sha256="...")
    """
    if isinstance(urls, str):
        urls = [urls]
    root = os.path.expanduser(root)
    if filename is None:
        filename = os.path.basename(urls[0])
    fpath = os.path.join(root, filename)
    os.makedirs(root, exist_ok=True)
    if check_integrity(fpath, sha256):
        return fpath
    part = fpath + ".part"
    errors = []
    for url in urls:
        try:
            _fetch(url, part)
        except (urllib.error.URLError, OSError) as e:
            # The part file stays: the next mirror (or the next call) resumes from it.
            errors.append(f"{url}: {getattr(e, 'reason', None) or e}")
            continue
        if sha256 is not None:
            got = calculate_sha256(part)
            if got != sha256:
                os.remove(part)
                errors.append(f"{url}: SHA-256 mismatch (expected {sha256}, got {got})")
                continue
        os.replace(part, fpath)
        return fpath
    tried = "\n  ".join(errors)
    raise RuntimeError(
        f"Could not download {filename}. Tried:\n  {tried}\n"
        "Check your internet connection (or proxy settings), or download the file yourself and place it at "
        f"{fpath}" + (f" (its SHA-256 must be {sha256})." if sha256 else ".")
    )


def _safe_members(tar: tarfile.TarFile, to_path: str) -> list[tarfile.TarInfo]:
    base = os.path.realpath(to_path)
    members = []
    for m in tar.getmembers():
        target = os.path.realpath(os.path.join(base, m.name))
        if os.path.commonpath([base, target]) != base or m.issym() or m.islnk() or m.isdev():
            raise RuntimeError(f"refusing to extract {m.name!r}: it would land outside {to_path} or is a link/device")
        members.append(m)
    return members


def extract_archive(from_path: str, to_path: str | None = None) -> str:
    """Extracts a .tar / .tar.gz / .tgz archive (never outside `to_path`, no links)."""
    if to_path is None:
        to_path = os.path.dirname(from_path)
    with tarfile.open(from_path, "r:*") as tar:
        tar.extractall(to_path, members=_safe_members(tar, to_path))
    return to_path


def download_and_extract_archive(
    urls: str | Sequence[str],
    download_root: str,
    extract_root: str | None = None,
    filename: str | None = None,
    sha256: str | None = None,
) -> None:
    archive = download_url(urls, download_root, filename, sha256)
    extract_archive(archive, extract_root or download_root)
