"""Build step: every message catalog (`.po`) compiled to `.mo`, so an installation reads
its catalogs with the standard library and carries no Babel (`bot.i18n`).

The `.mo` files are written beside their `.po` files (an editable install reads them
there; git ignores them) and put into the wheel, which leaves the `.po` files out. The
core's `templates/` goes into the wheel as `bot/templates/` from here too.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from hatchling.builders.hooks.plugin.interface import BuildHookInterface

CATALOGS = ("templates/i18n/*/LC_MESSAGES/*.po",
            "adapters/*/templates/i18n/*/LC_MESSAGES/*.po")


def compile_po(po: Path) -> bytes:
    lang = po.parent.parent.name
    with po.open("rb") as handle:
        catalog = read_po(handle, locale=lang)
    buffer = io.BytesIO()
    write_mo(buffer, catalog)
    return buffer.getvalue()


class CatalogHook(BuildHookInterface):  # type: ignore[type-arg]
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        root = Path(self.root)
        for pattern in CATALOGS:
            for po in sorted(root.glob(pattern)):
                mo = po.with_suffix(".mo")
                data = compile_po(po)
                if not mo.is_file() or mo.read_bytes() != data:
                    mo.write_bytes(data)
                if version != "editable" and not mo.is_relative_to(root / "templates"):
                    build_data["force_include"][str(mo)] = mo.relative_to(root).as_posix()
        if version == "editable":
            return
        for path in sorted((root / "templates").rglob("*")):
            if path.is_file() and path.suffix != ".po":
                inside = "bot/" + path.relative_to(root).as_posix()
                build_data["force_include"][str(path)] = inside
