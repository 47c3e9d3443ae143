"""Engines side by side: the fingerprint names every axis of every profile and of the mutants
that carry an axis value, and the nearest profile when none matches; read jointly, it says "no
value fits" to a top-p rule outside the boundary axis without blaming another axis, sieve run
names no cause for such a rule's failures, and the fingerprint finds the rank key of samplers
that answer in probability space; a probe's evidence names no cause its row cannot tell (the
overflow probe says a penalty divides a negative logit only where its row shows that); sieve
diff finds the differences an axis explains and none between the oracle and itself or the
faithful port, and names the axes no value fits in each side's rule; both survive
implementations that crash or exit."""

import json
import re
from pathlib import Path

from sieve_cli import FAKES, fixtures

OUTSIDE = Path(__file__).resolve().parent / "outside_adapters.py"

# What the fingerprint finds in the wrong ports: reversed-ties reverses every tie, so both
# cuts keep the highest ids; t0-argmax keeps the first maximum while validate still clamps, so
# no value of t0 fits both; min-p-absolute is no boundary of min-p against the largest p (the
# probe's first row shows it), and penalty-after-temperature keeps the order at T = 1.
MUTANT_AXES = [("ge-boundary", "boundary", "ge"),
               ("topk-first-renormalized", "topp_scope", "after_topk"),
               ("reversed-ties", "topp_ties", "highest"),
               ("reversed-ties", "topk_ties", "by_id_desc"),
               ("topk-keeps-ties", "topk_ties", "keep_all"),
               ("temperature-after-filters", "temperature_at", "after"),
               ("topk-zero-is-off", "top_k_zero", "off"),
               ("raw-logprobs", "logprobs", "scaled"),
               ("mtp-offset-forgotten", "draw", "hash"),
               ("spec-accept-le", "spec_accept", "le"),
               ("spec-q-zero-rejects", "spec_q_zero", "reject"),
               ("spec-q-raw", "spec_q", "raw"),
               ("mix-with-increment", "draw", "own"),
               ("cdf-probability-order", "draw", "own"),
               ("t0-argmax", "t0", "no value fits"),
               ("min-p-absolute", "min_p_boundary", "no value fits"),
               ("penalty-after-temperature", "penalty_order", "additive_first")]


# The axes of the penalties and min-p, whose probes need sampling options hello must list: each
# with what its probe asks (all of a tuple's options, or any of a set's).
PENALTY_PROBES = {"penalty_order": {("presence_penalty", "repetition_penalty"),
                                    ("frequency_penalty", "repetition_penalty")},
                  "penalty_tokens": {("presence_penalty",), ("frequency_penalty",),
                                     ("repetition_penalty",)},
                  "min_p_scale": {("min_p",)}, "min_p_order": {("min_p",)},
                  "min_p_boundary": {("min_p",)},
                  "penalty_range": {("presence_penalty",), ("frequency_penalty",),
                                    ("repetition_penalty",), ("min_p",)},
                  "penalty_overflow": {("repetition_penalty",)}}


def unaskable(options: str) -> set:
    """The penalty and min-p axes whose probes a sampler taking `options` cannot ask."""
    taken = set(options.split(",")) - {""}
    return {axis for axis, asks in PENALTY_PROBES.items()
            if not any(set(ask) <= taken for ask in asks)}


def fingerprint(ctx, impl):
    """Each axis's verdict ("ge", "argmax|topk1", "not determined (...)") and the profiles that
    match, from sieve fingerprint --format json."""
    report = ctx.json("fingerprint", "--impl", impl)
    return {a["axis"]: a["verdict"] for a in report["axes"]}, report["matches"]


def blind_axes(rule, options):
    """The axes a profile's other choices hide from the probes: with top-p not applied its
    boundary, ties, the place of temperature and top_p = 1 do not show; when every tied token stays the
    boundary does not; when T = 0 is rejected a negative T is rejected either way; with a
    generator of its own, u is never the 0 at which an inclusive accept test shows; when the
    tokens tied with the k-th stay in an order of the sort's own, a ranking by probability,
    which ties the tokens whose probabilities underflow, may keep the ones the logit keeps; when
    a top_k of V or more is an error, so is one above the int32 maximum on the probe's row; where
    T is read as a float32, dividing by the float64 T is dividing by the float32 T; with
    temperature after the filters, min-p compares the probabilities at T = 1 either way; with
    the repetition penalty its only penalty, whether the others count the prompt does not show,
    nor, with no other option taken, whether their ranges are checked."""
    hidden = set()
    if rule["topp_scope"] == "ignored":
        hidden |= {"boundary", "topp_ties", "temperature_at", "topp_one"}
    if rule["topp_ties"] == "all":
        hidden.add("boundary")
    if rule["t0"] == "reject":
        hidden.add("t0_below")
    if rule["draw"] == "own":
        hidden.add("spec_accept")
    if rule["topk_ties"] == "unspecified":
        hidden.add("rank_key")
    if rule["top_k_vocab"] == "error":
        hidden.add("top_k_max")
    if rule["param_precision"] == "float32" and rule["temperature_op"].startswith("divide"):
        hidden.add("temperature_op")
    if rule["temperature_at"] == "after":
        hidden.add("min_p_scale")
    taken = set(options.split(","))
    if not taken & {"presence_penalty", "frequency_penalty"}:
        hidden.add("penalty_tokens")
        if "min_p" not in taken:
            hidden.add("penalty_range")
    return hidden


