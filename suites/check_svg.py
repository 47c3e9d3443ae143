#!/usr/bin/env python3
"""The picture of `sieve explain --svg`, checked: for each scenario, sieve writes the SVG, which
must be well-formed and say what the text table says (the case id and parameters in the title,
a legend with kept and removed, probability ticks, the mass line and the top_p line, one panel
per rule, at most 40 bars and a tail bar for a large vocabulary, the draw's u), with no two
labels overlapping and no wider than a 1280-pixel page holds (1240); with --impl, a panel of the
implementation's answer whose bars and tail say which tokens it kept, as `sieve serve` under the
same rule answers, and DeepInfer's panel the same of DeepInfer's answer, and a cut the answer
makes in the tail of a long row marked at its rank; then headless Chromium renders it, and the
PNG must not be blank.

    /usr/bin/python3 suites/check_svg.py build/sieve      (from the repository's root)
"""
import json
import math
import re
import struct
import subprocess
import sys
import tempfile
import zlib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import NamedTuple
from xml.etree import ElementTree as ET

NS = "{http://www.w3.org/2000/svg}"
CHROMIUM = Path("/usr/bin/chromium")
KEPT = (0x2B, 0x6C, 0xB0)  # the kept bars' colour in explain_svg.c
CHAR_EM = 0.62  # the estimated width of a character, in em, as explain_svg.c estimates it


class Scenario(NamedTuple):
    name: str
    args: list  # of sieve explain
    heading: list  # what the title and the parameters line must contain
    panels: int
    topp: bool  # a top_p line
    draw: bool  # the draw's u and the drawn bar
    tail: bool  # a tail bar
    answer: str = ""  # the --impl rule whose answer has a panel, last
    tail_cut: bool = False  # the answer removes tokens in the tail only: its cut is in the tail


SCENARIOS = [
    Scenario("top-p cut", ["seed-examples/000-panel2-top-p-0.8-keeps-3"],
             ["seed-examples/000-panel2-top-p-0.8-keeps-3", "temperature 1", "top_p 0.8",
              "top_k off"], 1, True, False, False),
    Scenario("a draw", ["--logits", "2,1.5,1,0.5", "--top-p", "0.9", "--top-k", "3", "--seed", "1",
                        "--position", "0"],
             ["4 logits", "top_p 0.9", "top_k 3", "seed 1", "position 0"], 1, True, True, False),
    Scenario("V = 32000", ["large-vocab/peaked-v32000-t0.7-p0.9-k50"],
             ["large-vocab/peaked-v32000-t0.7-p0.9-k50", "V = 32000", "temperature 0.7",
              "top_p 0.9", "top_k 50"], 1, True, False, True),
    Scenario("two rules",
             ["seed-examples/000-floor-drawn-returns-processed-logprob", "--profile", "vllm"],
             ["seed-examples/000-floor-drawn-returns-processed-logprob", "top_p 0.8", "top_k 2",
              "seed 42", "position 7"], 2, True, True, False),
    Scenario("an answer beside the rule",
             ["ordering/strict-boundary-4-equal-top-p-2-of-4", "--impl", "rule:boundary=ge"],
             ["ordering/strict-boundary-4-equal-top-p-2-of-4", "top_p 0.5"], 2, True, False,
             False, "boundary=ge"),
    Scenario("two rules and an answer, V = 32000",
             ["large-vocab/peaked-v32000-t0.7-p0.9-k50", "--profile", "vllm", "--impl",
              "rule:topp_scope=after_topk"],
             ["large-vocab/peaked-v32000-t0.7-p0.9-k50", "top_k 50"], 3, True, False, True,
             "topp_scope=after_topk"),
    Scenario("a tail cut at top_p = 1",
             ["large-vocab/top-k-above-v32000-keeps-all", "--impl", "rule:topp_one=float32_tail"],
             ["large-vocab/top-k-above-v32000-keeps-all", "top_p 1"], 2, False, False, True,
             "topp_one=float32_tail", True),
]
WIDEST = 1240  # a 1280-pixel page, less its margins


