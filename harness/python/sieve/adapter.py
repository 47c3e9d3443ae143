"""Protocol v1 (harness/protocol/PROTOCOL.md) around a Python sampling function, so that
`sieve run` and `sieve fuzz` can put it through the fixtures without a template to copy:

    sieve run --impl exec:"python -m sieve.adapter mysampler:filter"
    sieve run --impl exec:"python -m sieve.adapter mysampler:filter_batch --batched --arrays numpy"
    sieve run --impl exec:"python -m sieve.adapter mysampler:filter --params mysampler:checked"

A row function is called once per row: fn(logits, temperature, top_k, top_p) -> logprobs, with
logits one row of V float32 values. A batched function (--batched) is called once per request and
vocabulary size with every row of that size: fn(logits [B, V] float32, temperature [B] float64,
top_k [B] int64, top_p [B] float32) -> logprobs [B, V]. The arrays are PyTorch tensors, NumPy
arrays or lists (--arrays torch|numpy|list; torch by default).

The parameters are the request's, unchecked: temperature and top_p are floats (1.0 when the
request leaves them out; NaN and inf included), top_k an int, or None when the request leaves it
out (-1 in a batched function's tensor). The function does its engine's own checks: it rejects an
input by raising sieve.Rejected(field, message), or a ValueError whose message names exactly one
of temperature, top_p, top_k, logits (that is the field its error names). Any other exception is
that row's error, naming its type, message and line. A batched call that raises is made again
a row at a time (a batch of one), so that one rejected row does not take the others' answers.

--params MODULE:FUNCTION names the engine's parameter checks, run on each row before the sampler
as an engine validates a request before it joins a batch: params(temperature, top_k, top_p) ->
(temperature, top_k, top_p), what the sampler then gets (top_k None or -1 for none), or it raises
as above. It also answers the validate op (PROTOCOL.md) with what it returns: DeepInfer's rule
clamps a temperature below 1e-5 to (1e-05, -1, 1.0); an engine whose temperature 0 is greedy
(argmax) returns (0.0, 1, 1.0), and sieve reads that as its t0 choice.

hello declares no engine options (sieve skips their cases, and says so) and the ops hello, filter
(validate with --params) and bye; --precision says the arithmetic answers are compared at
(float32 by default, that of real samplers), --name the name reports give the implementation.
"""

import argparse
import array
import importlib
import json
import math
import re
import sys
import traceback

from . import Rejected, _number

FIELDS = ("temperature", "top_p", "top_k", "logits")
KINDS = {"temperature": "invalid_params", "top_p": "invalid_params", "top_k": "invalid_params",
         "logits": "invalid_logits"}
MAX_BATCH = 1024


def error(field, message, kind=None):
    return {"error": {"kind": kind or KINDS.get(field, "invalid_request"), "field": field,
                      "message": message}}


def rejection(e: Exception) -> dict:
    """The error answer of an exception the function raised."""
    if isinstance(e, Rejected):
        return error(e.field, str(e))
    if isinstance(e, ValueError):
        named = [f for f in FIELDS if re.search(rf"\b{f}\b", str(e))]
        if len(named) == 1:
            return error(named[0], str(e))
    where = traceback.extract_tb(e.__traceback__)[-1]
    return error("implementation", f"{type(e).__name__}: {e} (at {where.filename}:{where.lineno}, "
                 f"in {where.name})", "invalid_request")


def number(x, field):
    """A protocol number (sieve._number: null is -inf, "nan", "inf", "-inf" their floats)."""
    try:
        return _number(x)
    except ValueError:
        raise Rejected(field, f"{field} must be a number, not {x!r}") from None


def params(row: dict):
    """(temperature, top_k, top_p) as the request gives them; top_k None when left out."""
    p = row.get("params", {})
    t = number(p.get("temperature", 1.0), "temperature")
    top_p = number(p.get("top_p", 1.0), "top_p")
    if "top_k" not in p:
        return t, None, top_p
    k = number(p["top_k"], "top_k")
    if not math.isfinite(k) or k != int(k):
        raise Rejected("top_k", f"top_k must be an integer, not {p['top_k']!r}")
    return t, int(k), top_p


def protocol_number(x: float):
    """A float as protocol v1 writes it: -inf as null, NaN and +inf as strings."""
    return None if x == -math.inf else "nan" if math.isnan(x) else "inf" if x == math.inf else x


def answer_row(values) -> dict:
    values = values.tolist() if hasattr(values, "tolist") else list(values)
    return {"logprobs": [protocol_number(float(x)) for x in values]}


def float32(values: list) -> list:
    """The values rounded to float32, as Python floats (beyond its range, infinite)."""
    return array.array("f", values).tolist()


class Arrays:
    """The array kind the function takes: torch, numpy or list."""

    def __init__(self, kind: str):
        self.kind = kind
        self.lib = importlib.import_module(kind) if kind != "list" else None

    def make(self, values: list, dtype: str):
        """A list, or a list of rows, as an array of dtype (float32, float64 or int64)."""
        if self.lib is not None:
            make = self.lib.tensor if self.kind == "torch" else self.lib.asarray
            return make(values, dtype=getattr(self.lib, dtype))
        if dtype != "float32":
            return list(values)
        rows = values and isinstance(values[0], list)
        return [float32(v) for v in values] if rows else float32(values)