def fingerprints(ctx):
    listed = ctx.json("profiles")
    profiles = {p["name"]: {a: c["value"] for a, c in p["axes"].items()} for p in listed}
    unconfirmed = {p["name"]: {a for a, c in p["axes"].items() if not c["confirmed"]}
                   for p in listed}
    options = {p["name"]: p["sampling_options"] for p in listed}
    for name, want in profiles.items():
        report = ctx.json("fingerprint", "--impl", f"exec:{ctx.sieve} serve --profile {name}")
        got = {a["axis"]: a["verdict"] for a in report["axes"]}
        matches = report["matches"]
        hidden = blind_axes(want, options[name])
        # A profile takes the sampling options its engine's code was read for (oracle/SPEC.md,
        # "Penalties and min-p"): the probes that need another say so, and nothing else.
        unasked = {a["axis"] for a in report["axes"] if a["verdict"] == "not determined"
                   and a["evidence"].startswith("not offered: hello's sampling_options")}
        wrong = {a: (got.get(a), v) for a, v in want.items() if got.get(a) != v and not (
            a in hidden and (got.get(a, "").startswith("not determined")
                             or v in got.get(a, "").split("|"))) and a not in unasked}
        ctx.check(f"fingerprint of profile {name} asks the penalties and min-p only as offered",
                  unasked == unaskable(options[name]),
                  f"not asked: {sorted(unasked)}")
        ctx.check(f"fingerprint names every axis of profile {name} (through exec:)",
                  not wrong and name in matches, f"got/wanted {wrong}, matches {matches}")
        told = {a["axis"] for a in report["axes"] if a["values"]}
        ctx.check(f"fingerprint of profile {name} names the determined axes its nearest profile "
                  "did not confirm, and prefers the profile confirming the most",
                  report["nearest"] == name and set(report["unconfirmed"])
                  == unconfirmed[name] & told, f"{report['nearest']}: {report['unconfirmed']}")
    for name, axis, value in MUTANT_AXES:
        got, _ = fingerprint(ctx, f"lib:{ctx.mutants}/lib{name}.so")
        ctx.check(f"fingerprint finds {axis} = {value} in mutant {name}", got.get(axis) == value,
                  f"got {got.get(axis)}")
    # The overflow probe's first row tells a repetition penalty dividing a negative logit from
    # another departure; top-k keeping k + 1 is neither, and is not said to divide.
    for name, said in (("repetition-divides-negative", "the penalty divides a negative logit"),
                       ("topk-off-by-one", "neither {0,2}")):
        text = ctx.cmd("fingerprint", "--impl", f"lib:{ctx.mutants}/lib{name}.so").stdout
        line = next((li for li in text.splitlines() if li.startswith("penalty_overflow")), "")
        ctx.check(f"the overflow probe of mutant {name} says: {said}", said in line, line)
        if name == "topk-off-by-one":
            ctx.check("its fit over the probes says the rule its residual groups compare with is "
                      "the fit with each axis no value fits at its nearest",
                      "(the rule: the fit, each axis no value fits at its nearest)" in text,
                      text[-400:])
    near = ctx.cmd("fingerprint", "--impl", f"lib:{ctx.mutants}/libge-boundary.so").stdout
    ctx.check("fingerprint of a mutant no profile matches names the nearest and where it differs",
              "nearest: deepinfer: differs on boundary (profile gt, found ge)" in near, near[-300:])