def classes(el):
    return (el.get("class") or "").split()


def find(root, tag, cls):
    return [el for el in root.iter(NS + tag) if cls in classes(el)]


def texts(root, cls):
    return ["".join(el.itertext()) for el in find(root, "text", cls)]


def check_document(root):
    size = [root.get(a) for a in ("width", "height")]
    box = (root.get("viewBox") or "").split()
    background = root.find(NS + "rect")
    problems = [] if root.tag == NS + "svg" else ["the root is not an SVG element"]
    if None in size or box[2:] != size:
        problems.append(f"width/height {size} and viewBox {box} do not agree")
    if background is None or background.get("fill") != "white" or background.get("width") is None:
        problems.append("no white background rect first")
    return problems


def check_heading(root, wanted):
    heading = " ".join(texts(root, "title") + texts(root, "params"))
    return [f"the title lacks {w!r} (it says {heading!r})" for w in wanted if w not in heading]


def check_legend(root, topp, draw):
    legend = " ".join(texts(root, "legend-label"))
    wanted = ["kept", "removed", "mass before"] + ["top_p"] * topp + ["drawn"] * draw
    return [f"the legend lacks {w!r}" for w in wanted if w not in legend]


def check_ticks(panel):
    values = [float(t) for t in texts(panel, "y-tick")]
    if len(values) < 3 or values != sorted(values):
        return [f"the probability axis has ticks {values}"]
    return []


def check_panel(panel, tail, topp, draw):
    """The facts of one rule's panel: its title, axes, bars, mass and top_p lines and draw."""
    problems = check_bars(panel, tail)
    if not find(panel, "path", "mass") or not find(panel, "circle", "mass-marker"):
        problems.append("no mass line with markers")
    if topp and not any(el.get("stroke-dasharray") for el in find(panel, "line", "topp")):
        problems.append("no dashed top_p line")
    if not find(panel, "text", "x-title") or not texts(panel, "mass-title"):
        problems.append("an axis has no title")
    if draw and not (any(re.match(r"u = 0\.\d{6} → token \d+", t) for t in texts(panel, "u"))
                     and find(panel, "rect", "drawn")):
        problems.append("no 'u = 0.xxxxxx → token N' with the drawn bar highlighted")
    return problems


def check_bars(panel, tail):
    """A panel's title, probability axis, bars and tail."""
    problems = check_ticks(panel)
    title = " ".join(texts(panel, "panel-title"))
    if not re.search(r"kept \d+ of \d+", title):
        problems.append(f"the panel title {title!r} does not say kept K of V")
    bars = [r for r in find(panel, "rect", "bar") if "tail" not in classes(r)]
    if len(bars) > 40 or not bars:
        problems.append(f"{len(bars)} bars")
    if tail and not (find(panel, "rect", "tail") and any("tail" in t for t in texts(panel, "id"))):
        problems.append("no labelled tail bar")
    return problems


def served_kept(sieve, case_id, rule):
    """The ids of the tokens `sieve serve` (under `rule`, or DeepInfer's) keeps on the case."""
    request = subprocess.run([sieve, "case", case_id, "--request"], capture_output=True,
                             text=True, check=True).stdout
    serve = [sieve, "serve"] + (["--rule", rule] if rule else [])
    answer = json.loads(subprocess.run(serve, input=request, capture_output=True, text=True,
                                       check=True).stdout)
    return {i for i, x in enumerate(answer["rows"][0]["logprobs"]) if x is not None}


def check_kept(panel, kept):
    """The panel's bars are kept exactly where `kept` has their token, and its tail label counts
    the kept tokens without a bar."""
    shown = {}
    for bar in find(panel, "rect", "bar"):
        said = bar.find(NS + "title")
        if said is not None:
            shown[int(re.match(r"token (\d+)", said.text)[1])] = "kept" in classes(bar)
    wrong = sorted(t for t, k in shown.items() if k != (t in kept))
    problems = [f"the bars of tokens {wrong[:5]} say the wrong state"] if wrong else []
    labels = [t for t in texts(panel, "tail-label") if t.endswith(" kept")]
    in_tail = len(kept - set(shown))
    if labels and labels[0] != f"{in_tail} kept":
        problems.append(f"the tail says {labels[0]!r}, the answer keeps {in_tail} there")
    return problems


