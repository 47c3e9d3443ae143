"""Protocol v1 glue shared by the engine adapters beside this file (harness/protocol/PROTOCOL.md).

The adapters (vllm_adapter.py, hf_transformers_adapter.py, sglang_adapter.py) put an installed
engine's own sampler code through sieve. This module holds everything that is not the engine:
reading request lines, strict objects, numbers (null, "nan", "inf", "-inf"), float32 logits,
seeds and positions, errors as {"error": {"kind", "field", "message"}}, and writing answers.
Every line gets exactly one answer line; a malformed line gets an error and the loop goes on.

An adapter subclasses `Engine` and implements what the engine does:

    normalize(params) -> state       the engine's own parameter validation/normalization (params
                                     also holds the sampling options and the row's token ids,
                                     when the engine takes any: `sampling_options`); raise
                                     ParamError (or let the engine's exception through: its field
                                     is read from it) for parameters the engine rejects
    public_params(state) -> dict     the normalized {"temperature", "top_p", "top_k"}
    filter_row(logits, state)        float32 logits (1-D tensor) -> processed logprobs (-inf for
                                     removed tokens), as the engine computes them
    sample_row(logits, state, rng_seed, n_top) -> (token, logprob, [(id, logprob), ...])

and sets `name`, `version`, `ops` (a subset of "validate", "filter", "sample"), the
`sampling_options` it applies (hello lists them; a row or validate request naming another gets an
invalid_params error naming it, as the protocol says), or `unavailable` when the engine cannot be imported (then
hello offers no op and every other op is unsupported).

The glue adds no sampling logic. It does not reject NaN, +inf, empty rows or rows without a
finite logit on its own: those go to the engine, and an exception the engine raises on the row
is that row's `invalid_logits` error. Logits outside the float32 range are rejected here, as the
protocol rounds logits to float32 on input.
"""

import hashlib
import json
import math
import os
import sys

import numpy as np
import torch

PARAM_FIELDS = ("temperature", "top_p", "top_k")
SAMPLING_FIELDS = ("min_p", "frequency_penalty", "presence_penalty", "repetition_penalty",
                   "penalty_last_n")
ID_FIELDS = ("output_ids", "prompt_ids")
MAX_EXACT_INT = 2**53
U64_MAX = 2**64 - 1


class ProtocolError(Exception):
    """An answer {"error": {...}}: kind is invalid_params, invalid_logits, invalid_request or
    unsupported_op; field names the field at fault ("" when the line is not a JSON object)."""

    def __init__(self, kind, field, message):
        super().__init__(message)
        self.kind, self.field, self.message = kind, field, message

    def answer(self):
        return {"error": {"kind": self.kind, "field": self.field, "message": self.message}}


def ParamError(field, message):
    return ProtocolError("invalid_params", field, message)


def request_error(field, message):
    return ProtocolError("invalid_request", field, message)


def param_field_of(exc):
    """The parameter an engine's exception is about: an explicit attribute (vLLM's
    VLLMValidationError.parameter), else the first of temperature/top_p/top_k named in its
    message; "" when it names none."""
    fields = PARAM_FIELDS + SAMPLING_FIELDS
    for attr in ("parameter", "field"):
        value = getattr(exc, attr, None)
        if isinstance(value, str) and value in fields:
            return value
    text = str(exc)
    found = [(text.find(f), f) for f in fields if f in text]
    return min(found)[1] if found else ""


def engine_param_error(engine_name, exc):
    """The invalid_params answer for an exception the engine raised while validating parameters."""
    message = f"{engine_name} rejected the parameters: {type(exc).__name__}: {exc}"
    field = param_field_of(exc)
    if not field:
        return ProtocolError("invalid_params", "", message)
    return ProtocolError("invalid_params", field, message)


# ---------------------------------------------------------------------------------------------
# Reading requests


def _pairs(pairs):
    obj = {}
    for key, value in pairs:
        if key in obj:
            raise request_error(key, f'duplicate key "{key}"')
        obj[key] = value
    return obj


