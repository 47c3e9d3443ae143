"""Engine-wide options: force_topk and the blacklist (000:65-68)."""
import fixture_format as ff
import reference as ref

FAMILY = "engine-options"
SUITE = "engine-options"  # the suite of `sieve run` its cases belong to
DESCRIPTION = ("DEEPINFER_SAMPLER_FORCE_TOPK keeps the N largest logits before every other step "
               "(000:67); DEEPINFER_DECODE_TOKEN_BLACKLIST sets logits to -inf (000:68). Ours: "
               "the blacklist applies first, force_topk ties go to the lower id.")

ROW = [0.5, 3.0, 1.0, 3.0, 2.0, -1.0, 2.5, 0.0]
ENGINE = ("engine_order",)  # what a case about the options is about, where a reading has it


def cases():
    F, c, E = FAMILY, ff.filter_case, ref.Engine
    out = []
    for n in (1, 2, 3, 5, 7, 8, 100):
        for t, p, k in ((1.0, 1.0, -1), (0.7, 0.9, 2)):
            out.append(c(f"{F}/force-topk-{n}-t{t}-p{p}-k{k}", F, "000:67",
                         f"force_topk {n}, then T {t}, top_p {p}, top_k {k}: the softmax is "
                         f"over the {n} largest logits (ties by id).", ROW, t, p, k,
                         engine=E(force_topk=n)))
    lists = [("argmax-first-copy", (1,)), ("both-maxima", (1, 3)), ("low-tokens", (0, 5, 7)),
             ("all-but-one", (0, 1, 2, 3, 4, 5, 7)), ("duplicates", (2, 2, 2))]
    for name, ids in lists:
        for t, p, k in ((1.0, 1.0, -1), (1.0, 0.8, 1)):
            out.append(c(f"{F}/blacklist-{name}-p{p}-k{k}", F, "000:68",
                         f"Blacklist {list(ids)} with top_p {p}, top_k {k}: those tokens get "
                         "-inf before every other step.", ROW, t, p, k, engine=E(blacklist=ids),
                         axis=ENGINE))
    out.append(c(f"{F}/blacklist-before-force-topk", F, "000:67-68",
                 "Blacklist [1] and force_topk 2: force_topk keeps tokens 3 and 6, both "
                 "finite.", ROW, engine=E(force_topk=2, blacklist=(1,)), axis=ENGINE))
    out += order_cases()
    out.append(c(f"{F}/blacklist-every-token-is-an-error", F, "000:68",
                 "Blacklisting every token leaves no finite logit: an invalid_logits error.", ROW,
                 engine=E(blacklist=tuple(range(8))), axis=ENGINE))
    out.append(c(f"{F}/blacklist-id-out-of-range-is-an-error", F, "000:68",
                 "A blacklist id equal to V is an error naming blacklist.", ROW,
                 engine=E(blacklist=(8,))))
    out.append(c(f"{F}/blacklist-negative-id-is-an-error", F, "000:68",
                 "A negative blacklist id is an error naming blacklist.", ROW,
                 engine=E(blacklist=(-1,))))
    out.append(c(f"{F}/force-topk-negative-is-an-error", F, "000:67",
                 "force_topk -1 is an error naming force_topk.", ROW, engine=E(force_topk=-1)))
    out.append(ff.sample_case(f"{F}/sample-never-draws-a-blacklisted-argmax", F, "000:68",
                              "With tokens 1 and 3 (the maxima) blacklisted, sample draws among "
                              "the others.",
                              [dict(logits=ROW, t=1.0, top_p=1.0, top_k=-1, seed=s, pos=p,
                                    n_top=2) for s, p in ((1, 2), (3, 4), (5, 6))],
                              engine=E(blacklist=(1, 3)), axis=ENGINE))
    return out


# Where each engine step sits (000:67 "before all other steps"): force_topk and the blacklist
# near the top-p cut, at several top_p, with and without top_k; each case separates a step moved
# after its neighbour (temperature, or the softmax over the whole row).
AFTER_SOFTMAX = (
    (3, (), 0.7, -1, "top_p 0.7 keeps 1 and 3: their mass is over the 3 kept logits"),
    (3, (), 0.7, 3, "top_p 0.7 and top_k 3 keep 1 and 3: their mass is over the 3 kept logits"),
    (4, (), 0.8, -1, "top_p 0.8 keeps 1, 3 and 6: their mass is over the 4 kept logits"),
    (0, (6,), 0.7, -1, "top_p 0.7 keeps 1 and 3: the blacklisted 6 adds nothing to their mass"),
    (0, (6,), 0.7, 3, "top_p 0.7 and top_k 3 keep 1 and 3, blacklisted 6 not in their mass"),
    (0, (3,), 0.5, 3, "top_p 0.5 and top_k 3 keep 1 and 6, blacklisted 3 not in their mass"),
    (0, (4,), 0.9, -1, "top_p 0.9 keeps 1, 3 and 6, blacklisted 4 not in their mass"),
    (3, (3,), 0.5, 2, "top_p 0.5 and top_k 2 keep 1 alone: its mass is over 1, 6 and 4"),
    (4, (4,), 0.7, 3, "top_p 0.7 and top_k 3 keep 1 and 3: the mass is over 1, 3, 6 and 2"),
    (4, (6,), 0.95, -1, "top_p 0.95 keeps 1, 2, 3 and 4, the 4 largest logits left"),
)


def order_cases():
    F, c, E = FAMILY, ff.filter_case, ref.Engine
    out = []
    for n, ids, p, k, what in AFTER_SOFTMAX:
        name = "-".join(([f"force-topk-{n}"] if n else []) +
                        [f"blacklist-{i}" for i in ids] + [f"p{p}-k{k}"])
        said = ([f"force_topk {n}"] if n else []) + ([f"blacklist {list(ids)}"] if ids else [])
        out.append(c(f"{F}/order-{name}", F, "000:67-68", f"{', '.join(said)}: {what}.", ROW,
                     1.0, p, k, engine=E(force_topk=n, blacklist=ids), axis="engine_order",
                     separates=(["force-topk-after-softmax"] if n and not ids else []) +
                     (["blacklist-after-softmax"] if ids else [])))
    tie = [1.0, 2.9, 2.9000003337860107, 0.5]  # 2.9 and the next float32 up
    out.append(c(f"{F}/order-force-topk-1-ranks-raw-logits-not-a-tie-that-1-over-t-makes", F,
                 "000:67", "force_topk 1 keeps token 2 (2.9000003 beats 2.9), though both scale "
                 "to 4.1428576 at T 0.7.", tie, 0.7, engine=E(force_topk=1), axis="engine_order",
                 separates=("force-topk-after-temperature",)))
    out.append(c(f"{F}/order-force-topk-removes-a-logit-before-it-would-overflow", F, "000:67",
                 "force_topk 2 removes -3e38 before T 0.5 scales it, so no overflow error.",
                 [1.0, -3e38, 2.0, 0.5], 0.5, engine=E(force_topk=2), axis="engine_order",
                 separates=("force-topk-after-temperature",)))
    out.append(c(f"{F}/order-blacklist-removes-a-logit-before-it-would-overflow", F, "000:68",
                 "Blacklisted 3e38 gets -inf before T 0.5 scales it, so no overflow error.",
                 [1.0, 3e38, 2.0, 0.5], 0.5, engine=E(blacklist=(1,)), axis="engine_order",
                 separates=("blacklist-after-temperature",)))
    return out