def check_answer(sieve, panels, sc):
    """The answer's panel (the last) and DeepInfer's (the first) show the kept sets `sieve serve`
    gives; the answer's title names it, and a cut it makes in the tail is marked at its rank."""
    case_id, answer = sc.args[0], panels[-1]
    problems = check_bars(answer, sc.tail)
    problems += [f"DeepInfer's panel: {p}" for p in check_kept(panels[0],
                                                               served_kept(sieve, case_id, ""))]
    kept = served_kept(sieve, case_id, sc.answer)
    problems += [f"the answer's panel: {p}" for p in check_kept(answer, kept)]
    if not any(t.startswith("sieve-oracle: kept") for t in texts(answer, "panel-title")):
        problems.append(f"the answer's panel title is {texts(answer, 'panel-title')}")
    cut = [t for t in texts(answer, "cut-label") if t.startswith("its cut")]
    if sc.tail_cut and not (cut and re.fullmatch(r"its cut: rank \d+", cut[0])):
        problems.append(f"the answer's cut in the tail is not marked with its rank: {cut}")
    return problems


def text_box(el, root_size):
    """The box a text covers, estimated from its anchor, font size, length and rotation."""
    size = float(el.get("font-size", root_size))
    x, y = float(el.get("x")), float(el.get("y"))
    width = CHAR_EM * size * len("".join(el.itertext()))
    start = {"middle": -width / 2, "end": -width}.get(el.get("text-anchor"), 0)
    corners = [(dx, dy) for dx in (start, start + width) for dy in (-0.75 * size, 0.2 * size)]
    turn = re.match(r"rotate\(([-\d.]+)", el.get("transform", ""))
    a = math.radians(float(turn.group(1))) if turn else 0
    xs = [x + dx * math.cos(a) - dy * math.sin(a) for dx, dy in corners]
    ys = [y + dx * math.sin(a) + dy * math.cos(a) for dx, dy in corners]
    return min(xs), min(ys), max(xs), max(ys)


def overlap(a, b, slack=0.5):
    return a[0] + slack < b[2] and b[0] + slack < a[2] and a[1] + slack < b[3] and b[1] + slack < a[3]


def check_overlaps(root):
    """No two text labels of the picture overlap (their boxes estimated)."""
    els = [el for el in root.iter(NS + "text")]
    boxes = [text_box(el, root.get("font-size", "11")) for el in els]
    clashes = [(i, j) for i in range(len(els)) for j in range(i) if overlap(boxes[i], boxes[j])]
    return [f"labels overlap: {''.join(els[i].itertext())!r} and {''.join(els[j].itertext())!r}"
            for i, j in clashes[:5]]


def check_svg(sieve, root, sc):
    panels = find(root, "g", "panel")
    problems = check_document(root) + check_heading(root, sc.heading)
    problems += check_legend(root, sc.topp, sc.draw) + check_overlaps(root)
    if len(panels) != sc.panels:
        return problems + [f"{len(panels)} panels, not {sc.panels}"]
    if float(root.get("width")) > WIDEST:
        problems.append(f"{root.get('width')} pixels wide: a 1280-pixel page holds {WIDEST}")
    rules = panels[:-1] if sc.answer else panels
    for i, panel in enumerate(rules):
        problems += [f"panel {i}: {p}" for p in check_panel(panel, sc.tail, sc.topp, sc.draw)]
    return problems + (check_answer(sieve, panels, sc) if sc.answer else [])


