"""A registry snapshot the tests build (never fetched): npx, uvx and binary entries, one
malformed entry and one quarantined, in the ``agentclientprotocol/registry`` format."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

#: the registry's quarantine: agent id -> reason
QUARANTINE = {"held-agent": "crashes on start"}


def snapshot(archive_sha256: str | None = None, platform: str = "linux-x86_64") -> dict[str, Any]:
    """The aggregate ``registry.json``. ``scripted`` is the test's own ACP agent, run
    through ``npx`` (a stand-in ``npx`` on the test's PATH); ``bin-agent`` has an archive
    for ``platform`` (with ``archive_sha256`` when given, and one for darwin without)."""
    return {
        "version": "1.0.0",
        "agents": [
            {
                "id": "scripted",
                "name": "Scripted Agent",
                "version": "1.0.0",
                "description": "The test's scripted ACP agent",
                "distribution": {
                    "npx": {
                        "package": "@lab/scripted-agent@1.0.0",
                        "args": ["--modes"],
                        "env": {"REGISTRY_ENV_CHECK": "from-registry"},
                    }
                },
            },
            {
                "id": "uv-agent",
                "name": "Uv Agent",
                "version": "0.3.1",
                "description": "A Python agent",
                "distribution": {"uvx": {"package": "uv-agent==0.3.1", "args": ["acp"]}},
            },
            {
                "id": "bin-agent",
                "name": "Bin Agent",
                "version": "2.0.0",
                "description": "Comes only as an archive",
                "distribution": {
                    "binary": {
                        platform: {
                            "archive": "https://example.invalid/bin-agent-2.0.0.tar.gz",
                            "cmd": "./bin/bin-agent",
                            "args": ["acp"],
                            **({"sha256": archive_sha256} if archive_sha256 else {}),
                        },
                        "darwin-aarch64": {
                            "archive": "https://example.invalid/bin-agent-2.0.0.zip",
                            "cmd": "./bin-agent",
                        },
                    }
                },
            },
            {
                "id": "both-agent",
                "name": "Both Agent",
                "version": "1.2.3",
                "description": "npx and uvx",
                "distribution": {
                    "npx": {"package": "both-agent@1.2.3"},
                    "uvx": {"package": "both-agent"},
                },
            },
            {
                "id": "broken",
                "name": "Broken",
                "version": "latest",
                "description": "Its version is not one",
                "distribution": {"npx": {"package": "broken@latest"}},
            },
            {
                "id": "held-agent",
                "name": "Held Agent",
                "version": "0.1.0",
                "description": "Quarantined",
                "distribution": {"npx": {"package": "held-agent@0.1.0"}},
            },
        ],
        "extensions": [],
    }


def write_snapshot(folder: Path, **options: Any) -> Path:
    """``registry.json`` and ``quarantine.json`` in ``folder``; the registry's path."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "registry.json").write_text(json.dumps(snapshot(**options)), encoding="utf-8")
    (folder / "quarantine.json").write_text(json.dumps(QUARANTINE), encoding="utf-8")
    return folder / "registry.json"
