"""Seed 004's penalties, before temperature (004:199, 004:264, 004:284-286), and min-p: our
readings of what the seeds leave open (oracle/SPEC.md, "Penalties and min-p")."""
import math

import fixture_format as ff
import reference as ref

FAMILY = "penalties"
SUITE = "penalties"  # the suite of `sieve run` its cases belong to
DESCRIPTION = ("Penalties before temperature, so that top-k filters the final ranking (004:199, "
               "004:284-286): a token counted c times in the last penalty_last_n output tokens "
               "loses c x frequency + presence, then is divided by repetition (multiplied when "
               "negative); the prompt is not counted. Min-p removes p < min_p x the largest "
               "scaled p. Limits and errors.")

P = ref.Params
AT = "004:199,004:284-286"  # the penalty step, before temperature
FORMULA = "004:264"  # frequency and presence add to or subtract from the logits
FORMULA_AXES = ("penalty_formula",)  # a case about the formula, where a reading has it
ROW = [2.0, 1.5, 1.0, 0.0]


def cases():
    return order_cases() + formula_cases() + window_cases() + min_p_cases() + error_cases()


def order_cases():
    """Seed 004's point: a penalty can reorder the top tokens, so top-k keeps another token, and
    the same penalty after temperature gives yet another answer."""
    F, c = FAMILY, ff.filter_case
    after = ("penalty-after-temperature",)
    out = [c(f"{F}/presence-reorders-top-k-1-at-t{t}", F, AT,
             f"Presence 0.75 on token 0 (2.0 to 1.25) at T {t}: top_k 1 keeps token 1, the "
             "final ranking's first.", ROW, t, 1.0, 1, rest=P(presence_penalty=0.75,
                                                               output_ids=(0,)),
             axis="penalty_at", separates=after)
           for t in (0.5, 0.25)]
    out.append(c(f"{F}/presence-reorders-top-k-2", F, AT,
                 "Presence 1.25 on tokens 0 and 1 at T 0.5: top_k 2 keeps tokens 2 and 0 (1.0 "
                 "and 0.75), not 0 and 1.", ROW, 0.5, 1.0, 2,
                 rest=P(presence_penalty=1.25, output_ids=(0, 1)), axis="penalty_at",
                 separates=after))
    out.append(c(f"{F}/frequency-before-temperature-sets-the-probabilities", F, AT,
                 "Frequency 0.5 on token 0 counted twice at T 0.5: the softmax is over 1.0, "
                 "1.5, 1.0, 0.0 divided by 0.5.", ROW, 0.5,
                 rest=P(frequency_penalty=0.5, output_ids=(0, 0)), axis="penalty_at",
                 separates=after))
    out.append(c(f"{F}/penalty-then-top-p-on-the-final-ranking", F, AT,
                 "Presence 1.0 on token 0 at T 0.5, top_p 0.5: top-p keeps token 1 alone, the "
                 "final ranking's first.", ROW, 0.5, 0.5, rest=P(presence_penalty=1.0,
                                                                 output_ids=(0,)),
                 axis="penalty_at", separates=after))
    out.append(c(f"{F}/no-penalty-at-t1-is-the-same-either-side", F, AT,
                 "At T 1 a penalty before or after temperature gives the same row: presence "
                 "0.75 on token 0, top_k 1 keeps token 1.", ROW, 1.0, 1.0, 1,
                 rest=P(presence_penalty=0.75, output_ids=(0,))))
    return out


