"""Build step that pyproject.toml cannot say as data: compile the message catalogs.

The translators' sources stay in ``locales/<code>/LC_MESSAGES/announcer.po`` at the top of
the checkout (where ``pybabel`` and the catalog tests expect them). Building a wheel (or a
PyInstaller folder from one) compiles each into ``announcer/locales/<code>/LC_MESSAGES/
announcer.mo`` inside the package, where ``announcer.i18n.translate`` finds it through
``importlib.resources``. A checkout needs no build: it compiles the ``.po`` in memory.
"""

from __future__ import annotations

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
DOMAIN = "announcer"


def compile_catalogs(target: Path) -> list[str]:
    """Compile every ``locales/*/LC_MESSAGES/announcer.po`` into ``target``; return the files."""
    from babel.messages.mofile import write_mo
    from babel.messages.pofile import read_po

    written = []
    for source in sorted((ROOT / "locales").glob(f"*/LC_MESSAGES/{DOMAIN}.po")):
        folder = source.parent.parent.name
        with source.open("rb") as handle:
            catalog = read_po(handle, locale=folder, domain=DOMAIN)
        out = target / folder / "LC_MESSAGES" / f"{DOMAIN}.mo"
        out.parent.mkdir(parents=True, exist_ok=True)
        with out.open("wb") as handle:
            write_mo(handle, catalog, use_fuzzy=False)
        written.append(str(out))
    if not written:
        raise SystemExit(f"no catalogs found under {ROOT / 'locales'}")
    return written


class BuildWithCatalogs(build_py):
    """``build_py`` that also compiles the catalogs into the built package."""

    def run(self) -> None:
        super().run()
        # An editable install reads the checkout's .po files directly.
        if not getattr(self, "editable_mode", False):
            self._catalogs = compile_catalogs(Path(self.build_lib) / "announcer" / "locales")

    def get_outputs(self, include_bytecode: bool = True) -> list[str]:
        return [*super().get_outputs(include_bytecode), *getattr(self, "_catalogs", [])]


setup(cmdclass={"build_py": BuildWithCatalogs})
