"""The axes of oracle/sieve.h (SIEVE_AXES and each SIEVE_<AXIS>_VALUES list), read from the
header so that the generators name axes and values exactly as the oracle does.

AXES is a list of (name, what, [(value, what), ...]) in the header's order; value 0 of each
axis is DeepInfer's choice.
"""

import os
import re

HEADER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "oracle", "sieve.h")


def _macro(text: str, name: str) -> str:
    """The body of `#define name(X) ...`, continuation lines joined."""
    m = re.search(r"#define " + name + r"\((\w)\)((?:.*\\\n)*.*)", text)
    if not m:
        raise ValueError(f"oracle/sieve.h has no {name}")
    return m.group(2).replace("\\\n", " ")


def _strings(body: str) -> list:
    """Adjacent C string literals joined, in order."""
    return [re.sub(r'"\s*"', "", s) for s in re.findall(r'"(?:[^"\\]|\\.)*"(?:\s*"(?:[^"\\]|\\.)*")*', body)]


def read(header: str = HEADER) -> list:
    with open(header, encoding="utf-8") as f:
        text = f.read()
    out = []
    for upper, field, what in re.findall(r'X\((\w+), (\w+), ((?:"(?:[^"\\]|\\.)*"\s*)+)\)',
                                         _macro(text, "SIEVE_AXES")):
        body = _macro(text, f"SIEVE_{upper}_VALUES")
        values = []
        for entry in re.findall(r'V\(\w+, \w+, ((?:"(?:[^"\\]|\\.)*"\s*)+), ((?:"(?:[^"\\]|\\.)*"\s*)+)\)',
                                body):
            name, desc = (_strings(e)[0].strip('"') for e in entry)
            values.append((name, desc))
        out.append((field, _strings(what)[0].strip('"'), values))
    return out


AXES = read()
NAMES = tuple(a for a, _, _ in AXES)
VALUES = {a: tuple(v for v, _ in values) for a, _, values in AXES}