def outside_the_axes(ctx):
    """The samplers of outside_adapters.py, through the Python template."""
    def impl(name):
        return f"exec:{ctx.python} {OUTSIDE} {name}"
    report = ctx.json("run", "--impl", impl("int32-top-k"), "--no-batches",
                      "--suite", "params")["diagnosis"]
    ctx.check("sieve run of a sampler that checks top_k's maximum in filter only fits "
              "top_k_max=none and names the passing case that rule answers otherwise",
              report["rule"]["top_k_max"] == "none" and report["passes_otherwise"] == 1
              and report["passes_otherwise_cases"] == ["validation/filter-top-k-above-int32"],
              {k: report[k] for k in ("passes_otherwise", "passes_otherwise_cases")})
    got, matches = fingerprint(ctx, impl("inclusive"))
    want = {"boundary": "no value fits", "topp_scope": "full", "topp_ties": "lowest",
            "temperature_at": "before", "rank_key": "probability", "topk_ties": "by_id"}
    wrong = {a: (got.get(a), v) for a, v in want.items() if got.get(a) != v}
    ctx.check("fingerprint of a top-p that keeps the mass with the token at most top_p: boundary "
              "'no value fits', and no other axis blamed for it", not wrong and not matches,
              f"got/wanted {wrong}, matches {matches}")
    text = ctx.cmd("fingerprint", "--impl", impl("inclusive")).stdout
    ctx.check("its fingerprint's fit over the probes groups the rows no value explains",
              "the fit over the probes'" in text and
              "keeps fewer tokens than the rule keeps; every one with top_p = 0.6" in text,
              text[-600:])
    _, report, err = ctx.run(impl("inclusive"), "--suite", "ordering", "--no-batches")
    fit = (report or {}).get("diagnosis", {})
    ctx.check("sieve run names its top-p rule as the reading topp-inclusive-cumsum, every failure "
              "explained", fit.get("misreadings") == ["topp-inclusive-cumsum"]
              and fit.get("explained") == fit.get("failures") > 0, str(fit)[:300] or err[-300:])
    _, report, err = ctx.run(impl("divides-by-t"), "--case", "seed-examples/000-t0-equal-logits-share")
    detail = ((report or {}).get("cases") or [{}])[0].get("detail", "")
    ctx.check("a sampler that divides by T = 0 gets an error naming its file, line and function",
              "ZeroDivisionError" in detail and "outside_adapters.py:" in detail
              and "in divides_by_t" in detail, detail[:300] or err[-300:])
    got, _ = fingerprint(ctx, impl("ge-tail-16"))
    ctx.check("fingerprint of a sampler whose float32 tail adds its total in sixteen lanes, with "
              "boundary ge besides: topp_one float32_tail, boundary ge",
              got.get("topp_one") == "float32_tail" and got.get("boundary") == "ge", f"got {got}")
    _, report, err = ctx.run(impl("ge-tail-16"), "--suite", "ordering", "--no-batches")
    fit = (report or {}).get("diagnosis", {})
    departs = ctx.departures(fit.get("rule") or {})
    ctx.check("sieve run fits it as boundary=ge + topp_one=float32_tail, its tail cut elsewhere "
              "than the oracle's eight lanes explained too",
              departs == {"boundary": "ge", "topp_one": "float32_tail"}
              and fit.get("explained") == fit.get("failures") > 0, str(fit)[:400] or err[-300:])
    _, report, err = ctx.run(impl("shrunk-top-p"), "--suite", "ordering", "--no-batches")
    fit = (report or {}).get("diagnosis", {})
    named = [f"{c['id']}: {c['causes']}" for c in (report or {}).get("cases", [])
             if set(c.get("causes", [])) - {"topk_ties=keep_all"}]
    ctx.check("sieve run of a top-p rule outside the axes with topk_ties=keep_all besides: the "
              "fit names keep_all, and no failure is blamed on anything else (a boundary value, "
              "the nearest value of an axis no value fits, a misreading the unexplained failures "
              "contradict)",
              ctx.departures(fit.get("rule") or {}) == {"topk_ties": "keep_all"} and not named
              and set(fit.get("misreadings") or []) <= set(fit.get("misreadings_contradicted"))
              and fit.get("explained", 0) < fit.get("failures", 0),
              f"named {named[:3]}, fit {str(fit)[:300]} {err[-200:]}")
    _, report, err = ctx.run(impl("unchecked"), "--suite", "special-values", "--no-batches")
    fit = (report or {}).get("diagnosis", {})
    named = [f"{c['id']}: {c['detail'][:80]}" for c in (report or {}).get("cases", [])
             if c["outcome"] != "pass" and c.get("causes")]
    kinds = {g.get("kind", "") for g in fit.get("unexplained", [])}
    ctx.check("sieve run on special-values alone, of a sampler that checks no logit: no case "
              "blamed on an axis value or a reading (an overflow that is not checked is not "
              "multiply-by-temperature, nor t0=argmax), every failure in the group of answers "
              "where DeepInfer rejects the logits",
              report and not named and not ctx.departures(fit.get("rule") or {})
              and fit.get("failures", 0) > 0 and fit.get("explained") == 0
              and kinds == {"filter: an answer where the rule's is an error (invalid_logits, "
                            "field 'logits')"},
              f"named {named[:2]}, rule {fit.get('rule')}, groups {kinds} {err[-200:]}")
    _, report, err = ctx.run(impl("frequency-ignored"), "--suite", "penalties", "--no-batches")
    fit = (report or {}).get("diagnosis", {})
    named = [f"{c['id']}: {c['causes']}" for c in (report or {}).get("cases", [])
             if c["outcome"] != "pass" and c.get("causes")]
    unsure = {a: x.get("cause_may_lie_elsewhere") for a, x in fit.get("axes", {}).items()
              if not x["fits"]}
    ctx.check("sieve run of a port that ignores the frequency penalty: no failure blamed on an "
              "axis, and penalty_tokens, whose case it fails, reads 'no value fits, or another "
              "cause', since failures about no axis are unexplained too",
              report and not named and fit.get("failures", 0) > 0
              and unsure == {"penalty_tokens": True},
              f"named {named[:2]}, unfit {unsure} {err[-200:]}")
    got, matches = fingerprint(ctx, impl("frequency-ignored"))
    ctx.check("fingerprint of that port asks each additive penalty it offers: penalty_tokens "
              "'no value fits' (the frequency penalty moves no token), and no profile matches",
              got.get("penalty_tokens") == "no value fits" and not matches,
              f"penalty_tokens {got.get('penalty_tokens')}, matches {matches}")
    _, report, err = ctx.run(impl("min-p-on-logits"), "--suite", "penalties", "--no-batches")
    scale = (report or {}).get("diagnosis", {}).get("axes", {}).get("min_p_scale", {})
    ctx.check("sieve run of a min-p measured on the logits: min_p_scale 'no value fits' (each "
              "scale fails one of its cases), not undetermined between the two",
              scale.get("fits") is False and scale.get("nearest") == "scaled",
              f"{scale} {err[-200:]}")
    report = ctx.json("fingerprint", "--impl", impl("min-p-on-logits"))
    table = {a["axis"]: a["verdict"] for a in report["axes"] if a["axis"].startswith("min_p")}
    joint = {a: v for a, v in report["diagnosis"]["rule"].items() if a.startswith("min_p")}
    kinds = {g["kind"] for g in report["diagnosis"]["unexplained"]}
    ctx.check("its fingerprint and the fit over its probes agree: no value fits on the min-p "
              "axes, and the rows it answers NaN are grouped as NaN logprobs",
              set(table.values()) == {"no value fits"} and set(joint.values()) == {None}
              and "filter: NaN logprobs where the rule's are not" in kinds,
              f"table {table}, joint {joint}, groups {kinds}")
    for name, key in (("probability", "probability"), ("probability-logit", "logit")):
        got, _ = fingerprint(ctx, impl(name))
        ctx.check(f"fingerprint of a sampler answering in probability space, ranking by {key}, "
                  f"finds rank_key {key}", got.get("rank_key") == key, f"got {got}")


