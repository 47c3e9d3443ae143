#!/usr/bin/env python3
"""The HTML report of `sieve run` (--format html, --report html=FILE), checked on a failing run
and a passing one: the page is self-contained (no script, no link, no address outside it), its
counts and its failures are the JSON report's of the same run, each failure drawn has a picture
whose two panels show DeepInfer's kept set and the implementation's, as `sieve serve` gives them
(a long row's top and tail included), and headless Chromium renders it at 1280 pixels with
nothing wider than the page and the pictures not blank.

    /usr/bin/python3 suites/check_html.py build/sieve      (from the repository's root)
"""
import json
import re
import subprocess
import sys
import tempfile
from html.parser import HTMLParser
from pathlib import Path
from xml.etree import ElementTree as ET

sys.path.insert(0, str(Path(__file__).resolve().parent))
from check_svg import CHROMIUM, check_kept, check_png, find, served_kept  # noqa: E402

# Two departures at once: >= at the top-p boundary, and the float32 tail cut at top_p = 1.
RULE = "boundary=ge,topp_one=float32_tail"
PAGE = 1280
# Two long rows: one the float32 tail cut fails (its cut deep in the tail), one it passes.
LONG = "large-vocab/top-k-above-v32000-keeps-all,large-vocab/peaked-v32000-t0.7-p0.9-k50"
MEASURE = """<script>
window.onload = function () {
  var widest = 0, svgs = document.querySelectorAll('svg'), blank = 0;
  svgs.forEach(function (s) { var r = s.getBoundingClientRect();
    widest = Math.max(widest, r.right); if (r.width < 100 || r.height < 100) blank++; });
  document.body.setAttribute('data-measure', JSON.stringify({
    scroll: document.documentElement.scrollWidth, widest: widest, svgs: svgs.length,
    small: blank}));
};
</script>"""


class Page(HTMLParser):
    """What the checks read of the page: tags, outside addresses, counts, failures, SVGs."""

    def __init__(self):
        super().__init__()
        self.tags, self.outside, self.counts, self.failures, self.svgs = set(), [], {}, [], []
        self._count, self._svg, self._depth = None, None, 0

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.add(tag)
        self.outside += [v for k, v in attrs if k in ("src", "href") and not v.startswith("#")]
        if tag == "td" and "count" in a.get("class", ""):
            self._count = a["data-outcome"]
        if tag == "article" and "failure" in a.get("class", ""):
            self.failures.append({"id": a["data-id"], "outcome": a["data-outcome"], "svg": None})
        if tag == "svg":
            self._svg, self._depth = [], 0
        if self._svg is not None:
            self._depth += 1
            text = " ".join(f'{k}="{v}"' for k, v in attrs if v is not None)
            self._svg.append(f"<{tag} {text}>")

    def handle_endtag(self, tag):
        if self._svg is not None:
            self._svg.append(f"</{tag}>")
            self._depth -= 1
            if self._depth == 0:
                self.failures[-1]["svg"] = "".join(self._svg)
                self._svg = None

    def handle_data(self, data):
        if self._count is not None:
            self.counts[self._count] = int(data)
            self._count = None
        if self._svg is not None:
            self._svg.append(data.replace("&", "&amp;").replace("<", "&lt;"))


def run(sieve, impl, suites, folder, *more):
    html, report = Path(folder) / "run.html", Path(folder) / "run.json"
    done = subprocess.run([sieve, "run", "--impl", impl, "--suite", suites, *more, "--format",
                           "html", "--output", str(html), "--report", f"json={report}"],
                          capture_output=True, text=True, timeout=300)
    return done, html, json.loads(report.read_text()) if report.exists() else None


