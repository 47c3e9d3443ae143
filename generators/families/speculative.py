"""Speculative verification: the accept test (case 2), the residual draw after a rejection
(case 1), the bonus token (case 0), greedy drafts, and the errors (oracle/SPEC.md, "Speculative
decoding"; 000:52, 000:59)."""
import math

import fixture_format as ff
import reference as ref

FAMILY = "speculative"
SUITE = "speculative"
DESCRIPTION = ("Draft token j is accepted when u * q < p, u the case-2 uniform at t + j, p and q "
               "the processed target and draft rows; the first rejection draws from "
               "max(p - q, 0) with case 1 and stops; after n acceptances the bonus is the case-0 "
               "sample of target row n (000:52; our reading, oracle/SPEC.md).")

# The mat/floor row of seed 000:21-23 and a few others to build chains from.
PANEL = [2.0, 1.5, 1.0, 0.3, -0.2, -1.5]
ROWS = [[0.5, 2.0, -1.0, 1.0, 0.0, 1.5], [1.0, 1.0, 1.0, 1.0, 1.0, 1.0],
        [3.0, 0.0, 2.0, 0.5, -0.5, 1.0], [-1.0, 0.0, 1.0, 2.0, 3.0, 4.0],
        [2.0, 2.0, 0.0, 0.0, -1.0, -1.0], [0.0, 1.0, 0.0, 1.0, 0.0, 1.0]]


def P(t=1.0, top_p=1.0, top_k=-1) -> ref.Params:
    """Parameters as the request gives them: top_k left out when it is off."""
    return ref.Params(t, top_p, top_k, top_k != -1)


def _seed_for_u_zero(pos: int) -> int:
    """The seed whose accept-test uniform at `pos` is exactly 0 (combined = 0, 000:45-47)."""
    seq = ((pos * 3 + 2) * ref.GOLDEN) & ref.MASK64
    return (-(seq ^ ((seq << 13) & ref.MASK64))) & ref.MASK64


def _chains(F, c):
    """Whole chains: q = p accepts every draft and takes the bonus; a draft the target removes
    is rejected at any depth."""
    out = []
    for n in range(1, 6):
        target = ROWS[:n] + [PANEL]
        tokens = [1, 0, 2, 3, 4][:n]
        out.append(c(f"{F}/q-equals-p-chain-of-{n}-accepts-all-and-draws-the-bonus", "000:52",
                     f"{n} drafts with draft rows equal to the target rows (p = q) are all "
                     f"accepted; the bonus is row {n}'s case-0 sample.", target, tokens, ROWS[:n],
                     seed=11 + n, pos=40 * n))
    for depth in range(5):
        tokens = [4, 3, 2, 1, 4]
        tokens[depth] = 5  # the target's top_k 4 removes token 5; the draft keeps it
        rows = [[0.0, 0.5, 1.0, 1.5, 2.0, -3.0]] * 6
        before = f"{depth} drafts with p = q pass, then " if depth else ""
        out.append(c(f"{F}/target-removed-draft-rejected-at-depth-{depth}-of-5", "000:52",
                     f"Chain of 5: {before}draft {depth}, removed by the target's top_k 4 "
                     "(p = 0), is rejected and replaced.",
                     rows, tokens, rows[:5], P(1.0, 1.0, 4), P(),
                     seed=3 + depth, pos=1000 + depth))
    return out


def _tests(F, c):
    """Single accept tests that separate the comparison and the uniforms."""
    out = []
    flat = [1.0, 1.0, 1.0, 1.0]
    for pos in (5, 77):
        out.append(c(f"{F}/u-zero-with-p-zero-rejects-pos-{pos}", "000:52",
                     "The accept test's u is exactly 0 and the target removes the draft (p = 0): "
                     "0 * q < 0 is false, so it is rejected.",
                     [flat, flat], [3], [flat], P(1.0, 1.0, 3), seed=_seed_for_u_zero(pos),
                     pos=pos, axis="spec_accept"))
    for token, seed in ((2, 21), (4, 22)):
        out.append(c(f"{F}/draft-removed-q-zero-is-accepted-token-{token}", "000:52",
                     f"The draft's top_k 1 removes token {token} (q = 0), the target keeps it "
                     "(p > 0): it is accepted.",
                     [PANEL, PANEL], [token], [PANEL], P(), P(1.0, 1.0, 1), seed=seed, pos=3,
                     axis="spec_q_zero"))
    kept3 = [-3.0, 2.0, 1.5, 1.0, 0.3, -2.0]
    for seed in (31, 32):
        out.append(c(f"{F}/empty-residual-is-drawn-from-p-seed-{seed}", "000:52",
                     "p = q with top_k 3 on both; draft 4 (p = q = 0) is rejected, and "
                     "max(p - q, 0) being 0, p gives the replacement.",
                     [kept3, kept3], [4], [kept3], P(1.0, 1.0, 3), P(1.0, 1.0, 3), seed=seed,
                     pos=seed, axis="spec_empty_residual"))
    for seed in range(40, 52):
        out.append(c(f"{F}/one-draft-seed-{seed}", "000:52",
                     "One draft from a row at another temperature: accepted when u < p/q, else "
                     "replaced from max(p - q, 0).",
                     [PANEL, ROWS[2]], [seed % 6], [ROWS[0]], P(0.8, 0.95, -1),
                     P(1.3, 1.0, -1), seed=seed, pos=seed * 7))
    return out