def formula_cases():
    F, c = FAMILY, ff.filter_case
    signed = [1.0, -1.0, 0.5, -0.5]
    return [
        c(f"{F}/frequency-counts-each-occurrence", F, FORMULA,
          "Frequency 0.5 with token 0 counted 3 times and token 2 once: logits 0.5, 1.5, 0.5, "
          "0.0.", ROW, rest=P(frequency_penalty=0.5, output_ids=(0, 2, 0, 0)),
          axis=FORMULA_AXES),
        c(f"{F}/presence-counts-once", F, FORMULA,
          "Presence 0.375 with token 0 counted 3 times: token 0 loses 0.375 once (1.625), so "
          "top_k 1 keeps it.", ROW, 1.0, 1.0, 1,
          rest=P(presence_penalty=0.375, output_ids=(0, 0, 0)), axis="penalty_formula",
          separates=("presence-per-occurrence",)),
        c(f"{F}/frequency-and-presence-add", F, FORMULA,
          "Frequency 0.25 and presence 0.5, token 1 counted twice: 1.5 - (2 x 0.25 + 0.5) = "
          "0.5.", ROW, rest=P(frequency_penalty=0.25, presence_penalty=0.5, output_ids=(1, 1)),
          axis="penalty_formula", separates=("presence-per-occurrence",)),
        c(f"{F}/negative-penalties-raise-a-logit", F, FORMULA,
          "Frequency -0.5 and presence -1.25 on token 3 (counted twice): 0.0 becomes 2.25, so "
          "top_k 1 keeps token 3.", ROW, 1.0, 1.0, 1,
          rest=P(frequency_penalty=-0.5, presence_penalty=-1.25, output_ids=(3, 3)),
          axis=FORMULA_AXES),
        c(f"{F}/repetition-divides-a-positive-logit-multiplies-a-negative-one", F, FORMULA,
          "Repetition 2 on tokens 0 and 1: 1.0 becomes 0.5 and -1.0 becomes -2.0.", signed,
          rest=P(repetition_penalty=2.0, output_ids=(0, 1)), axis="penalty_formula",
          separates=("repetition-divides-negative",)),
        c(f"{F}/repetition-below-1-raises-a-positive-logit", F, FORMULA,
          "Repetition 0.4 on tokens 2 and 3: 0.5 becomes 1.25 and -0.5 becomes -0.2; top_k 1 "
          "keeps token 2.", signed, 1.0, 1.0, 1,
          rest=P(repetition_penalty=0.4, output_ids=(2, 3)), axis=FORMULA_AXES),
        c(f"{F}/repetition-after-the-additive-penalties", F, FORMULA,
          "Presence 0.5 then repetition 2 on token 0: (1.0 - 0.5) / 2 = 0.25, not 1.0 / 2 - 0.5 "
          "= 0.", signed, rest=P(presence_penalty=0.5, repetition_penalty=2.0,
                                  output_ids=(0,)), axis="penalty_order",
          separates=("penalty_order=repetition_first",)),
        c(f"{F}/repetition-after-the-additive-penalties-changes-what-top-k-keeps", F, FORMULA,
          "Presence 1, then repetition 2 on token 0 of [2, 0.25, -1]: (2 - 1) / 2 = 0.5 is "
          "above 0.25, so top_k 1 keeps token 0.",
          [2.0, 0.25, -1.0], 1.0, 1.0, 1, rest=P(presence_penalty=1.0, repetition_penalty=2.0,
                                                output_ids=(0,)),
          axis="penalty_order", separates=("penalty_order=repetition_first",)),
        c(f"{F}/repetition-sees-the-sign-after-the-additive-penalties", F, FORMULA,
          "Presence 0.75 then repetition 2 on token 2: 0.5 - 0.75 = -0.25 is multiplied, to "
          "-0.5.", signed, rest=P(presence_penalty=0.75, repetition_penalty=2.0,
                                  output_ids=(2,)), axis="penalty_formula",
          separates=("repetition-divides-negative",)),
        c(f"{F}/a-removed-token-stays-removed", F, FORMULA,
          "Blacklisted token 0 counted with presence -2: its logit stays -inf.", ROW,
          engine=ref.Engine(blacklist=(0,)), rest=P(presence_penalty=-2.0, output_ids=(0, 0))),
        c(f"{F}/prompt-tokens-are-not-counted", F, FORMULA,
          "Prompt ids [0, 0] with presence 1.0 and no output: nothing is penalized, top_k 1 "
          "keeps token 0.", ROW, 1.0, 1.0, 1,
          rest=P(presence_penalty=1.0, prompt_ids=(0, 0)), axis="penalty_tokens",
          separates=("penalty_tokens=prompt",)),
        c(f"{F}/prompt-tokens-are-not-counted-by-repetition", F, FORMULA,
          "Prompt ids [0] with repetition 2 and no output: nothing is penalized, so top_k 1 "
          "keeps token 0.", ROW, 1.0, 1.0, 1,
          rest=P(repetition_penalty=2.0, prompt_ids=(0,)), axis="penalty_tokens",
          separates=("penalty_tokens=repetition_prompt", "penalty_tokens=prompt")),
    ]


