"""Reading an ACP agent registry from a file or an address, with a cache; and, only when
asked, an agent's archive, checked against the registry's sha256 before it is unpacked.

The registry's text is read here and parsed in the core (``announcer/formats/acp_registry.py``).
An address is fetched with httpx, TLS verified; plain ``http://`` only on loopback. A copy
of each address's answer is kept in the user's cache folder: used for an hour, and after
that whenever the address cannot be reached (the user is told it is a copy).
"""

from __future__ import annotations

import hashlib
import ipaddress
import json
import os
import shutil
import tarfile
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urljoin, urlsplit

from announcer.formats.acp_registry import (
    BinaryTarget,
    Registry,
    RegistryError,
    parse_entries,
    parse_registry,
)

#: how long a fetched registry is used before it is fetched again
CACHE_SECONDS = 3600.0
#: the largest registry (and quarantine) read, and the largest archive downloaded
MAX_REGISTRY_BYTES = 8 * 1024 * 1024
MAX_ARCHIVE_BYTES = 512 * 1024 * 1024
FETCH_TIMEOUT_SECONDS = 20.0


@dataclass(frozen=True, slots=True)
class ReadRegistry:
    """A registry and, when it came from the cache, how old the copy is (seconds)."""

    registry: Registry
    cached_age: float | None = None


def cache_dir() -> Path:
    import platformdirs

    return platformdirs.user_cache_path("announcer", appauthor=False) / "registry"


def is_address(source: str) -> bool:
    return source.startswith(("https://", "http://"))