def check_page(page, text, report):
    problems = [f"it refers outside itself: {page.outside[:3]}"] if page.outside else []
    problems += [f"it has a <{t}>" for t in ("script", "link", "iframe", "img") if t in page.tags]
    if re.search(r"url\(|@import", text):
        problems.append("its style fetches something")
    summary = report["summary"]
    want = {o: summary[o] for o in ("pass", "fail", "skip", "error", "crash")}
    want["unexpected"] = summary["unexpected"]
    if page.counts != want:
        problems.append(f"its counts {page.counts} are not the JSON report's {want}")
    failed = [(c["id"], c["outcome"]) for c in report["cases"]
              if c["outcome"] not in ("pass", "skip") or c.get("expected_failure")]
    if sorted((f["id"], f["outcome"]) for f in page.failures) != sorted(failed):
        problems.append(f"it shows {len(page.failures)} failures, the JSON report has "
                        f"{len(failed)}")
    return problems


def check_pictures(sieve, page, rule):
    """Each picture: DeepInfer's panel and the answer's, with the kept sets sieve serve gives."""
    problems, drawn = [], [f for f in page.failures if f["svg"]]
    if not drawn:
        return ["no failure has a picture"]
    for f in drawn:
        panels = find(ET.fromstring(f["svg"]), "g", "panel")
        if len(panels) != 2:
            problems.append(f"{f['id']}: {len(panels)} panels, not the rule's and the answer's")
            continue
        problems += [f"{f['id']}: DeepInfer's panel: {p}"
                     for p in check_kept(panels[0], served_kept(sieve, f["id"], ""))]
        problems += [f"{f['id']}: the answer's panel: {p}"
                     for p in check_kept(panels[1], served_kept(sieve, f["id"], rule))]
    if not any(f["id"].startswith("large-vocab/") for f in drawn):
        problems.append("no long row is drawn")
    return problems


def render(html, folder):
    """Chromium's measures of the page at 1280 pixels, and its screenshot's problems."""
    measured = Path(folder) / "measured.html"
    measured.write_text(html.read_text().replace("</body>", MEASURE + "</body>"))
    base = [str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
            f"--user-data-dir={folder}/profile", f"--window-size={PAGE},1600"]
    dom = subprocess.run(base + ["--virtual-time-budget=5000", "--dump-dom",
                                 measured.as_uri()], capture_output=True, text=True, timeout=120)
    found = re.search(r'data-measure="([^"]*)"', dom.stdout)
    if not found:
        return [f"chromium did not measure the page: {dom.stderr[-300:]}"]
    m = json.loads(found[1].replace("&quot;", '"'))
    problems = [f"the page is {m['scroll']} pixels wide at {PAGE}"] if m["scroll"] > PAGE else []
    if m["widest"] > PAGE:
        problems.append(f"a picture reaches {m['widest']:.0f} pixels")
    if m["small"]:
        problems.append(f"{m['small']} pictures render smaller than 100 pixels")
    png = Path(folder) / "page.png"
    subprocess.run(base + [f"--screenshot={png}", html.as_uri()], capture_output=True,
                   timeout=120)
    return problems + (check_png(png) if png.exists() else ["no screenshot"])


def main():
    sieve = sys.argv[1]
    failed = 0
    with tempfile.TemporaryDirectory() as folder:
        done, html, report = run(sieve, f"rule:{RULE}", "ordering", folder, "--case", LONG)
        problems = [f"sieve run exited {done.returncode}: {done.stderr[-300:]}"] \
            if done.returncode != 1 or report is None else []
        if not problems:
            page = Page()
            page.feed(html.read_text())
            problems += check_page(page, html.read_text(), report)
            problems += check_pictures(sieve, page, RULE)
            problems += render(html, folder)
        failed += bool(problems)
        for p in problems:
            print(f"check_html: a failing run (rule:{RULE}): {p}")
        done, html, report = run(sieve, "profile:deepinfer", "ordering", folder)
        text = html.read_text() if html.exists() else ""
        if done.returncode != 0 or "Every case asked passed" not in text:
            failed += 1
            print(f"check_html: a passing run: exit {done.returncode}, the page does not say "
                  "every case passed")
    print(f"check_html: {2 - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
