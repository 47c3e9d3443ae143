"""A protocol v1 adapter around a plain Python sampling function, for `sieve run --impl exec:`.

To put your own sampler through sieve, replace the body of `filter_logprobs` (and of
`sampler_params`, which `validate` answers with) with calls into it and run

    sieve run --impl exec:"/usr/bin/python3 harness/adapters/python_adapter.py"

`filter_logprobs` gets the parameters as the request gave them: temperature and top_p as Python
floats, top_k an int, or None when the request leaves it out; nothing is checked, clamped or
defaulted for it beyond that (T = 1 and top_p = 1 when left out), so your engine's own checks,
its temperature 0 and its top_k 0 are what sieve sees. The logits are float32 as the request
gave them, and `engine` its engine options ({"blacklist": [...], "force_topk": N}, DeepInfer's
settings; hello lists them as "engine_options": say [] if your engine has none, and sieve skips
their cases). `options` holds what the row gives beyond temperature, top_p and top_k: min_p,
the penalties (frequency, presence, repetition, penalty_last_n) and the tokens they count
(output_ids, prompt_ids), only those the request names; hello lists the parameters as
"sampling_options" (say [] if your engine has none, and sieve skips their cases), and
`sampler_options` checks them for `validate`. It returns the processed log-probabilities, -inf
for removed tokens; raising `Rejected(field, message)` answers an invalid input as an error
naming the field. DeepInfer's
checks are the helpers `deepinfer_params`, `deepinfer_options` and `deepinfer_logits` (which
applies the engine options and then the penalties between its checks): the template opts into
them, as a port of DeepInfer's rule must; leave them out to keep your engine's own.

It answers hello, validate, filter and bye; sieve skips the suites of the other ops and says so.
From pytest, `sieve.assert_conforms(python_adapter.checked_filter)` runs the same function
through the filter fixtures in process (harness/CI.md).
Any other exception your function raises is answered as that row's error, with its type, its
message and the line of your code it came from; the traceback goes to stderr.
"""

import json
import math
import sys
import traceback

import torch

EPS = 1e-5
# The parameters beyond temperature, top_p and top_k that filter_logprobs takes (hello's
# "sampling_options"): [] if your engine has none of them.
SAMPLING_OPTIONS = ["min_p", "frequency_penalty", "presence_penalty", "repetition_penalty",
                    "penalty_last_n"]


def sampler_params(temperature: float, top_k, top_p: float):
    """Your engine's parameter checks and normalization, as `validate` answers them: here
    DeepInfer's. Return what your filter will use: a greedy (argmax) temperature becomes
    (0.0, 1, 1.0), T = 0, top_k 1, top_p 1 (harness/protocol/PROTOCOL.md, validate); a
    temperature returned as given is read as one the filter scales by."""
    return deepinfer_params(temperature, top_k, top_p)


def sampler_options(options: dict) -> dict:
    """Your engine's checks of min_p and the penalties, after sampler_params: here DeepInfer's."""
    return deepinfer_options(options)


def filter_logprobs(logits: torch.Tensor, temperature: float, top_k, top_p: float, engine=None,
                    options=None):
    """The sampler under test: DeepInfer's rule, written the way an engine would write it."""
    temperature, top_k, top_p = sampler_params(temperature, top_k, top_p)
    options = sampler_options(options or {})
    logits = deepinfer_logits(logits, engine or {}, temperature, options)
    scaled = logits * (1.0 / temperature)  # a float32 multiply by 1/T
    finite = ~torch.isinf(scaled)
    probs = torch.softmax(scaled.double(), dim=0)
    ids = torch.nonzero(finite).flatten()
    ranked = ids[torch.sort(probs[ids], descending=True, stable=True).indices]
    before = torch.cumsum(probs[ranked], 0) - probs[ranked]
    # top_p = 1 removes nothing: in float32 a late token's mass before can round above 1.0.
    kept = int((before <= top_p).sum()) if top_p < 1 else len(ranked)
    if top_k != -1:
        kept = min(kept, top_k)
    if options["min_p"] > 0:  # the ranks whose probability is at least min_p times the largest
        kept = min(kept, int((probs[ranked] >= options["min_p"] * probs[ranked[0]]).sum()))
    masked = torch.full_like(probs, -math.inf)
    masked[ranked[:kept]] = scaled.double()[ranked[:kept]]
    return torch.log_softmax(masked, dim=0)


# ------------------------------------------------------------------ DeepInfer's checks, opt-in


def deepinfer_params(temperature, top_k, top_p):
    """DeepInfer's checks and clamp (seed 000:63), in that order: temperature, top_p, top_k
    (None is off), then a temperature below 1e-5 becomes 1e-5 with top_p 1 and top_k -1."""
    top_k = -1 if top_k is None else top_k
    if not math.isfinite(temperature) or temperature < 0:
        raise Rejected("temperature", "temperature must be a finite number >= 0")
    if not 0 < top_p <= 1:
        raise Rejected("top_p", "top_p must be in (0, 1]")
    if not (top_k == -1 or 1 <= top_k <= 2**31 - 1):
        raise Rejected("top_k", "top_k must be -1 or an integer in [1, 2^31-1]")
    if temperature < EPS:
        return EPS, -1, 1.0
    return temperature, top_k, top_p


