"""A protocol v1 adapter around a batched PyTorch sampler, for `sieve run --impl exec:` and
`sieve fuzz --impl exec:`. The per-row template (python_adapter.py) calls your function once
per row; this one hands it every row of a request at once, as an engine's decode step does, so
sieve's batches (up to 1024 rows in `sieve fuzz`) reach your batched code:

    sieve fuzz --impl exec:"/usr/bin/python3 harness/adapters/python_batched_adapter.py" --time 60

Replace the body of `filter_logprobs_batch` with a call into your sampler. It gets

- `logits`: a float32 tensor [B, V]: the rows of a request that have V tokens (a request whose
  rows differ in size makes one call per size, as an engine's batch has one vocabulary);
- `temperature`: a float64 tensor [B], as the request gives it (DeepInfer scales by the float32
  rounding of the float64 1/T: a float32 T would move 1/T by an ulp at T = 1.1);
- `top_p`: a float32 tensor [B]; `top_k`: an int64 tensor [B], -1 where the request leaves it
  out;

and returns float32 or float64 log-probabilities [B, V], -inf for removed tokens. Each row's
parameters go through `sampler_params` first (your engine's checks; here DeepInfer's, as in the
per-row template): a row it rejects gets its error, and the others are sampled together. The
engine options apply per row before the batch (`python_adapter.engine_logits`). hello declares
"precision": "float32" and "max_batch": MAX_BATCH. Both templates share the protocol glue of
python_adapter.py, which must sit beside this file.
"""

import math
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import python_adapter as glue  # noqa: E402

MAX_BATCH = 1024


def sampler_params(temperature: float, top_k, top_p: float):
    """Your engine's checks and normalization of one row's parameters: here DeepInfer's."""
    return glue.deepinfer_params(temperature, top_k, top_p)


def filter_logprobs_batch(logits, temperature, top_k, top_p):
    """The sampler under test: DeepInfer's rule on a batch, in float32 as engines compute it."""
    scaled = logits * (1.0 / temperature).to(torch.float32)[:, None]  # times the float32 1/T
    probs = torch.softmax(scaled, dim=1)
    order = torch.sort(probs, dim=1, descending=True, stable=True).indices
    ranked = torch.gather(probs, 1, order)
    before = torch.cumsum(ranked, dim=1) - ranked
    rank = torch.arange(logits.shape[1]).expand_as(ranked)
    finite = torch.gather(~torch.isinf(scaled), 1, order)
    # top_p = 1 removes nothing: in float32 a late token's mass before can round above 1.0.
    keep = finite & ((top_p[:, None] >= 1.0) | (before <= top_p[:, None]))
    keep &= (top_k[:, None] < 0) | (rank < top_k[:, None])
    kept = torch.zeros_like(keep).scatter(1, order, keep)
    return torch.log_softmax(torch.where(kept, scaled, -math.inf), dim=1)


def checked_row(row: dict, engine: dict):
    """One row's logits after the engine options and DeepInfer's logit checks, and its checked
    parameters; raises glue.Rejected."""
    t, k, p = sampler_params(*glue.request_params(row.get("params", {})))
    logits = glue.deepinfer_logits(glue.row_logits(row), engine, t)
    return logits, t, -1 if k is None else k, p


def filter_rows(rows: list, engine: dict) -> list:
    """Each row's answer: its error, or its row of the batch of the rows of its vocabulary size
    (one tensor per size, as an engine's batch has one vocabulary)."""
    answers, by_vocab = [None] * len(rows), {}
    for i, row in enumerate(rows):
        try:
            logits, t, k, p = checked_row(row, engine)
            by_vocab.setdefault(len(logits), []).append((i, logits, t, k, p))
        except glue.Rejected as e:
            answers[i] = glue.error(e.field, str(e))
    for batch in by_vocab.values():
        lp = filter_logprobs_batch(torch.stack([b[1] for b in batch]),
                                   torch.tensor([b[2] for b in batch], dtype=torch.float64),
                                   torch.tensor([b[3] for b in batch], dtype=torch.int64),
                                   torch.tensor([b[4] for b in batch], dtype=torch.float32))
        for j, b in enumerate(batch):
            answers[b[0]] = {"logprobs": [glue.protocol_number(x) for x in lp[j].tolist()]}
    return answers


def answer(request: dict) -> dict:
    op = request.get("op")
    if op == "hello":
        return {"protocol": 1, "name": "python-batched-adapter", "version": torch.__version__,
                "precision": "float32", "max_batch": MAX_BATCH,
                "engine_options": ["force_topk", "blacklist"],
                "ops": ["hello", "validate", "filter", "bye"]}
    if op == "validate":
        glue.sampler_params = sampler_params
        return glue.answer(request)
    if op == "filter":
        rows = request.get("rows", [])
        answers = glue.answered(filter_rows, rows, request.get("engine", {}))
        # An exception of the batched sampler is every row's error, naming your line.
        return {"rows": [answers] * len(rows) if isinstance(answers, dict) else answers}
    return glue.error("op", f"no op {op}", "unsupported_op")


if __name__ == "__main__":
    glue.main(answer)
