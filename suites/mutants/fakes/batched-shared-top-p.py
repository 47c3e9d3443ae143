"""The batched template (harness/adapters/python_batched_adapter.py) with a planted bug, as a
user would plant it: above 64 rows its sampler takes the first row's top_p for every row (a
per-request parameter broadcast from one scalar). sieve run's batches stay below that size and
pass; sieve fuzz must catch it and shrink it to a batch of 65 rows."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..",
                                "harness", "adapters"))
import python_batched_adapter as template  # noqa: E402

faithful = template.filter_logprobs_batch


def shared_top_p(logits, temperature, top_k, top_p):
    if logits.shape[0] > 64:
        top_p = top_p[:1].expand_as(top_p)
    return faithful(logits, temperature, top_k, top_p)


template.filter_logprobs_batch = shared_top_p
template.glue.main(template.answer)