def deepinfer_options(options: dict) -> dict:
    """Our checks of min_p and the penalties (oracle/SPEC.md, "Penalties and min-p"), in this
    order after top_k; the options with their defaults (each off)."""
    out = dict(options)
    for field, default, ok in (
            ("min_p", 0.0, lambda x: 0 <= x <= 1),
            ("frequency_penalty", 0.0, lambda x: -2 <= x <= 2),
            ("presence_penalty", 0.0, lambda x: -2 <= x <= 2),
            ("repetition_penalty", 1.0, lambda x: 0 < x <= 2),
            ("penalty_last_n", -1, lambda x: x >= -1)):
        out[field] = options.get(field, default)
        if not ok(out[field]):
            raise Rejected(field, f"{field} is out of its range")
    return out


def deepinfer_logits(logits: torch.Tensor, engine: dict, temperature: float,
                     options=None) -> torch.Tensor:
    """DeepInfer's checks of a row (seed 000:11 and ours) around its engine options (seed
    000:65-68) and the penalties (seed 004:264, before temperature): not empty, no NaN, no +inf;
    then the blacklist and force_topk; then the penalties; then a finite logit left and no finite
    logit whose float32 product with 1/T overflows."""
    if len(logits) == 0 or torch.isnan(logits).any() or torch.isposinf(logits).any():
        raise Rejected("logits", "the row is empty or has a NaN or +inf logit")
    logits = engine_logits(logits, engine)
    if options:
        logits = penalized_logits(logits, options)
    finite = ~torch.isinf(logits)
    if not finite.any():
        raise Rejected("logits", "no finite logit is left in the row")
    if torch.isinf(logits[finite] * (1.0 / temperature)).any():
        raise Rejected("logits", "a logit times 1/T overflows float32")
    return logits


def engine_logits(logits: torch.Tensor, engine: dict) -> torch.Tensor:
    """Engine options run before the sampler (seed 000:65-68): blacklist, then force_topk."""
    out = logits.clone()
    for token in engine.get("blacklist", []):
        if not isinstance(token, int) or not 0 <= token < len(out):
            raise Rejected("blacklist", "a blacklist token id is outside [0, V)")
        out[token] = -math.inf
    n = engine.get("force_topk", 0)
    if not isinstance(n, int) or n < 0:
        raise Rejected("force_topk", "force_topk must be >= 0")
    if 0 < n < len(out):
        out[torch.sort(out, descending=True, stable=True).indices[n:]] = -math.inf
    return out


def penalized_logits(logits: torch.Tensor, options: dict) -> torch.Tensor:
    """Our reading of seed 004's penalties (oracle/SPEC.md): a token counted c > 0 times among the
    last penalty_last_n output tokens (all at -1) loses c * frequency + presence, in float64
    rounded to float32 once, and is then divided by repetition when >= 0, multiplied by it when
    < 0. The prompt's tokens are not counted; -inf stays -inf."""
    output, prompt = options.get("output_ids", []), options.get("prompt_ids", [])
    for field, ids in (("output_ids", output), ("prompt_ids", prompt)):
        if any(not isinstance(i, int) or not 0 <= i < len(logits) for i in ids):
            raise Rejected(field, f"a token id of {field} is outside [0, V)")
    last_n = options["penalty_last_n"]
    counted = output if last_n < 0 else output[max(0, len(output) - last_n):] if last_n else []
    out = logits.clone()
    for token in set(counted):
        logit = float(out[token])
        if logit == -math.inf:
            continue
        logit = float32(logit - (counted.count(token) * options["frequency_penalty"]
                                 + options["presence_penalty"]))
        repetition = options["repetition_penalty"]
        out[token] = float32(logit / repetition if logit >= 0 else logit * repetition)
        if torch.isinf(out[token]):
            raise Rejected("logits", "a penalized logit overflows float32")
    return out


def float32(x: float) -> float:
    return float(torch.tensor(x, dtype=torch.float32))


# ----------------------------------------------------------------------------- glue


class Rejected(ValueError):
    """An input the rule rejects: the error answer names the field (harness/protocol/PROTOCOL.md)."""

    def __init__(self, field, message):
        super().__init__(message)
        self.field = field


def number(x, field):
    """A protocol number: a JSON number, null (-inf in arrays), or "nan", "inf", "-inf"."""
    if x is None:
        return -math.inf
    if isinstance(x, str) and x in ("nan", "inf", "-inf"):
        return float(x)
    if isinstance(x, (int, float)) and not isinstance(x, bool):
        return float(x)
    raise Rejected(field, f"{field} must be a number")


def integer(x, field):
    """top_k as a Python int; 2.0 is 2, 1.5 and "nan" are not integers."""
    value = number(x, field)
    if not math.isfinite(value) or value != int(value):
        raise Rejected(field, f"{field} must be an integer")
    return int(value)