def png_pixels(data):
    """The RGB pixels of an 8-bit RGB or RGBA PNG, row by row."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat, header = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        header = struct.unpack(">IIBB", body[:10]) if kind == b"IHDR" else header
        idat += body if kind == b"IDAT" else b""
        pos += 12 + length
    width, height, depth, colour = header
    if depth != 8 or colour not in (2, 6):
        raise ValueError(f"bit depth {depth}, colour type {colour}: not 8-bit RGB or RGBA")
    channels = 3 if colour == 2 else 4
    rows = unfilter(zlib.decompress(idat), width * channels, height, channels)
    return [tuple(row[i:i + 3]) for row in rows for i in range(0, len(row), channels)]


def paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    return a if pa <= pb and pa <= pc else b if pb <= pc else c


def unfilter(raw, stride, height, bpp):
    """Undoes the PNG row filters (types 0-4)."""
    rows, prev = [], bytearray(stride)
    for r in range(height):
        kind, row = raw[r * (stride + 1)], bytearray(raw[r * (stride + 1) + 1:(r + 1) * (stride + 1)])
        for i in range(stride):
            a = row[i - bpp] if i >= bpp else 0
            c = prev[i - bpp] if i >= bpp else 0
            pred = (0, a, prev[i], (a + prev[i]) // 2, paeth(a, prev[i], c))[kind]
            row[i] = (row[i] + pred) & 0xFF
        rows.append(row)
        prev = row
    return rows


def render(svg, png, root, tmp):
    """Headless Chromium's screenshot of the SVG at its own size; a problem, or None."""
    size = f"{root.get('width')},{root.get('height')}"
    try:
        out = subprocess.run([str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu",
                              "--hide-scrollbars", f"--user-data-dir={tmp}/profile",
                              f"--window-size={size}", f"--screenshot={png}", svg.as_uri()],
                             capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        return "chromium took more than 60 s"
    if not png.exists():
        return f"chromium exited {out.returncode} without a screenshot: {out.stderr[-200:]}"
    return None


def check_png(png):
    pixels = png_pixels(png.read_bytes())
    inked = sum(p != (255, 255, 255) for p in pixels) / len(pixels)
    problems = [] if inked > 0.02 else [f"the rendering is blank ({inked:.1%} not white)"]
    if len(set(pixels)) < 3:
        problems.append(f"the rendering has {len(set(pixels))} colours")
    if KEPT not in set(pixels):
        problems.append("no kept bar is visible in the rendering")
    return problems


def run_scenario(sieve, sc, tmp):
    svg, png = Path(tmp) / "explain.svg", Path(tmp) / "explain.png"
    out = subprocess.run([sieve, "explain", *sc.args, "--svg", str(svg)], capture_output=True,
                         text=True, timeout=120)
    if out.returncode != 0 or not svg.exists():
        return [f"sieve explain exited {out.returncode} without an SVG: {out.stderr.strip()}"]
    try:
        root = ET.parse(svg).getroot()
    except ET.ParseError as e:
        return [f"the SVG is not well-formed: {e}"]
    problems = check_svg(sieve, root, sc)
    failed = render(svg, png, root, tmp)
    return problems + ([failed] if failed else check_png(png))


def scenario_problems(sieve, sc):
    with tempfile.TemporaryDirectory() as tmp:
        return run_scenario(sieve, sc, tmp)


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: check_svg.py path/to/sieve")
    if not CHROMIUM.exists():
        print(f"check_svg: {CHROMIUM} is missing: install Debian's chromium "
              "(apt-get install chromium; make test installs it)")
        return 1
    failed = 0
    with ThreadPoolExecutor(max_workers=2) as pool:  # Chromium waits much: two at a time
        found = list(pool.map(lambda sc: scenario_problems(sys.argv[1], sc), SCENARIOS))
    for sc, problems in zip(SCENARIOS, found):
        failed += bool(problems)
        for p in problems:
            print(f"check_svg: {sc.name} (sieve explain {' '.join(sc.args)}): {p}")
    print(f"check_svg: {len(SCENARIOS) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
