/* The requests of a fuzz run (run.h): its rounds of batches and requests without rows. */
#include <stdint.h>

#include "run.h"

#define FUZZ_WHOLE_PER_ROUND 4 /* requests of each op without rows per round */

/* A batch size from --batch, at most hello's max_batch and small enough that the smallest
 * vocabulary fits max_logits. */
static size_t draw_size(fuzz_state *s) {
  size_t b = s->o->batches[fuzz_below(&s->rng, s->o->n_batches)], smallest = SIZE_MAX;
  for (size_t i = 0; i < s->space.n_vocabs; i++)
    smallest = s->space.vocabs[i] < smallest ? s->space.vocabs[i] : smallest;
  const size_t fits = s->o->max_logits / smallest ? s->o->max_logits / smallest : 1;
  b = b < s->max_batch ? b : s->max_batch;
  return b < fits ? b : fits;
}

/* The request-wide members of a sample request: a case and a tag, each left out now and then
 * where it is the default; the tag in *mtp. */
static int sample_members(fuzz_state *s, cJSON *request, int *sample_case, int *mtp) {
  *sample_case = (int)fuzz_below(&s->rng, 3);
  *mtp = fuzz_below(&s->rng, 4) == 0;
  return (*sample_case == 0 && fuzz_below(&s->rng, 2)) ||
                 cJSON_AddNumberToObject(request, "case", *sample_case)
             ? ((!*mtp && fuzz_below(&s->rng, 2)) ||
                        cJSON_AddStringToObject(request, "tag", *mtp ? "mtp" : "main")
                    ? 0
                    : -1)
             : -1;
}

static cJSON *draw_batch(fuzz_state *s, int op) {
  size_t vocab[FUZZ_MAX_BATCH], smallest = SIZE_MAX;
  const size_t b = draw_size(s), most = s->o->max_logits / b;
  const int one_vocab = (int)fuzz_below(&s->rng, 2);
  for (size_t i = 0; i < b; i++) {
    vocab[i] = one_vocab && i ? vocab[0] : fuzz_vocab(&s->rng, &s->space, most);
    smallest = vocab[i] < smallest ? vocab[i] : smallest;
  }
  cJSON *request = cJSON_CreateObject(), *rows = cJSON_AddArrayToObject(request, "rows");
  cJSON *engine = fuzz_engine(&s->rng, &s->space, smallest);
  int sample_case = 0, mtp = 0;
  if (!rows || !engine || !cJSON_AddStringToObject(request, "op", fuzz_op_name(op)) ||
      !cJSON_AddItemToObject(request, "engine", engine))
    goto fail;
  engine = NULL;
  if (op == FUZZ_OP_SAMPLE && sample_members(s, request, &sample_case, &mtp) != 0)
    goto fail;
  for (size_t i = 0; i < b; i++) {
    int family;
    cJSON *row = fuzz_row(&s->rng, &s->space, vocab[i], &family);
    if (row && op == FUZZ_OP_SAMPLE && fuzz_key(&s->rng, row, sample_case, mtp) != 0)
      row = (cJSON_Delete(row), NULL);
    if (!row || !cJSON_AddItemToArray(rows, row)) {
      cJSON_Delete(row);
      goto fail;
    }
  }
  return request;
fail:
  cJSON_Delete(engine);
  cJSON_Delete(request);
  return NULL;
}

/* A uniform request of a few keys. */
static cJSON *draw_uniform(fuzz_state *s) {
  cJSON *request = cJSON_CreateObject(), *items = cJSON_AddArrayToObject(request, "items");
  int ok = items && cJSON_AddStringToObject(request, "op", "uniform");
  for (uint64_t n = 1 + fuzz_below(&s->rng, 16); ok && n > 0; n--) {
    cJSON *item = cJSON_CreateObject();
    const int sample_case = (int)fuzz_below(&s->rng, 3), mtp = fuzz_below(&s->rng, 4) == 0;
    ok = item && cJSON_AddItemToArray(items, item) &&
         fuzz_key(&s->rng, item, sample_case, mtp) == 0 &&
         cJSON_AddNumberToObject(item, "case", sample_case) &&
         cJSON_AddStringToObject(item, "tag", mtp ? "mtp" : "main");
  }
  return ok ? request : (cJSON_Delete(request), NULL);
}

/* The op of the round's batch: filter or sample, where hello offers them; -1 for neither. */
static int batched_op(fuzz_state *s) {
  const int filter = s->ops >> FUZZ_OP_FILTER & 1, sample = s->ops >> FUZZ_OP_SAMPLE & 1;
  return filter && sample ? (fuzz_below(&s->rng, 2) ? FUZZ_OP_SAMPLE : FUZZ_OP_FILTER)
         : filter         ? FUZZ_OP_FILTER
         : sample         ? FUZZ_OP_SAMPLE
                          : -1;
}

/* The batch comes first; then, as it takes far longer to answer, FUZZ_WHOLE_PER_ROUND requests
 * of each op without rows (uniform, position, speculate) that hello offers. */
cJSON *fuzz_round_request(fuzz_state *s) {
  const int whole = FUZZ_OP_COUNT - FUZZ_OP_UNIFORM, steps = 1 + FUZZ_WHOLE_PER_ROUND * whole;
  for (;;) {
    const int step = s->step;
    const int op = step == 0 ? batched_op(s) : FUZZ_OP_UNIFORM + (step - 1) % whole;
    s->step = (step + 1) % steps;
    if (op < 0 || !(s->ops >> op & 1))
      continue;
    return op == FUZZ_OP_UNIFORM     ? draw_uniform(s)
           : op == FUZZ_OP_POSITION  ? fuzz_position_request(&s->rng)
           : op == FUZZ_OP_SPECULATE ? fuzz_chain_request(&s->rng, &s->space)
                                     : draw_batch(s, op);
  }
}
