"""Text from inputs made inert before it reaches a message, an exception, a warning or
str(Finding), exactly as the dtypelint program escapes it (src/report/escape.c): C0 controls
(ESC, CR and LF included) and DEL as \\xNN, C1 controls as \\u00NN, and a path that starts with
':' printed as './:...', so that no line a tensor or file name shapes can move a terminal's
cursor or start with '::' (a CI workflow command)."""
from __future__ import annotations

import re

# C0, DEL, C1; lone surrogates: what a decoder let through of bytes that are not UTF-8
_ESCAPED = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff]")


def _one(m: "re.Match[str]") -> str:
    cp = ord(m.group(0))
    if 0xdc80 <= cp <= 0xdcff:  # surrogateescape's stand-in for a byte that is not UTF-8
        return "\\x%02x" % (cp & 0xff)
    return "\\u%04x" % cp if cp >= 0x80 else "\\x%02x" % cp


def escape(text: object) -> str:
    """text (or str(text)) with every control character escaped as the program escapes it."""
    return _ESCAPED.sub(_one, str(text))


def escape_path(path: object) -> str:
    """A file name as the program prints it: escaped, and './' before a leading ':'."""
    text = escape(path)
    return "./" + text if text.startswith(":") else text


def escape_lines(text: str) -> str:
    """Several lines (the program's standard error, say): each line escaped on its own."""
    return "\n".join(escape(line) for line in text.splitlines())