def request_params(params: dict):
    """The parameters as the request gives them: T and top_p 1 when left out, top_k None."""
    t = number(params.get("temperature", 1.0), "temperature")
    p = number(params.get("top_p", 1.0), "top_p")
    k = integer(params["top_k"], "top_k") if "top_k" in params else None
    return t, k, p


def request_options(params: dict, row: dict) -> dict:
    """The sampling options the request names (min_p, the penalties) and the tokens the row
    gives for them to count."""
    options = {name: integer(params[name], name) if name == "penalty_last_n"
               else number(params[name], name) for name in SAMPLING_OPTIONS if name in params}
    options.update({name: row[name] for name in ("output_ids", "prompt_ids") if name in row})
    return options


def row_logits(row: dict) -> torch.Tensor:
    """The row as float32."""
    return torch.tensor([number(x, "logits") for x in row.get("logits", [])], dtype=torch.float32)


def checked_filter(logits, temperature: float, top_k, top_p: float):
    """filter_logprobs on a list of float32 logits and the parameters as a request gives them,
    for sieve.assert_conforms (CI.md); a rejection raises Rejected, a ValueError."""
    return filter_logprobs(torch.tensor(logits, dtype=torch.float32), temperature, top_k, top_p)


def protocol_number(x: float):
    """A float as protocol v1 writes it: -inf as null, NaN and +inf as strings."""
    return None if x == -math.inf else "nan" if math.isnan(x) else "inf" if x == math.inf else x


def filter_row(row: dict, engine: dict) -> dict:
    params = row.get("params", {})
    t, k, p = request_params(params)
    options = request_options(params, row)
    # A port that takes no options keeps filter_logprobs' five arguments.
    lp = (filter_logprobs(row_logits(row), t, k, p, engine, options) if options
          else filter_logprobs(row_logits(row), t, k, p, engine)).tolist()
    return {"logprobs": [protocol_number(x) for x in lp]}


def error(field, message, kind=None):
    params = ("temperature", "top_p", "top_k", "min_p", "frequency_penalty", "presence_penalty",
              "repetition_penalty", "penalty_last_n")
    kind = kind or ("invalid_params" if field in params else
                    "invalid_logits" if field == "logits" else "invalid_request")
    return {"error": {"kind": kind, "field": field, "message": message}}


def answered(fn, *args):
    """fn's answer, a rejection as its error, or any other exception as an error that names
    its type and message (the traceback goes to stderr)."""
    try:
        return fn(*args)
    except Rejected as e:
        return error(e.field, str(e))
    except Exception as e:  # the sampler under test is the user's code
        traceback.print_exc(file=sys.stderr)
        where = traceback.extract_tb(e.__traceback__)[-1]
        return error("implementation", f"{type(e).__name__}: {e} (at {where.filename}:"
                     f"{where.lineno}, in {where.name})", "invalid_request")


def answer(request: dict) -> dict:
    op = request.get("op")
    if op == "hello":
        # The arithmetic of filter_logprobs above: say "float32" if your sampler's is float32.
        return {"protocol": 1, "name": "python-adapter", "version": torch.__version__,
                "precision": "float64", "engine_options": ["force_topk", "blacklist"],
                "sampling_options": SAMPLING_OPTIONS,
                "ops": ["hello", "validate", "filter", "bye"]}
    if op == "validate":
        def validated():
            params = request.get("params", {})
            t, k, p = sampler_params(*request_params(params))
            given = request_options(params, {})
            options = sampler_options(given)
            normalized = {"temperature": protocol_number(float(t)),
                          "top_p": protocol_number(float(p)), "top_k": k}
            # As sieve serve answers: min_p where it is on, the four penalties where one is named.
            penalties = [name for name in SAMPLING_OPTIONS if name != "min_p"]
            shown = (["min_p"] if options.get("min_p") else []) + \
                (penalties if any(name in given for name in penalties) else [])
            normalized.update({name: options[name] if name == "penalty_last_n"
                               else protocol_number(float(options[name])) for name in shown})
            return {"params": normalized}
        return answered(validated)
    if op == "filter":
        engine = request.get("engine", {})
        return {"rows": [answered(filter_row, row, engine) for row in request.get("rows", [])]}
    return error("op", f"no op {op}", "unsupported_op")


def main(respond=None):
    """Answers each request line with `respond`, by default this module's `answer` as it is when
    main runs (a port may have replaced it; the batched template passes its own)."""
    respond = respond or answer
    torch.set_num_threads(1)
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        if request.get("op") == "bye":
            print(json.dumps({"bye": True}), flush=True)
            return
        try:
            line = json.dumps(respond(request), allow_nan=False)
        except (TypeError, ValueError) as e:  # a value your functions returned is not JSON
            line = json.dumps(error("implementation", f"the answer is not JSON: {e}",
                                    "invalid_request"))
        print(line, flush=True)


if __name__ == "__main__":
    main()