def _no_constant(name):
    raise request_error("", f"{name} is not JSON (write the string \"nan\", \"inf\" or \"-inf\")")


def parse_line(line):
    try:
        request = json.loads(line, object_pairs_hook=_pairs, parse_constant=_no_constant)
    except ProtocolError:
        raise
    except (ValueError, RecursionError) as e:
        raise request_error("", f"the line is not JSON: {e}") from None
    if not isinstance(request, dict):
        raise request_error("", "a request must be a JSON object")
    return request


def check_keys(obj, allowed, path):
    if not isinstance(obj, dict):
        raise request_error(path.rsplit(".", 1)[-1], f"{path} must be a JSON object")
    for key in obj:
        if key not in allowed:
            raise request_error(key, f'{path}: unknown key "{key}"')


def is_number(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def number(x):
    """A protocol number: a JSON number, null (-inf) or "nan", "inf", "-inf"; None otherwise."""
    if x is None:
        return -math.inf
    if isinstance(x, str) and x in ("nan", "inf", "-inf"):
        return float(x)
    if is_number(x):
        return x
    return None


class Params:
    """Parameters as the request gave them (absent ones take the protocol defaults T = 1,
    top_p = 1, top_k = -1). temperature and top_p are floats; top_k keeps the JSON type (an int
    for an integral JSON number, a float otherwise) so that the engine sees what a caller of its
    API would pass. `given` names the fields present in the request."""

    def __init__(self, temperature=1.0, top_p=1.0, top_k=-1, given=(), options=None):
        self.temperature, self.top_p, self.top_k = temperature, top_p, top_k
        self.given = frozenset(given)
        self.options = dict(options or {})  # the sampling options given, by name
        self.output_ids, self.prompt_ids = (), ()  # the row's, for the penalties

    def __repr__(self):
        return f"Params(temperature={self.temperature!r}, top_p={self.top_p!r}, top_k={self.top_k!r})"


class Normalized:
    """What normalize returns for an engine whose sampler needs the row's token ids too: the
    engine's own normalized parameters (`sp`, its SamplingParams) and the row's Params (`row`,
    whose output_ids and prompt_ids its penalties count)."""

    def __init__(self, sp, row):
        self.sp, self.row = sp, row


def parse_params(obj, path, options=(), engine_name="the engine"):
    """The row's parameters; a sampling option the engine does not take (`options`) is an
    invalid_params error naming it."""
    if obj is None:
        return Params()
    check_keys(obj, PARAM_FIELDS + SAMPLING_FIELDS, path)
    taken = {}
    for key in SAMPLING_FIELDS:
        if key not in obj:
            continue
        if key not in options:
            raise ParamError(key, f"{path}.{key}: {engine_name} does not take {key}")
        value = obj[key] if key == "penalty_last_n" else number(obj[key])
        if key == "penalty_last_n":
            value = parse_int(value, f"{path}.{key}", key)
        elif value is None:
            raise ParamError(key, f"{path}.{key} must be a number")
        taken[key] = float(value) if key != "penalty_last_n" else value
    values = {}
    for key in PARAM_FIELDS:
        if key not in obj:
            continue
        value = number(obj[key])
        if value is None:
            raise ParamError(key, f"{path}.{key} must be a number")
        if key != "top_k":
            try:
                value = float(value)
            except OverflowError:
                raise ParamError(key, f"{path}.{key} is outside the float64 range") from None
        values[key] = value
    return Params(**values, given=values.keys(), options=taken)


def parse_ids(row, params, path):
    """The row's output_ids and prompt_ids (arrays of integers) onto params, as given: which of
    them the engine counts, and what it makes of one outside the vocabulary, is the engine's."""
    for key in ID_FIELDS:
        ids = row.get(key, [])
        if not isinstance(ids, list):
            raise request_error(key, f"{path}.{key} must be an array of integers")
        setattr(params, key, tuple(parse_int(x, f"{path}.{key}[{i}]", key)
                                   for i, x in enumerate(ids)))


def parse_logits(item, path):
    if not isinstance(item, list):
        raise ProtocolError("invalid_logits", "logits", f"{path} must be an array of numbers")
    values = []
    for i, x in enumerate(item):
        value = number(x)
        if value is None:
            raise ProtocolError("invalid_logits", "logits",
                                f"{path}[{i}] must be a number or null (-inf)")
        try:
            values.append(float(value))
        except OverflowError:
            raise ProtocolError("invalid_logits", "logits",
                                f"{path}[{i}] is outside the float32 range") from None
    doubles = np.array(values, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        singles = doubles.astype(np.float32)
    bad = np.flatnonzero(np.isinf(singles) & ~np.isinf(doubles))
    if bad.size:
        i = int(bad[0])
        raise ProtocolError("invalid_logits", "logits",
                            f"{path}[{i}] = {values[i]!r} is outside the float32 range")
    return torch.from_numpy(singles.copy())


def parse_int(item, path, field):
    if is_number(item):
        if isinstance(item, float) and (not math.isfinite(item) or item != math.floor(item)):
            raise request_error(field, f"{path} must be an integer")
        if abs(item) > MAX_EXACT_INT:
            raise request_error(field, f"{path} must be an integer of magnitude <= 2^53")
        return int(item)
    if isinstance(item, str) and item.isdigit() and item.isascii() and int(item) < 2**63:
        return int(item)
    raise request_error(field, f"{path} must be an integer")


def parse_u64(item, path, field):
    if isinstance(item, str) and item.isdigit() and item.isascii() and int(item) <= U64_MAX:
        return int(item)
    if isinstance(item, str):
        raise request_error(field, f"{path} must be an integer in [0, 2^64-1]")
    value = parse_int(item, path, field)
    if value < 0:
        raise request_error(field, f"{path} must be an integer in [0, 2^64-1]")
    return value


def parse_seed(item, path):
    if isinstance(item, str) and item.isdigit() and item.isascii() and int(item) <= U64_MAX:
        return int(item)
    raise request_error("seed", f"{path} must be a decimal string in [0, 18446744073709551615]")


def parse_case_tag(request):
    case = request.get("case", 0)
    case = parse_int(case, "case", "case")
    if case not in (0, 1, 2):
        raise request_error("case", "case must be 0, 1 or 2")
    tag = request.get("tag", "main")
    if tag not in ("main", "mtp"):
        raise request_error("tag", 'tag must be "main" or "mtp"')
    return case, tag


def parse_engine_options(request, engine_name):
    """Options of DeepInfer's engine (force_topk, blacklist). A malformed object is the request's
    error; otherwise the error every row gets (None for none): a negative force_topk, or any
    option that is on, since the engines here have no such options (0 and [] are accepted)."""
    options = request.get("engine")
    if options is None:
        return None
    check_keys(options, ("force_topk", "blacklist"), "engine")
    force = None
    if "force_topk" in options:
        force = parse_int(options["force_topk"], "engine.force_topk", "force_topk")
    ids = options.get("blacklist", [])
    if not isinstance(ids, list):
        raise request_error("blacklist", "engine.blacklist must be an array")
    for i, x in enumerate(ids):
        parse_int(x, f"engine.blacklist[{i}]", "blacklist")
    if force is not None and force < 0:
        return request_error("force_topk", "engine.force_topk must be >= 0")
    if ids:
        return ProtocolError("unsupported_op", "blacklist",
                             f"{engine_name} has no token blacklist option")
    if force:
        return ProtocolError("unsupported_op", "force_topk",
                             f"{engine_name} has no force_topk option")
    return None


def rng_seed(seed, position, case, tag):
    """A 63-bit seed for the engine's own generator, derived from the request's draw key, so that
    a row draws the same token alone and in any batch."""
    digest = hashlib.blake2b(f"{seed}:{position}:{case}:{tag}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little") >> 1


# ---------------------------------------------------------------------------------------------
# Writing answers


def out_number(x):
    x = float(x)
    if math.isnan(x):
        return "nan"
    if x == math.inf:
        return "inf"
    if x == -math.inf:
        return None
    return x


def out_array(values):
    return [out_number(x) for x in values]


# ---------------------------------------------------------------------------------------------
# The engine interface and the loop


class Engine:
    name = "engine"
    version = "unknown"
    ops = ()
    sampling_options = ()  # the min-p and penalty parameters the adapter applies
    unavailable = None  # a reason, when the engine cannot be imported

    def normalize(self, params):
        raise NotImplementedError

    def public_params(self, state):
        raise NotImplementedError

    def filter_row(self, logits, state):
        raise NotImplementedError

    def sample_row(self, logits, state, seed, n_top):
        raise NotImplementedError

    # -- helpers for the adapters

    def run_on_row(self, fn, *args):
        """Runs an engine computation on a row; an exception is the row's invalid_logits error."""
        try:
            return fn(*args)
        except ProtocolError:
            raise
        except Exception as e:  # the engine's own failure on this row
            raise ProtocolError("invalid_logits", "logits",
                                f"{self.name} raised {type(e).__name__}: {e}") from None

    def checked_normalize(self, params):
        try:
            return self.normalize(params)
        except ProtocolError:
            raise
        except Exception as e:
            raise engine_param_error(self.name, e) from None


def import_engine(module_names, package, src_env, layouts=("",)):
    """Puts $src_env (a source checkout: the folder holding the package, or its root when the
    package is under one of `layouts`) on sys.path, then imports the modules. Returns the list
    of modules, or raises the import's exception."""
    src = os.environ.get(src_env)
    if src:
        for sub in layouts:
            root = os.path.join(src, sub) if sub else src
            if os.path.isdir(os.path.join(root, package)):
                if root not in sys.path:
                    sys.path.insert(0, root)
                break
    import importlib

    return [importlib.import_module(m) for m in module_names]


def package_version(package, module=None, env=None):
    """$env when set (say, the commit of a source checkout), else the module's __version__, else
    the installed distribution's version."""
    if env and os.environ.get(env):
        return os.environ[env]
    version = getattr(module, "__version__", None) if module is not None else None
    if not isinstance(version, str):
        version = None
    if not version:
        try:
            from importlib import metadata

            version = metadata.version(package)
        except Exception:
            version = None
    return str(version or "unknown")


class Server:
    def __init__(self, engine):
        self.engine = engine

    def hello(self, request):
        check_keys(request, ("op", "protocol"), "request")
        if request.get("protocol") != 1 or isinstance(request.get("protocol"), bool):
            raise request_error("protocol", "request.protocol must be 1, the version spoken here")
        e = self.engine
        answer = {"protocol": 1, "name": e.name, "version": e.version,
                  "ops": [] if e.unavailable else list(e.ops), "engine_options": [],
                  "precision": "float32", "rng": "own"}
        if e.unavailable:
            answer["unavailable"] = e.unavailable
        elif e.sampling_options:
            answer["sampling_options"] = list(e.sampling_options)
        return answer

    def require(self, op):
        e = self.engine
        if e.unavailable:
            raise ProtocolError("unsupported_op", "op", f"no op {op}: {e.unavailable}")
        if op not in e.ops:
            raise ProtocolError("unsupported_op", "op", f"{e.name} does not offer op {op}")

    def validate(self, request):
        self.require("validate")
        check_keys(request, ("op", "params"), "request")
        state = self.engine.checked_normalize(self.params_of(request.get("params"), "params"))
        return {"params": {k: out_number(v) if isinstance(v, float) else v
                           for k, v in self.engine.public_params(state).items()}}

    def params_of(self, obj, path):
        return parse_params(obj, path, self.engine.sampling_options, self.engine.name)

    def row_keys(self, *keys):
        """A row's keys: these, and the token ids where the engine takes a sampling option."""
        return keys + (ID_FIELDS if self.engine.sampling_options else ())

    def row_params(self, row, path):
        params = self.params_of(row.get("params"), f"{path}.params")
        parse_ids(row, params, path)
        return params

    def rows_of(self, request):
        rows = request.get("rows")
        if not isinstance(rows, list):
            raise request_error("rows", "request.rows must be an array")
        return rows

    def filter(self, request):
        self.require("filter")
        check_keys(request, ("op", "rows", "engine"), "request")
        row_error = parse_engine_options(request, self.engine.name)
        answers = []
        for i, row in enumerate(self.rows_of(request)):
            path = f"rows[{i}]"
            try:
                check_keys(row, self.row_keys("logits", "params"), path)
                params = self.row_params(row, path)
                logits = parse_logits(row.get("logits"), f"{path}.logits")
                if row_error:
                    raise row_error
                state = self.engine.checked_normalize(params)
                logprobs = self.engine.run_on_row(self.engine.filter_row, logits, state)
                answers.append({"logprobs": out_array(logprobs)})
            except ProtocolError as e:
                answers.append(e.answer())
        return {"rows": answers}

    def sample(self, request):
        self.require("sample")
        check_keys(request, ("op", "rows", "case", "tag", "engine"), "request")
        case, tag = parse_case_tag(request)
        row_error = parse_engine_options(request, self.engine.name)
        answers = []
        for i, row in enumerate(self.rows_of(request)):
            path = f"rows[{i}]"
            try:
                check_keys(row, self.row_keys("logits", "params", "seed", "position",
                                              "top_logprobs"), path)
                params = self.row_params(row, path)
                seed = parse_seed(row.get("seed"), f"{path}.seed")
                position = parse_u64(row.get("position"), f"{path}.position", "position")
                n_top = 0
                if "top_logprobs" in row:
                    n_top = parse_int(row["top_logprobs"], f"{path}.top_logprobs", "top_logprobs")
                logits = parse_logits(row.get("logits"), f"{path}.logits")
                if n_top < 0 or n_top > len(logits):
                    raise request_error("top_logprobs",
                                        f"{path}.top_logprobs must be in [0, {len(logits)}]")
                if row_error:
                    raise row_error
                state = self.engine.checked_normalize(params)
                token, logprob, top = self.engine.run_on_row(
                    self.engine.sample_row, logits, state, rng_seed(seed, position, case, tag),
                    n_top)
                answers.append({"token": int(token), "logprob": out_number(logprob),
                                "top_logprobs": [[int(t), out_number(lp)] for t, lp in top]})
            except ProtocolError as e:
                answers.append(e.answer())
        return {"rows": answers}

    def answer(self, request):
        op = request.get("op")
        handlers = {"hello": self.hello, "validate": self.validate, "filter": self.filter,
                    "sample": self.sample}
        if op in handlers:
            return handlers[op](request)
        if not isinstance(op, str):
            raise request_error("op", "request.op must be a string")
        raise ProtocolError("unsupported_op", "op", f"no op {op}")

    def serve(self, stdin=None, stdout=None):
        stdin = stdin or sys.stdin
        stdout = stdout or sys.stdout
        for line in stdin:
            if not line.strip():
                continue
            try:
                request = parse_line(line)
                if request.get("op") == "bye":
                    check_keys(request, ("op",), "request")
                    print(json.dumps({"bye": True}), file=stdout, flush=True)
                    return 0
                answer = self.answer(request)
            except ProtocolError as e:
                answer = e.answer()
            except Exception as e:  # a bug of the glue or the adapter: still one answer a line
                answer = request_error("", f"{type(e).__name__}: {e}").answer()
            print(json.dumps(answer, allow_nan=False), file=stdout, flush=True)
        return 0


def main(engine):
    torch.set_num_threads(1)
    sys.exit(Server(engine).serve())
