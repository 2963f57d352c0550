"""Where a benchmark's markdown goes: stdout, and the --md file when given."""

from __future__ import annotations

from pathlib import Path
from typing import Optional


def emit(text: str, md: Optional[Path]) -> None:
    print(text)
    if md:
        md.write_text(text + "\n")
