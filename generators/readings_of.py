"""The readings of readings.py that requests separate, with the answer each expects: what
sieve fuzz asks of a failure's minimal case and of the failing rows it kept, to name the
misreading their answers match (harness/fuzz/README.md, "Naming the reading").

Reads one line, {"requests": [...]}: one-row filter and sample requests, and uniform, position
and speculate requests, as sieve fuzz asks them. Writes one line, {"readings": [...]}: for each
request the readings it separates as a fixture case lists them (fixtures/README.md, "Readings"),
built by the same case builders as the fixtures, or null where they refuse the request (a
decision within float reach, on which no fixture is built, or a value they cannot read).
"""

import json
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import fixture_format as ff  # noqa: E402
import reference as ref  # noqa: E402


def number(x) -> float:
    """A protocol number: a JSON number, "inf", "-inf" or "nan" (PROTOCOL.md, "Values")."""
    return float(x)


def logit(x) -> float:
    """A logit, where null also stands for -inf."""
    return -math.inf if x is None else number(x)


def params(p: dict) -> dict:
    """A row's params as the case builders take them: t, top_p, top_k and whether each filter
    parameter was stated."""
    p = p or {}
    return {"t": number(p.get("temperature", 1.0)), "top_p": number(p.get("top_p", 1.0)),
            "top_k": int(p.get("top_k", -1)), "explicit_k": "top_k" in p,
            "explicit_p": "top_p" in p}


def as_params(p: dict) -> ref.Params:
    a = params(p)
    return ref.Params(a["t"], a["top_p"], a["top_k"], a["explicit_k"], a["explicit_p"])


def rest(row: dict) -> ref.Params:
    """A row's min-p, penalties and the ids they count (the other fields at their defaults)."""
    p, d = row.get("params") or {}, ref.Params()
    return ref.Params(min_p=number(p.get("min_p", d.min_p)),
                      frequency_penalty=number(p.get("frequency_penalty", d.frequency_penalty)),
                      presence_penalty=number(p.get("presence_penalty", d.presence_penalty)),
                      repetition_penalty=number(p.get("repetition_penalty", d.repetition_penalty)),
                      penalty_last_n=int(p.get("penalty_last_n", d.penalty_last_n)),
                      output_ids=tuple(int(i) for i in row.get("output_ids", ())),
                      prompt_ids=tuple(int(i) for i in row.get("prompt_ids", ())))


def engine(request: dict) -> ref.Engine:
    e = request.get("engine") or {}
    return ref.Engine(int(e.get("force_topk", 0)), tuple(int(t) for t in e.get("blacklist", ())))


def filter_readings(request: dict) -> list:
    row = request["rows"][0]
    p = params(row.get("params"))
    return ff.filter_case("fuzz", "fuzz", "000", "fuzz", [logit(x) for x in row["logits"]],
                          p["t"], p["top_p"], p["top_k"], engine(request),
                          explicit_k=p["explicit_k"], explicit_p=p["explicit_p"], rest=rest(row))


def sample_readings(request: dict) -> list:
    row = request["rows"][0]
    if rest(row) != ref.Params():
        raise ValueError("the sample case builder takes no min-p nor penalties")
    p = params(row.get("params"))
    one = {"logits": [logit(x) for x in row["logits"]], "t": p["t"], "top_p": p["top_p"],
           "top_k": p["top_k"], "seed": int(row["seed"]), "pos": int(row["position"]),
           "n_top": int(row.get("top_logprobs", 0))}
    return ff.sample_case("fuzz", "fuzz", "000", "fuzz", [one], int(request.get("case", 0)),
                          request.get("tag", "main"), engine(request))


def uniform_readings(request: dict) -> list:
    items = [(int(i["seed"]), int(i["position"]), int(i.get("case", 0)), i.get("tag", "main"))
             for i in request["items"]]
    return ff.uniform_case("fuzz", "fuzz", "000", "fuzz", items)


def position_readings(request: dict) -> list:
    return ff.position_case("fuzz", "fuzz", "000", "fuzz", request["mode"],
                            int(request["seqlen_q"]), int(request["seqlen_k"]),
                            int(request.get("row", 0)))


def speculate_readings(request: dict) -> list:
    target, draft = request["target"], request["draft"]
    rows = draft.get("rows")
    return ff.speculate_case(
        "fuzz", "fuzz", "000", "fuzz", [[logit(x) for x in r] for r in target["rows"]],
        [int(t) for t in draft["tokens"]],
        None if rows is None else [[logit(x) for x in r] for r in rows],
        as_params(target.get("params")), as_params(draft.get("params")), int(request["seed"]),
        int(request["position"]), engine(request))


BUILDERS = {"filter": filter_readings, "sample": sample_readings, "uniform": uniform_readings,
            "position": position_readings, "speculate": speculate_readings}


def readings_of(request: dict):
    """The readings the request separates, or None where the reference cannot build its case."""
    try:
        return BUILDERS[request["op"]](request).get("readings", [])
    except Exception:  # noqa: BLE001 - a request the reference refuses gives no readings
        return None


def main() -> None:
    requests = json.loads(sys.stdin.readline())["requests"]
    sys.stdout.write(json.dumps({"readings": [readings_of(r) for r in requests]}) + "\n")


if __name__ == "__main__":
    main()