def window_cases():
    F, c = FAMILY, ff.filter_case
    output = (0, 1, 0, 2)
    out = []
    for n, what in ((-1, "every output token: 0 twice, 1 and 2 once"),
                    (0, "none"), (1, "the last, token 2"), (2, "the last two: tokens 0 and 2"),
                    (9, "all 4 (the window is longer than the output)")):
        out.append(c(f"{F}/penalty-last-n-{n}", F, FORMULA,
                     f"penalty_last_n {n} over output [0, 1, 0, 2] with frequency 0.5 counts "
                     f"{what}.", ROW, rest=P(frequency_penalty=0.5, penalty_last_n=n,
                                            output_ids=output), axis=FORMULA_AXES))
    out.append(c(f"{F}/the-window-does-not-reach-into-the-prompt", F, FORMULA,
                 "penalty_last_n 2 over prompt [1] and output [0] with frequency 0.5 counts "
                 "token 0 alone: logits 1.5, 1.5, 1.0, 0.0.", ROW,
                 rest=P(frequency_penalty=0.5, penalty_last_n=2, output_ids=(0,),
                        prompt_ids=(1,)), axis="penalty_tokens",
                 separates=("penalty_tokens=prompt",)))
    return out


MIN_P_ROW = [3.0, 2.0, 1.0, 0.0]  # p relative to the largest: 1, e^-1, e^-2, e^-3


def min_p_cases():
    F, c = FAMILY, ff.filter_case
    at = "004:255-287"
    out = [c(f"{F}/min-p-{m}", F, at, f"min_p {m} keeps {what}: p / p_max is 1, 0.37, 0.14, "
             "0.05.", MIN_P_ROW, rest=P(min_p=m), axis=axis or "none",
             separates=("min-p-absolute",) if axis else ())
           for m, what, axis in ((0.3, "tokens 0 and 1", "min_p"),
                                 (0.1, "tokens 0, 1 and 2", "min_p"),
                                 (0.01, "every token", None), (1.0, "token 0 alone", None))]
    out += [
        c(f"{F}/min-p-on-scaled-probabilities", F, at,
          "min_p 0.3 at T 2 keeps tokens 0, 1 and 2: scaled, p / p_max is 1, 0.61, 0.37, 0.22.",
          MIN_P_ROW, 2.0, rest=P(min_p=0.3), axis="min_p_scale",
          separates=("min_p_scale=unscaled",)),
        c(f"{F}/min-p-on-scaled-probabilities-at-low-t", F, at,
          "min_p 0.1 at T 0.5 keeps tokens 0 and 1: scaled, p / p_max is 1, 0.14, 0.02, 0.002.",
          MIN_P_ROW, 0.5, rest=P(min_p=0.1), axis="min_p_scale",
          separates=("min_p_scale=unscaled",)),
        c(f"{F}/min-p-1-keeps-every-tied-maximum", F, at,
          "min_p 1 keeps tokens 1 and 2, both at the largest logit.", [0.5, 2.0, 2.0, 1.0],
          rest=P(min_p=1.0), axis="min_p_boundary", separates=("min_p_boundary=remove_equal",)),
        c(f"{F}/min-p-and-top-k-keep-the-smaller-set", F, at,
          "min_p 0.1 (3 tokens) and top_k 2: tokens 0 and 1 stay.", MIN_P_ROW, 1.0, 1.0, 2,
          rest=P(min_p=0.1)),
        c(f"{F}/min-p-and-top-p-keep-the-smaller-set", F, at,
          "min_p 0.3 (2 tokens) and top_p 0.9 (3 tokens): tokens 0 and 1 stay.", MIN_P_ROW,
          1.0, 0.9, rest=P(min_p=0.3), axis="min_p"),
        c(f"{F}/top-p-measures-the-whole-distribution-beside-min-p", F, at,
          "min_p 0.1 keeps 3 tokens; top_p 0.9 keeps token 2 too, as the mass before it is "
          "0.881 of the whole row.",
          MIN_P_ROW, 1.0, 0.9, rest=P(min_p=0.1), axis="min_p_order",
          separates=("min_p_order=first",)),
        c(f"{F}/min-p-after-the-penalties", F, at,
          "Presence 1.5 on token 0 (3.0 to 1.5), min_p 0.5: tokens 1 and 0 stay (p / p_max 1, "
          "0.61).", MIN_P_ROW, rest=P(min_p=0.5, presence_penalty=1.5, output_ids=(0,)),
          axis="min_p"),
    ]
    return out