def _drafts(F, c):
    """Greedy drafts, filters on both sides, residuals with ties, a larger vocabulary."""
    out = []
    # Positions where seed 60's tests accept 0, 1, 2 and all 3 greedy drafts.
    for accepted, pos in ((0, 3), (0, 4), (1, 2), (1, 6), (2, 17), (2, 27), (3, 0), (3, 1)):
        out.append(c(f"{F}/greedy-draft-chain-of-3-accepts-{accepted}-pos-{pos}", "000:52",
                     f"Greedy drafts (q one-hot, accepted when u < p): {accepted} of 3 pass"
                     + ("; the replacement is drawn from p without the draft."
                        if accepted < 3 else "; the bonus is row 3's case-0 sample."),
                     [PANEL, ROWS[0], ROWS[2], ROWS[3]], [0, 1, 0], None, P(0.7, 0.9, -1),
                     seed=60, pos=pos))
    for seed in range(70, 76):
        out.append(c(f"{F}/filters-on-both-sides-seed-{seed}", "000:52",
                     "Target top_p 0.9, top_k 3; draft T 0.6, top_k 2: p and q are each side's "
                     "processed rows.",
                     [PANEL, ROWS[3], ROWS[4]], [0, 4], [ROWS[2], ROWS[3]],
                     P(1.0, 0.9, 3), P(0.6, 1.0, 2), seed=seed, pos=2 * seed,
                     axis=("spec_q", "speculate")))
    for seed in range(80, 84):
        out.append(c(f"{F}/residual-with-ties-seed-{seed}", "000:52",
                     "p flat over 4 tokens, q mostly on token 0: the residual ties on tokens 1-3, "
                     "drawn in token order.",
                     [[1.0, 1.0, 1.0, 1.0]] * 2, [0], [[3.0, 0.0, 0.0, 0.0]], seed=seed,
                     pos=seed))
    big = [[math.sin(0.37 * i + k) * 4.0 for i in range(512)] for k in range(3)]
    for seed in (90, 91, 92):
        out.append(c(f"{F}/v512-chain-of-2-seed-{seed}", "000:52",
                     "V = 512 with top_p 0.9 on the target and top_k 40 on the draft; both drafts "
                     "are tokens both filters keep.",
                     big, [19, 118], big[1:], P(1.0, 0.9, -1), P(1.0, 1.0, 40),
                     seed=seed, pos=seed))
    return out


def _panel(F, c):
    """000:57's draw example where it applies: mat drafted greedily, then tested."""
    pos = ff.find_position(5, 0.7, 0.72, sample_case=2)
    return [c(f"{F}/000-panel3-greedy-mat-rejected-gives-floor", "000:21-23,000:57",
              "Panel 2's (0.622, 0.378): a greedy mat meets u = 0.70..0.72 > 0.622, is "
              "rejected, and floor is drawn.",
              [PANEL, PANEL], [0], None, P(1.0, 0.8, 2), seed=5, pos=pos)]


def _errors(F, c):
    flat = [1.0, 1.0, 1.0]
    nan_row = [1.0, float("nan"), 1.0]
    return [
        c(f"{F}/draft-token-outside-the-vocabulary-is-an-error", "000:52",
          "A draft token id 3 in a row of 3 logits is an error (SIEVE_EDRAFTTOKEN).",
          [flat, flat], [3], [flat]),
        c(f"{F}/target-parameters-are-checked-before-draft-tokens", "000:32",
          "top_p 0 on the target and a draft token outside the row: the parameter error comes "
          "first.",
          [flat, flat], [3], [flat], P(1.0, 0.0, -1)),
        c(f"{F}/an-unreached-target-row-is-still-checked", "000:11",
          "The first draft is rejected (p = 0) and the bonus row holds a NaN: every row is "
          "checked first, so SIEVE_ENAN.",
          [flat, nan_row], [2], [flat], P(1.0, 1.0, 1)),
        c(f"{F}/draft-logits-are-checked-before-draft-tokens", "000:11",
          "A NaN in the draft row and a draft token outside the row: the logits error comes "
          "first.", [flat, flat], [5], [nan_row]),
    ]


def cases():
    F = FAMILY

    def c(cid, seed_ref, description, target, tokens, draft=None, tp=P(),
          dp=P(), seed=0, pos=0, axis=("speculate",)):
        return ff.speculate_case(cid, F, seed_ref, description, target, tokens, draft, tp, dp,
                                 seed, pos, axis=axis)

    return _chains(F, c) + _tests(F, c) + _drafts(F, c) + _panel(F, c) + _errors(F, c)
