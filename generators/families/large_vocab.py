"""Rows of real vocabulary sizes, sent as recipes and checked by kept-set checksum."""
import fixture_format as ff

FAMILY = "large-vocab"
SUITE = "large-vocab"  # the suite of `sieve run` its cases belong to
DESCRIPTION = ("V = 32000, 128256, 151936 and 262144, with peaked and flat logits, the common "
               "parameter sets and top_k > V. Rows are recipes (fixtures/README.md); the "
               "expected logprobs give the kept count, a checksum of the kept ids and sampled "
               "entries.")

VS = [32000, 128256, 151936, 262144]
PEAKED_PARAMS = [(0.7, 0.9, 50), (1.0, 0.95, -1), (1.0, 1.0, -1)]
FLAT_PARAMS = [(1.0, 1.0, -1), (0.7, 1.0, 50)]


def _about(top_p, top_k):
    """What a row of a real vocabulary size is about: top-k where it alone cuts, else top-p,
    whose float32 mass over a long row may cut at top_p 1 too."""
    return ff.TOP_K if top_k > 0 and top_p == 1.0 else ff.TOP_P


def cases():
    F = FAMILY
    out = []
    for v in VS:
        peaked = ff.recipe(v, v, 20, -19, 40009, 1 << 23)
        flat = ff.recipe(v + 1, v, 2, -2)
        for t, p, k in PEAKED_PARAMS:
            out.append(ff.filter_case(
                f"{F}/peaked-v{v}-t{t}-p{p}-k{k}", F, "000:13-19",
                f"A peaked row of {v} logits (a bulk of sd 1.15 and spikes about 16 above it), "
                f"T {t}, top_p {p}, top_k {k}.", None, t, p, k, recipe_spec=peaked,
                axis=_about(p, k)))
        for t, p, k in FLAT_PARAMS:
            out.append(ff.filter_case(
                f"{F}/flat-v{v}-t{t}-p{p}-k{k}", F, "000:13-19",
                f"{v} logits on 13 levels 0.25 apart (ties in token order), T {t}, top_p {p}, "
                f"top_k {k}.", None, t, p, k,
                recipe_spec=flat, axis=_about(p, k)))
        out.append(ff.filter_case(
            f"{F}/top-k-above-v{v}-keeps-all", F, "000:32",
            f"top_k {v + 1} on a row of {v} logits keeps every token.", None, 1.0, 1.0, v + 1,
            recipe_spec=peaked, axis="top_k_vocab"))
    return out