def diff_kinds(ctx):
    """A difference is "tied ids" only where the tokens kept apart tie in the request."""
    impl = f"exec:{ctx.python} {OUTSIDE} presence-per-occurrence"
    out = ctx.cmd("diff", "profile:deepinfer", impl, "--suite", "penalties", "--format", "json")
    kinds = {c["id"]: c["kind"] for c in json.loads(out.stdout or "{}").get("cases", [])}
    ctx.check("sieve diff of a port taking the presence penalty per occurrence: presence-counts-"
              "once, which keeps token 1 (logit 1.5) for token 0 (logit 2), differs in values, "
              "not in tied ids", kinds.get("penalties/presence-counts-once") == "values",
              f"{kinds} {out.stderr[-200:]}")


def diffs(ctx):
    out = ctx.cmd("diff", "profile:deepinfer", "profile:vllm", "--suite", "ordering")
    line = next((li for li in out.stdout.split("\nboundary (")[0].splitlines()
                 if "seed-examples/000-order-example-keeps-2 (values)" in li), "")
    ctx.check("sieve diff deepinfer vllm shows the (0.5, 0.3, 0.2) order example under topp_scope",
              out.returncode == 1 and "kept {0,1};" in line and "| kept {0};" in line,
              out.stdout[:300])
    both = ctx.cmd("diff", "profile:deepinfer", "rule:boundary=ge,topp_ties=highest", "--suite",
                   "ordering", "--format", "json")
    fits = json.loads(both.stdout or "{}")
    departs = {a: v for a, v in (fits.get("fit_b") or {}).items()
               if v and v != (fits.get("fit_a") or {}).get(a)}
    ctx.check("sieve diff fits each side's rule as sieve run does: two departures at once, both "
              "named", departs == {"boundary": "ge", "topp_ties": "highest"}, str(departs))
    empty = ctx.cmd("diff", f"exec:{FAKES / 'empty-answers.sh'}", "profile:deepinfer", "--suite",
                    "ordering")
    ctx.check("sieve diff of an implementation answering {} finds every case different, either way",
              empty.returncode == 1 and re.search(r"differ on (\d+) of \1 cases", empty.stdout),
              empty.stdout[:200])
    none = ctx.cmd("diff", "profile:tgi", "profile:deepinfer", "--suite", "penalties")
    ctx.check("sieve diff that compares no case (an engine's profile takes no penalty) gives "
              "no verdict: exit 2, saying so",
              none.returncode == 2 and "no case was compared" in none.stderr, none.stderr[-200:])
    impl = f"exec:{ctx.python} {OUTSIDE} min-p-on-logits"
    text = ctx.cmd("diff", "profile:deepinfer", impl, "--suite", "penalties").stdout
    ctx.check("sieve diff's line of the rule each side follows names the axes no value fits, as "
              "sieve run does", f"{impl[5:]}: deepinfer" in text
              and "no value fits: min_p_scale" in text.split(impl[5:] + ":")[-1].splitlines()[0],
              text[:600])
    same = ctx.cmd("diff", "profile:deepinfer", f"exec:{ctx.sieve} serve", "--suite", "ordering")
    ctx.check("sieve diff of the oracle with itself finds nothing", same.returncode == 0,
              same.stdout[:200])
    faithful = ctx.cmd("diff", "profile:deepinfer", f"lib:{ctx.mutants}/libport-faithful.so",
                       "--suite", "speculative")
    n = sum(c["suite"] == "speculative" for c in fixtures()["cases"])
    ctx.check(f"sieve diff finds no difference between the oracle and the faithful port's "
              f"speculate ({n} cases)", f"differ on 0 of {n} cases" in faithful.stdout,
              faithful.stdout[-300:])
    wrong = ctx.cmd("diff", "profile:deepinfer", f"lib:{ctx.mutants}/libspec-accept-le.so",
                    "--suite", "speculative")
    ctx.check("sieve diff files spec-accept-le's differences under the spec_accept axis",
              "cases about spec_accept (2)" in wrong.stdout and "u-zero-with-p-zero" in wrong.stdout,
              wrong.stdout[-400:])