def _loopback(url: str) -> bool:
    host = urlsplit(url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _get(url: str, *, limit: int) -> bytes | None:
    """The body at ``url`` (None on 404), TLS verified, at most ``limit`` bytes."""
    import httpx

    if url.startswith("http://") and not _loopback(url):
        raise RegistryError(f"{url}: only https:// is read from another machine")
    with (
        httpx.Client(verify=True, timeout=FETCH_TIMEOUT_SECONDS, follow_redirects=True) as client,
        client.stream("GET", url) as response,
    ):
        if response.status_code == 404:
            return None
        if response.status_code != 200:
            raise RegistryError(f"{url}: the server answered {response.status_code}")
        if not str(response.url).startswith("https://") and not _loopback(str(response.url)):
            raise RegistryError(f"{url}: redirected away from https://")
        body = bytearray()
        for chunk in response.iter_bytes():
            body += chunk
            if len(body) > limit:
                raise RegistryError(f"{url}: larger than {limit // (1024 * 1024)} MB")
        return bytes(body)


def _text(data: bytes, source: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise RegistryError(f"{source}: not UTF-8 text") from None


def _cache_file(url: str) -> Path:
    return cache_dir() / (hashlib.sha256(url.encode()).hexdigest()[:32] + ".json")


def _fetch(url: str) -> tuple[str, str | None]:
    body = _get(url, limit=MAX_REGISTRY_BYTES)
    if body is None:
        raise RegistryError(f"{url}: not found (404)")
    held = _get(urljoin(url, "quarantine.json"), limit=MAX_REGISTRY_BYTES)
    return _text(body, url), None if held is None else _text(held, url)


def read_registry(source: str, *, now: float | None = None) -> ReadRegistry:
    """The registry at ``source`` (a file, a folder, or an address); RegistryError if none."""
    if not is_address(source):
        return ReadRegistry(_read_path(Path(source).expanduser()))
    now = time.time() if now is None else now
    cached = _cache_file(source)
    copy: dict[str, object] | None = None
    try:
        loaded = json.loads(cached.read_text(encoding="utf-8"))
        copy = loaded if isinstance(loaded, dict) else None
    except (OSError, ValueError):
        copy = None
    fetched_at = copy.get("fetched_at") if copy else None
    age = now - fetched_at if isinstance(fetched_at, (int, float)) else None
    if copy is not None and age is not None and 0 <= age < CACHE_SECONDS:
        return ReadRegistry(_from_copy(copy, source), age)
    try:
        text, quarantine = _fetch(source)
    except (RegistryError, OSError, ValueError) as exc:
        if copy is not None and age is not None:
            return ReadRegistry(_from_copy(copy, source), age)
        raise RegistryError(
            str(exc) if isinstance(exc, RegistryError) else f"{source}: {exc}"
        ) from None
    except Exception as exc:  # httpx's errors: no connection, TLS refused
        if copy is not None and age is not None:
            return ReadRegistry(_from_copy(copy, source), age)
        raise RegistryError(f"{source}: {type(exc).__name__}: {exc}") from None
    registry = parse_registry(text, source, quarantine)  # checked before it is kept
    try:
        cached.parent.mkdir(parents=True, exist_ok=True)
        partial = cached.with_suffix(".part")
        partial.write_text(
            json.dumps({"fetched_at": now, "registry": text, "quarantine": quarantine}),
            encoding="utf-8",
        )
        os.replace(partial, cached)
    except OSError:
        pass  # a cache that cannot be written only means fetching again next time
    return ReadRegistry(registry)


def _from_copy(copy: dict[str, object], source: str) -> Registry:
    text = copy.get("registry")
    held = copy.get("quarantine")
    if not isinstance(text, str):
        raise RegistryError(f"{source}: the cached copy is damaged")
    return parse_registry(text, source, held if isinstance(held, str) else None)


def _read_file(path: Path) -> str:
    try:
        if path.stat().st_size > MAX_REGISTRY_BYTES:
            raise RegistryError(f"{path}: larger than {MAX_REGISTRY_BYTES // (1024 * 1024)} MB")
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise RegistryError(f"{path}: not UTF-8 text") from None
    except OSError as exc:
        raise RegistryError(f"{path}: {exc.strerror or exc}") from None


def _read_path(path: Path) -> Registry:
    """``registry.json``, one ``agent.json``, or a folder of ``*/agent.json`` (the
    registry's own repository); ``quarantine.json`` beside it when there is one."""
    folder = path if path.is_dir() else path.parent
    held_file = folder / "quarantine.json"
    quarantine = _read_file(held_file) if held_file.is_file() else None
    if path.is_dir() and not (path / "registry.json").is_file():
        entries: list[tuple[str, object]] = []
        for agent_file in sorted(path.glob("*/agent.json")):
            where = str(agent_file.relative_to(path))
            try:
                entries.append((where, json.loads(_read_file(agent_file))))
            except ValueError as exc:
                entries.append((where, f"not valid JSON: {exc}"))
        if not entries:
            raise RegistryError(f"{path}: no registry.json and no */agent.json in it")
        return parse_entries(entries, str(path), quarantine)
    file = path / "registry.json" if path.is_dir() else path
    return parse_registry(_read_file(file), str(file), quarantine)


# -- an archive, only when asked -------------------------------------------------------


def unpacked_program(target: BinaryTarget, agent_id: str, version: str) -> Path:
    """Download ``target``'s archive, check its sha256, unpack it into the cache, and
    return the path of its command. Raises RegistryError with the reason on any mismatch.

    Never called unless the user asked for a download (``--download``), and never for an
    archive without a sha256 (the core refuses those first).
    """
    if target.sha256 is None:
        raise RegistryError(f"{target.archive}: the registry gives no sha256 to check it by")
    folder = cache_dir() / "agents" / f"{agent_id}-{version}-{target.sha256[:16]}"
    program = (folder / target.cmd).resolve()
    if not program.is_relative_to(folder.resolve()):
        raise RegistryError(f"{target.cmd}: the command must be inside its archive")
    if program.is_file():
        return program
    body = _get(target.archive, limit=MAX_ARCHIVE_BYTES)
    if body is None:
        raise RegistryError(f"{target.archive}: not found (404)")
    digest = hashlib.sha256(body).hexdigest()
    if digest != target.sha256:
        raise RegistryError(
            f"{target.archive}: its sha256 is {digest}, not the registry's {target.sha256}; "
            "nothing was unpacked or run"
        )
    partial = folder.with_name(folder.name + ".part")
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    archive = partial / "archive"
    archive.write_bytes(body)
    try:
        if zipfile.is_zipfile(archive):
            with zipfile.ZipFile(archive) as zipped:
                for name in zipped.namelist():
                    if not (partial / name).resolve().is_relative_to(partial.resolve()):
                        raise RegistryError(f"{target.archive}: {name!r} would land outside")
                zipped.extractall(partial)
        else:
            with tarfile.open(archive) as tarred:
                tarred.extractall(partial, filter="data")
    except (tarfile.TarError, zipfile.BadZipFile, OSError) as exc:
        shutil.rmtree(partial, ignore_errors=True)
        raise RegistryError(f"{target.archive}: cannot unpack it: {exc}") from None
    archive.unlink()
    shutil.rmtree(folder, ignore_errors=True)
    os.replace(partial, folder)
    if not program.is_file():
        raise RegistryError(f"{target.archive}: has no {target.cmd}")
    program.chmod(program.stat().st_mode | 0o100)
    return program