class Adapter:
    def __init__(self, fn, batched: bool, arrays: Arrays, precision: str, name: str, checks=None):
        self.fn, self.batched, self.arrays, self.checks = fn, batched, arrays, checks
        self.precision, self.name = precision, name

    def hello(self) -> dict:
        hello = {"protocol": 1, "name": self.name, "version": "sieve.adapter",
                 "precision": self.precision, "engine_options": [],
                 "ops": ["hello", "filter"] + (["validate"] if self.checks else []) + ["bye"]}
        if self.batched:
            hello["max_batch"] = MAX_BATCH
        return hello

    def row_params(self, row: dict):
        """The row's parameters, through the engine's checks when there are some."""
        t, k, p = params(row)
        return self.checks(t, k, p) if self.checks else (t, k, p)

    def validate(self, request: dict) -> dict:
        try:
            t, k, p = self.row_params(request)
            return {"params": {"temperature": protocol_number(float(t)),
                               "top_p": protocol_number(float(p)),
                               "top_k": -1 if k is None else int(k)}}
        except Exception as e:  # the checks under test are the user's code
            return rejection(e)

    def one_row(self, row: dict) -> dict:
        try:
            t, k, p = self.row_params(row)
            logits = [number(x, "logits") for x in row.get("logits", [])]
            return answer_row(self.fn(self.arrays.make(logits, "float32"), t, k, p))
        except Exception as e:  # the function under test is the user's code
            return rejection(e)

    def batch(self, rows: list) -> list:
        """Each row's answer: the rows of one vocabulary size go to the function together."""
        answers, by_vocab = [None] * len(rows), {}
        for i, row in enumerate(rows):
            try:
                t, k, p = self.row_params(row)
                logits = [number(x, "logits") for x in row.get("logits", [])]
                k = -1 if k is None else k
                by_vocab.setdefault(len(logits), []).append((i, logits, t, k, p))
            except Exception as e:  # a row the checks reject is left out of the batch
                answers[i] = rejection(e)
        for group in by_vocab.values():
            try:
                for g, values in zip(group, self.call_batch(group)):
                    answers[g[0]] = answer_row(values)
            except Exception:  # asked again a row at a time: one bad row, one error
                for g in group:
                    try:
                        answers[g[0]] = answer_row(self.call_batch([g])[0])
                    except Exception as e:  # the function under test is the user's code
                        answers[g[0]] = rejection(e)
        return answers

    def call_batch(self, group: list) -> list:
        """The function's rows for a group of (index, logits, temperature, top_k, top_p)."""
        got = self.fn(*(self.arrays.make([g[j] for g in group], dtype) for j, dtype in
                        ((1, "float32"), (2, "float64"), (3, "int64"), (4, "float32"))))
        got = got.tolist() if hasattr(got, "tolist") else list(got)
        if len(got) != len(group):
            raise ValueError(f"the batched function returned {len(got)} rows for {len(group)}")
        return got

    def answer(self, request: dict) -> dict:
        op = request.get("op")
        if op == "hello":
            return self.hello()
        if op == "validate" and self.checks:
            return self.validate(request)
        if op != "filter":
            return error("op", f"no op {op}", "unsupported_op")
        rows = request.get("rows", [])
        if not isinstance(rows, list):
            return error("rows", "rows must be a list", "invalid_request")
        return {"rows": self.batch(rows) if self.batched else [self.one_row(r) for r in rows]}


def load(spec: str):
    """The function MODULE:FUNCTION names (FUNCTION may be dotted: Class.method)."""
    module, _, name = spec.partition(":")
    if not module or not name:
        raise SystemExit(f"sieve.adapter: {spec!r} is not MODULE:FUNCTION")
    obj = importlib.import_module(module)
    for part in name.split("."):
        obj = getattr(obj, part)
    if not callable(obj):
        raise SystemExit(f"sieve.adapter: {spec} is not callable")
    return obj


def serve(adapter: Adapter, lines, out) -> None:
    for line in lines:
        if not line.strip():
            continue
        try:
            request = json.loads(line)
        except ValueError as e:
            print(json.dumps(error("", f"the request is not JSON: {e}", "invalid_request")),
                  file=out, flush=True)
            continue
        if isinstance(request, dict) and request.get("op") == "bye":
            print(json.dumps({"bye": True}), file=out, flush=True)
            return
        if not isinstance(request, dict):
            answer = error("", "the request is not a JSON object", "invalid_request")
        else:
            answer = adapter.answer(request)
        try:
            text = json.dumps(answer, allow_nan=False)
        except (TypeError, ValueError) as e:  # a value the function returned is not a number
            text = json.dumps(error("implementation", f"the answer is not JSON: {e}",
                                    "invalid_request"))
        print(text, file=out, flush=True)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(prog="python -m sieve.adapter",
                                 description=__doc__.splitlines()[0])
    ap.add_argument("function", metavar="MODULE:FUNCTION")
    ap.add_argument("--batched", action="store_true")
    ap.add_argument("--arrays", choices=("torch", "numpy", "list"), default="torch")
    ap.add_argument("--precision", choices=("float32", "float64"), default="float32")
    ap.add_argument("--params", metavar="MODULE:FUNCTION")
    ap.add_argument("--name")
    args = ap.parse_args(argv)
    adapter = Adapter(load(args.function), args.batched, Arrays(args.arrays), args.precision,
                      args.name or args.function, load(args.params) if args.params else None)
    if args.arrays == "torch":
        adapter.arrays.lib.set_num_threads(1)
    # The answers are the protocol's only output: anything the function prints goes to stderr.
    out, sys.stdout = sys.stdout, sys.stderr
    serve(adapter, sys.stdin, out)


if __name__ == "__main__":
    main()