def survive_crashes(ctx):
    """fingerprint and diff survive implementations that crash on every request or exit after
    hello (the next write meets a closed pipe): no death by a signal, every axis without an
    answer says so, and the crashes are counted; diff skips the ops a side does not offer."""
    n = len(ctx.json("axes"))
    for fake in ("crashes-after-hello.sh", "exits-after-hello.sh"):
        impl = f"exec:{FAKES / fake}"
        p = ctx.cmd("fingerprint", "--impl", impl, env=ctx.env(), timeout=300)
        axes = p.stdout.splitlines()[1:1 + n]
        ctx.check(f"sieve fingerprint of {fake} reports every axis without an answer and ends",
                  p.returncode == 0 and len(axes) == n and all("not determined" in a for a in axes)
                  and "no axis determined" in p.stdout and "requests crashed" in p.stdout,
                  f"exit {p.returncode}: {p.stdout[-300:]} {p.stderr[-200:]}")
        d = ctx.cmd("diff", "profile:deepinfer", impl, "--suite", "position", env=ctx.env(),
                    timeout=300)
        ctx.check(f"sieve diff with {fake} reports each case's crash and ends",
                  d.returncode == 1 and "crash: the implementation" in d.stdout and
                  "each time restarted" in d.stdout, f"exit {d.returncode}: {d.stdout[:300]}")
    d = ctx.cmd("diff", "profile:deepinfer", f"exec:{ctx.python} {ctx.py_adapter}", "--suite",
                "ordering", "--suite", "position", timeout=300)
    ctx.check("sieve diff skips the ops an implementation does not offer, and says so",
              d.returncode == 0 and "differ on 0 of" in d.stdout and "cases skipped" in d.stdout,
              f"exit {d.returncode}: {d.stdout[:300]}")


def checks(ctx):
    fingerprints(ctx)
    outside_the_axes(ctx)
    diffs(ctx)
    diff_kinds(ctx)
    survive_crashes(ctx)
