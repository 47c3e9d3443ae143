"""One module per fixture family; make_fixtures.py writes them in this order."""
from . import (draw, engine, hash, large_vocab, logprobs, ordering, penalties, positions,
               sample, seed_examples, special, speculative, temperature, ties, validation)

ALL = [seed_examples, validation, ordering, ties, temperature, large_vocab, logprobs, engine,
       hash, draw, sample, positions, special, speculative, penalties]