def error_cases():
    F, c, v = FAMILY, ff.filter_case, ff.validate_case
    out = [
        c(f"{F}/output-id-equal-to-v-is-an-error", F, FORMULA,
          "An output id equal to V is an error naming output_ids.", ROW,
          rest=P(presence_penalty=0.5, output_ids=(0, 4))),
        c(f"{F}/negative-prompt-id-is-an-error", F, FORMULA,
          "A negative prompt id is an error naming prompt_ids.", ROW,
          rest=P(presence_penalty=0.5, prompt_ids=(-1,))),
        c(f"{F}/output-ids-are-checked-before-prompt-ids", F, FORMULA,
          "An output id and a prompt id both out of range: the error names output_ids.", ROW,
          rest=P(presence_penalty=0.5, output_ids=(4,), prompt_ids=(4,))),
        c(f"{F}/a-penalized-logit-beyond-float32-is-an-error", F, FORMULA,
          "Repetition 2 on -3e38 gives -6e38, beyond float32: an overflow error.",
          [1.0, -3e38, 0.5], rest=P(repetition_penalty=2.0, output_ids=(1,)),
          axis="penalty_overflow", separates=("penalty_overflow=minus_inf",)),
    ]
    limits = [("min-p", "min_p", [-0.1, 1.0000001, math.nan, 0.0, 1.0]),
              ("frequency", "frequency_penalty", [-2.5, 2.0000001, math.inf, -2.0, 2.0]),
              ("presence", "presence_penalty", [-2.0000001, 2.5, math.nan, -2.0, 2.0]),
              ("repetition", "repetition_penalty", [0.0, -1.0, 2.0000001, 1e-9, 2.0]),
              ("last-n", "penalty_last_n", [-2, -1, 0, 1000000])]
    for slug, name, values in limits:
        for x in values:
            ok = _accepted(name, x)
            out.append(v(f"{F}/{slug}-{x!r}-is-{'accepted' if ok else 'an-error'}", F, FORMULA,
                         f"{name} {x!r} is {'accepted' if ok else 'an error'}.",
                         rest=P(**{name: x}), stated=(name,), explicit_k=False,
                         axis=("penalty_range",)))
    out.append(v(f"{F}/min-p-is-checked-before-the-penalties", F, FORMULA,
                 "min_p 2 and frequency_penalty 3, both out of range: the error names min_p.",
                 rest=P(min_p=2.0, frequency_penalty=3.0), explicit_k=False))
    out.append(v(f"{F}/top-k-is-checked-before-min-p", F, FORMULA,
                 "top_k 0 and min_p 2, both out of range: the error names top_k.", 1.0, 1.0, 0,
                 rest=P(min_p=2.0)))
    return out


def _accepted(name: str, x) -> bool:
    try:
        ref.check_params(P(**{name: x}))
        return True
    except ref.SieveError:
        return False
