/*
 * The picture of `sieve explain --svg FILE`: what the text table says, drawn. Each rule has a
 * panel, and the panels share one probability scale: the tokens ranked by probability as bars
 * on labelled axes (kept dark, removed light, the drawn token orange, each with its value where
 * it fits), the mass before each token as that rule's top-p measures it (a step line with
 * markers against a second axis, 0 to 1) with the top_p line, and where top-k and top-p cut.
 * Under a panel whose rule drew a token, the draw: the kept tokens' cdf in token-id order with
 * u marked on it. An implementation's answer has a panel of its own: the tokens it kept and
 * removed on the same bars, and where it first removes one. A row of more tokens than the
 * panels' width holds (40 at most) shows its most probable and one tail bar for the rest, so
 * that the labels never crowd, whatever the vocabulary, and the picture stays within
 * EXPLAIN_SVG_WIDTH.
 */
#define _DEFAULT_SOURCE /* PATH_MAX, for outfile.h */
#include "svg.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/outfile.h"
#include "report/xml.h"

#define TOP_BARS 40     /* a larger row shows at most this many bars and one for the rest */
#define MIN_SLOT 14.0   /* the narrowest slot an upright id label fits */
#define MARGIN 16.0     /* around the picture */
#define LEFT_AXIS 70.0  /* left of a plot: the probability axis */
#define RIGHT_AXIS 60.0 /* right of a plot: the mass axis */
#define GAP 28.0        /* between two panels */
#define PLOT_H 280.0    /* the height of a plot */
#define MIN_PLOT_W 480.0
#define TAIL_W 92.0   /* the tail bar's slot */
#define LEGEND_Y 76.0 /* the baseline of the legend's first row */
#define LEGEND_ROW 20.0

#define KEPT "#2b6cb0"
#define KEPT_ALT "#4299e1"
#define REMOVED "#cbd5e0"
#define DRAWN "#dd6b20"
#define MASS "#2f855a"
#define TOPP "#c53030"
#define INK "#1a202c"
#define MUTED "#4a5568"
#define GRID "#e2e8f0"
#define HALO "stroke=\"white\" stroke-width=\"3\" paint-order=\"stroke\""

typedef struct layout {
  size_t shown; /* ranked tokens with a bar of their own */
  int tail;     /* whether the other tokens share one tail bar */
  int upright;  /* the slots are narrow, so id and value labels run upward */
  double slot;  /* the width of one token's slot */
  double plot_w, panel_w, left, width, height;
  double plot_top, ids_h;
  double ymax, ystep; /* the shared probability axis */
  size_t legend_rows;
} layout;

/* One rule's panel: what it shows beyond the kept set. */
typedef struct panel {
  const explained *e;
  sieve_params params; /* after the rule's checks (temperature 0 resets the cuts, say) */
  int ok;              /* the rule accepted the row */
  int topp_on;         /* the rule applies a top_p below 1 */
  size_t k_cut, p_cut; /* the first rank top-k and top-p remove; the vocabulary size for none */
  double *mass;       /* per slot, the mass before it as top-p measures it; NAN where it does not */
  double tail_kept;   /* the full-softmax p of the kept tokens in the tail */
  size_t tail_kept_n; /* the kept tokens in the tail */
  size_t drawn_rank;  /* the drawn token's rank; the vocabulary size without a draw */
} panel;

typedef struct picture {
  FILE *f;
  int inline_svg; /* inside an HTML page: no XML declaration */
  const char *case_id;
  const row_input *in;
  ranked_token *order;
  double tail_p; /* the full-softmax p of the tail */
  panel panels[EXPLAIN_PANELS];
  size_t n_panels;
  int any_draw, any_topp, any_cut;
  layout l;
} picture;

typedef enum symbol { SWATCH, MARKED_LINE, DASHED_LINE, CUT_LINE } symbol;

typedef struct legend_entry {
  symbol kind;
  const char *colour;
  char label[64];
} legend_entry;

enum { LEGEND_MAX = 6 };

static int by_p(const void *a, const void *b) {
  const ranked_token *x = a, *y = b;
  if (x->p != y->p)
    return x->p > y->p ? -1 : 1;
  return (x->id > y->id) - (x->id < y->id);
}

ranked_token *explain_rank(const double *p, size_t vocab) {
  ranked_token *order = malloc((vocab ? vocab : 1) * sizeof *order);
  for (size_t i = 0; order && i < vocab; i++)
    order[i] = (ranked_token){p[i], i};
  if (order)
    qsort(order, vocab, sizeof *order, by_p);
  return order;
}

/* ---------------------------------------------------------------- text */

/* The width of a text, estimated: 0.62 em a character (UTF-8 continuation bytes not counted). */
static double text_w(const char *s, double size) {
  size_t n = 0;
  for (; *s; s++)
    n += ((unsigned char)*s & 0xC0) != 0x80;
  return 0.62 * size * (double)n;
}

/* A text element: the content (printf-style) escaped, `attrs` written as given. A rotation
 * (degrees, clockwise) turns the text about its anchor. */
__attribute__((format(printf, 6, 7))) static void text(FILE *f, double x, double y, double rotate,
                                                       const char *attrs, const char *fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  fprintf(f, "<text x=\"%.1f\" y=\"%.1f\"", x, y);
  if (rotate != 0)
    fprintf(f, " transform=\"rotate(%g %.1f %.1f)\"", rotate, x, y);
  fprintf(f, " %s>", attrs);
  xml_text(f, buf);
  fputs("</text>\n", f);
}

static void rect(FILE *f, const char *cls, double x, double y, double w, double h,
                 const char *fill) {
  fprintf(f,
          "<rect class=\"%s\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"/>\n",
          cls, x, y, w, fmax(h, 0), fill);
}

static void line(FILE *f, const char *cls, double x1, double y1, double x2, double y2,
                 const char *style) {
  fprintf(f, "<line class=\"%s\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" %s/>\n", cls, x1,
          y1, x2, y2, style);
}

/* "V = 6 · temperature 1 · top_p 0.8 · top_k 2 · seed 1 · position 0", as the row gives them. */
static void describe_params(const row_input *in, char *out, size_t len) {
  char top_k[32] = "off";
  if (in->params.top_k != SIEVE_TOP_K_UNSET)
    snprintf(top_k, sizeof top_k, "%lld", (long long)in->params.top_k);
  int n = snprintf(out, len, "V = %zu · temperature %g · top_p %g · top_k %s", in->vocab,
                   in->params.temperature, row_top_p(in), top_k);
  if (in->has_key && n > 0 && (size_t)n < len)
    snprintf(out + n, len - (size_t)n, " · seed %llu · position %llu",
             (unsigned long long)in->key.seed, (unsigned long long)in->key.position);
}

static void describe_title(const picture *pic, char *out, size_t len) {
  if (pic->case_id)
    snprintf(out, len, "sieve explain %s", pic->case_id);
  else
    snprintf(out, len, "sieve explain: a row of %zu logits (--logits)", pic->in->vocab);
}

/* ------------------------------------------------------------ the rules */

static int kept(const explained *e, size_t id) { return e->rc == 0 && !isinf(e->processed[id]); }

/* p over the row at temperature t; NULL when out of memory or t is not a temperature. */
static double *probabilities(const row_input *in, double t) {
  sieve_params all = {t, 1.0, -1, 0.0, NULL};
  double *p = malloc(in->vocab * sizeof *p);
  if (p && sieve_filter_rule(NULL, in->logits, in->vocab, &all, NULL, p, NULL) != 0) {
    free(p);
    return NULL;
  }
  for (size_t i = 0; p && i < in->vocab; i++)
    p[i] = exp(p[i]);
  return p;
}

/* The mass before each rank up to the tail's slot, over `total` (the top k's mass for a rule
 * that measures top-p after top-k) and only below `limit`, and the first rank top-p removes. */
static void accumulate(const picture *pic, panel *pn, const double *seen, size_t limit,
                       double total) {
  int ge = sieve_rule_get(pn->e->rule, SIEVE_AXIS_BOUNDARY) == SIEVE_BOUNDARY_GE;
  double top_p = pn->params.top_p, cum = 0;
  size_t v = pic->in->vocab;
  pn->p_cut = v;
  for (size_t r = 0; r < v; r++) {
    double m = r < limit ? cum / total : NAN;
    if (r <= pic->l.shown)
      pn->mass[r] = m;
    if (pn->topp_on && pn->p_cut == v && r < limit && (ge ? m >= top_p : m > top_p))
      pn->p_cut = r;
    cum += seen[pic->order[r].id];
  }
}

/* Where the rule's cuts fall: top-k at k; top-p where the mass before a token, as the rule
 * measures it (at T = 1 for a rule that applies temperature after the filters, over the top k
 * for one that applies top-p after top-k), passes top_p by the rule's boundary. */
static int measure(const picture *pic, panel *pn) {
  const sieve_rule *rule = pn->e->rule;
  size_t v = pic->in->vocab;
  int64_t k = pn->params.top_k;
  pn->k_cut = k > 0 && (uint64_t)k < v ? (size_t)k : v;
  int scope = sieve_rule_get(rule, SIEVE_AXIS_TOPP_SCOPE);
  int after = sieve_rule_get(rule, SIEVE_AXIS_TEMPERATURE_AT) == SIEVE_TEMPERATURE_AT_AFTER;
  pn->topp_on = scope != SIEVE_TOPP_SCOPE_IGNORED && pn->params.top_p < 1;
  double *seen = probabilities(pic->in, after ? 1.0 : pn->params.temperature);
  pn->mass = calloc(pic->l.shown + 1, sizeof *pn->mass);
  if (!seen || !pn->mass) {
    free(seen);
    return -1;
  }
  size_t limit = scope == SIEVE_TOPP_SCOPE_AFTER_TOPK ? pn->k_cut : v;
  double total = limit < v ? 0 : 1;
  for (size_t r = 0; limit < v && r < limit; r++)
    total += seen[pic->order[r].id];
  accumulate(pic, pn, seen, limit, total);
  free(seen);
  return 0;
}

/* The kept mass in the tail and the drawn token's rank. */
static void tally(const picture *pic, panel *pn) {
  const explained *e = pn->e;
  pn->drawn_rank = pic->in->vocab;
  for (size_t r = 0; r < pic->in->vocab; r++) {
    size_t id = pic->order[r].id;
    if (r >= pic->l.shown && kept(e, id)) {
      pn->tail_kept += pic->order[r].p;
      pn->tail_kept_n++;
    }
    if (e->drew && (int64_t)id == e->drawn.token)
      pn->drawn_rank = r;
  }
}

/* An answer's panel: the first rank it removes stands where a rule's cut would. */
static void first_removed(picture *pic, panel *pn) {
  for (size_t r = 0; r < pic->in->vocab && pn->p_cut == pic->in->vocab; r++)
    if (!kept(pn->e, pic->order[r].id))
      pn->p_cut = r;
  pic->any_cut |= pn->p_cut < pic->in->vocab;
}

static int setup_panel(picture *pic, panel *pn, const explained *e) {
  pn->e = e;
  pn->k_cut = pn->p_cut = pn->drawn_rank = pic->in->vocab;
  if (!e->rule) {
    pn->ok = e->rc == 0;
    if (pn->ok) {
      tally(pic, pn);
      first_removed(pic, pn);
    }
    return 0;
  }
  pn->ok = e->rc == 0 && sieve_params_check_rule(e->rule, &pic->in->params, &pn->params) == 0;
  if (!pn->ok)
    return 0;
  tally(pic, pn);
  pic->any_draw |= e->drew;
  int rc = measure(pic, pn);
  pic->any_topp |= pn->topp_on;
  pic->any_cut |= pn->k_cut < pic->in->vocab || pn->p_cut < pic->in->vocab;
  return rc;
}

/* ------------------------------------------------------------ the layout */

static size_t legend_entries(const picture *pic, legend_entry *out) {
  size_t n = 0;
  out[n++] = (legend_entry){SWATCH, KEPT, "kept"};
  out[n++] = (legend_entry){SWATCH, REMOVED, "removed"};
  if (pic->any_draw)
    out[n++] = (legend_entry){SWATCH, DRAWN, "drawn token"};
  out[n++] = (legend_entry){MARKED_LINE, MASS, "mass before the token (right axis)"};
  if (pic->any_topp) {
    out[n] = (legend_entry){DASHED_LINE, TOPP, ""};
    snprintf(out[n++].label, sizeof out->label, "top_p = %g (right axis)", row_top_p(pic->in));
  }
  if (pic->any_cut)
    out[n++] =
        (legend_entry){CUT_LINE, INK, "cut: the first rank top-k, top-p or an answer removes"};
  return n;
}

static double legend_width(const legend_entry *le) { return 30 + text_w(le->label, 11) + 10; }

/* Places the entries left to right, wrapping at the picture's width; returns the rows. */
static size_t legend_place(const legend_entry *le, size_t n, double width, double *x, double *y) {
  double at = MARGIN;
  size_t row = 0;
  for (size_t i = 0; i < n; i++) {
    double w = legend_width(&le[i]);
    if (at > MARGIN && at + w > width - MARGIN)
      at = MARGIN, row++;
    x[i] = at;
    y[i] = LEGEND_Y + LEGEND_ROW * (double)row;
    at += w;
  }
  return row + 1;
}

/* The step of the probability axis: 1, 2 or 5 times a power of ten, about five to the top. */
static double nice_step(double top) {
  double raw = top / 5, ten = pow(10, floor(log10(raw))), m = raw / ten;
  return ten * (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10);
}

/* The probability axis reaches the best token, or the tail bar unless the tail is so much
 * larger that the bars would vanish beside it (its bar is then drawn broken). */
static void scale(picture *pic) {
  double top = pic->order[0].p;
  if (pic->tail_p <= 2.5 * top)
    top = fmax(top, pic->tail_p);
  if (!(top > 0))
    top = 1;
  pic->l.ystep = nice_step(top);
  pic->l.ymax = pic->l.ystep * ceil(top / pic->l.ystep - 1e-9);
}

/* The slots: as many bars as a panel's share of EXPLAIN_SVG_WIDTH holds, TOP_BARS at most, and
 * a tail bar for the rest. */
static void plan_slots(picture *pic) {
  layout *l = &pic->l;
  size_t v = pic->in->vocab;
  double n = (double)pic->n_panels;
  double room = (EXPLAIN_SVG_WIDTH - 2 * MARGIN - (n - 1) * GAP) / n - LEFT_AXIS - RIGHT_AXIS;
  size_t fits = (size_t)fmax(1, floor((room - TAIL_W) / MIN_SLOT));
  l->tail = v > TOP_BARS || (double)v * MIN_SLOT > room;
  l->shown = !l->tail ? v : fits < TOP_BARS ? fits : TOP_BARS;
  double want = fmax(l->shown > 16 ? 20 : 40, MIN_PLOT_W / (double)l->shown);
  l->slot = fmin(want, (room - (l->tail ? TAIL_W : 0)) / (double)l->shown);
  l->upright = l->shown > 16 || l->slot < 40;
  l->plot_w = (double)l->shown * l->slot + (l->tail ? TAIL_W : 0);
  for (size_t r = l->shown; r < v; r++)
    pic->tail_p += pic->order[r].p;
  scale(pic);
}

static double digits(size_t n) { return n < 10 ? 1 : 1 + digits(n / 10); }

static void plan_size(picture *pic) {
  layout *l = &pic->l;
  char title[400], params[200];
  describe_title(pic, title, sizeof title);
  describe_params(pic->in, params, sizeof params);
  l->panel_w = LEFT_AXIS + l->plot_w + RIGHT_AXIS;
  double n = (double)pic->n_panels, panels = n * l->panel_w + (n - 1) * GAP;
  double heading = fmax(text_w(title, 16) * 1.08, text_w(params, 12));
  l->width = ceil(2 * MARGIN + fmax(panels, heading));
  l->left = MARGIN + (l->width - 2 * MARGIN - panels) / 2;
  legend_entry le[LEGEND_MAX];
  double x[LEGEND_MAX], y[LEGEND_MAX];
  l->legend_rows = legend_place(le, legend_entries(pic, le), l->width, x, y);
  l->plot_top = LEGEND_Y + LEGEND_ROW * (double)(l->legend_rows - 1) + 88;
  l->ids_h = l->upright ? 6.4 * digits(pic->in->vocab - 1) + 12 : 20;
  if (l->tail)
    l->ids_h = fmax(l->ids_h, 48);
  l->height = ceil(l->plot_top + PLOT_H + l->ids_h + (pic->any_draw ? 78 : 22) + MARGIN);
}

static double plot_x(const layout *l, size_t r) {
  return l->left + LEFT_AXIS + (double)r * (l->panel_w + GAP);
}

static double slot_left(const layout *l, size_t k) { return (double)k * l->slot; }

static double slot_width(const layout *l, size_t k) { return k < l->shown ? l->slot : TAIL_W; }

static double plot_bottom(const layout *l) { return l->plot_top + PLOT_H; }

static double y_p(const layout *l, double p) {
  return l->plot_top + PLOT_H * (1 - fmin(p, l->ymax) / l->ymax);
}

static double y_m(const layout *l, double m) { return l->plot_top + PLOT_H * (1 - m); }

/* ---------------------------------------------------------- the heading */

static void header(const picture *pic) {
  const layout *l = &pic->l;
  char title[400], params[200];
  describe_title(pic, title, sizeof title);
  describe_params(pic->in, params, sizeof params);
  if (!pic->inline_svg)
    fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", pic->f);
  fprintf(pic->f,
          "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
          "viewBox=\"0 0 %.0f %.0f\" font-family=\"DejaVu Sans, Verdana, sans-serif\" "
          "font-size=\"11\" fill=\"%s\">\n<title>",
          l->width, l->height, l->width, l->height, INK);
  xml_text(pic->f, title);
  fputs(": ", pic->f);
  xml_text(pic->f, params);
  fputs("</title>\n", pic->f);
  rect(pic->f, "background", 0, 0, l->width, l->height, "white");
  text(pic->f, MARGIN, 28, 0, "class=\"title\" font-size=\"16\" font-weight=\"bold\"", "%s", title);
  text(pic->f, MARGIN, 48, 0, "class=\"params\" font-size=\"12\" fill=\"" MUTED "\"", "%s", params);
}

static void legend_symbol(FILE *f, const legend_entry *le, double x, double y) {
  char style[96];
  snprintf(style, sizeof style, "stroke=\"%s\" stroke-width=\"2\"%s", le->colour,
           le->kind == DASHED_LINE ? " stroke-dasharray=\"6 4\"" : "");
  if (le->kind == SWATCH)
    rect(f, "legend-swatch", x, y - 10, 22, 11, le->colour);
  else if (le->kind == CUT_LINE)
    line(f, "legend-line", x + 11, y - 12, x + 11, y + 2, style);
  else
    line(f, "legend-line", x, y - 4, x + 22, y - 4, style);
  if (le->kind == MARKED_LINE)
    fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"/>\n", x + 11, y - 4, MASS);
}

static void legend(const picture *pic) {
  legend_entry le[LEGEND_MAX];
  double x[LEGEND_MAX], y[LEGEND_MAX];
  size_t n = legend_entries(pic, le);
  legend_place(le, n, pic->l.width, x, y);
  fputs("<g class=\"legend\">\n", pic->f);
  for (size_t i = 0; i < n; i++) {
    legend_symbol(pic->f, &le[i], x[i], y[i]);
    text(pic->f, x[i] + 30, y[i], 0, "class=\"legend-label\"", "%s", le[i].label);
  }
  fputs("</g>\n", pic->f);
}

/* ------------------------------------------------------------ the axes */

static void prob_axis(const picture *pic, double x0) {
  const layout *l = &pic->l;
  FILE *f = pic->f;
  long ticks = lround(l->ymax / l->ystep);
  for (long i = 0; i <= ticks; i++) {
    double p = (double)i * l->ystep, y = y_p(l, p);
    line(f, "grid", x0, y, x0 + l->plot_w, y, "stroke=\"" GRID "\"");
    line(f, "tick", x0 - 4, y, x0, y, "stroke=\"" INK "\"");
    text(f, x0 - 7, y + 4, 0, "class=\"y-tick\" text-anchor=\"end\"", "%g", p);
  }
  line(f, "axis", x0, l->plot_top, x0, plot_bottom(l), "stroke=\"" INK "\"");
  line(f, "axis", x0, plot_bottom(l), x0 + l->plot_w, plot_bottom(l), "stroke=\"" INK "\"");
  text(f, x0 - 58, l->plot_top + PLOT_H / 2, -90, "class=\"y-title\" text-anchor=\"middle\"",
       "probability (full softmax at T)");
}

static void mass_axis(const picture *pic, const panel *pn, double x0) {
  const layout *l = &pic->l;
  FILE *f = pic->f;
  double xr = x0 + l->plot_w;
  for (int i = 0; i <= 5; i++) {
    double y = y_m(l, i / 5.0);
    line(f, "tick", xr, y, xr + 4, y, "stroke=\"" MASS "\"");
    text(f, xr + 7, y + 4, 0, "class=\"mass-tick\" fill=\"" MASS "\"", "%g", i / 5.0);
  }
  line(f, "axis", xr, l->plot_top, xr, plot_bottom(l), "stroke=\"" MASS "\"");
  int after = sieve_rule_get(pn->e->rule, SIEVE_AXIS_TOPP_SCOPE) == SIEVE_TOPP_SCOPE_AFTER_TOPK;
  text(f, xr + 40, l->plot_top + PLOT_H / 2, 90,
       "class=\"mass-title\" text-anchor=\"middle\" fill=\"" MASS "\"", "mass before the token%s",
       after && pn->k_cut < pic->in->vocab ? " (over the top k)" : "");
}

static void id_labels(const picture *pic, const panel *pn, double x0) {
  const layout *l = &pic->l;
  double y = plot_bottom(l);
  for (size_t k = 0; k < l->shown; k++) {
    double cx = x0 + slot_left(l, k) + l->slot / 2;
    if (l->upright)
      text(pic->f, cx + 3.5, y + 6, -90, "class=\"id\" text-anchor=\"end\" font-size=\"10\"", "%zu",
           pic->order[k].id);
    else
      text(pic->f, cx, y + 15, 0, "class=\"id\" text-anchor=\"middle\"", "%zu", pic->order[k].id);
  }
  text(pic->f, x0 + l->plot_w / 2, y + l->ids_h + 16, 0, "class=\"x-title\" text-anchor=\"middle\"",
       "token id (ranked by probability, highest first)");
  if (!l->tail)
    return;
  double cx = x0 + slot_left(l, l->shown) + TAIL_W / 2;
  text(pic->f, cx, y + 15, 0, "class=\"id tail-label\" text-anchor=\"middle\"", "tail");
  text(pic->f, cx, y + 29, 0, "class=\"id tail-label\" text-anchor=\"middle\" font-size=\"10\"",
       "(%zu token%s)", pic->in->vocab - l->shown, pic->in->vocab - l->shown == 1 ? "" : "s");
  text(pic->f, cx, y + 42, 0, "class=\"id tail-label\" text-anchor=\"middle\" font-size=\"10\"",
       "%zu kept", pn->tail_kept_n);
}

/* ------------------------------------------------------------ the bars */

/* A bar's value where it fits: above the bar, or inside it (haloed in the bar's colour, so
 * that the mass line does not cross it). An upright value (a narrow bar's) goes inside where it
 * can, so that the tall bars' values line up along their tops. */
static void value_label(const picture *pic, double cx, double width, double top, double p,
                        const char *bar_fill) {
  const layout *l = &pic->l;
  char s[32], attrs[200];
  snprintf(s, sizeof s, width >= 60 ? "%.4g" : "%.3g", p);
  int upright = width < 40;
  double len = text_w(s, 10), need = upright ? len : 10;
  if (!upright && len > width - 2)
    return;
  double dx = upright ? 3.5 : 0, rot = upright ? -90 : 0;
  int fits_inside = plot_bottom(l) - top >= need + 6;
  if (top - l->plot_top >= need + 6 && !(upright && fits_inside)) {
    snprintf(attrs, sizeof attrs, "class=\"value\" font-size=\"10\" text-anchor=\"%s\" %s",
             upright ? "start" : "middle", HALO);
    text(pic->f, cx + dx, top - 4, rot, attrs, "%s", s);
  } else if (fits_inside) {
    snprintf(attrs, sizeof attrs,
             "class=\"value\" font-size=\"10\" text-anchor=\"%s\" fill=\"%s\" stroke=\"%s\" "
             "stroke-width=\"3\" paint-order=\"stroke\"",
             upright ? "end" : "middle", strcmp(bar_fill, REMOVED) ? "white" : INK, bar_fill);
    text(pic->f, cx + dx, top + (upright ? 4 : 12), rot, attrs, "%s", s);
  }
}

/* A bar's state, "drawn", "kept" or "removed", and its colour. */
static const char *bar_state(const panel *pn, size_t rank, size_t id, const char **fill) {
  int drawn = rank == pn->drawn_rank, is_kept = kept(pn->e, id);
  *fill = drawn ? DRAWN : is_kept ? KEPT : REMOVED;
  return drawn ? "drawn" : is_kept ? "kept" : "removed";
}

static void bars(const picture *pic, const panel *pn, double x0) {
  const layout *l = &pic->l;
  double w = fmin(l->slot * 0.72, 56);
  for (size_t k = 0; k < l->shown; k++) {
    const char *fill, *state = bar_state(pn, k, pic->order[k].id, &fill);
    double top = y_p(l, pic->order[k].p), x = x0 + slot_left(l, k) + (l->slot - w) / 2;
    fprintf(pic->f,
            "<rect class=\"bar %s\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
            "fill=\"%s\"><title>token %zu (rank %zu): p %.6g, %s</title></rect>\n",
            state, x, top, w, plot_bottom(l) - top, fill, pic->order[k].id, k, pic->order[k].p,
            state);
  }
}

/* The tail: one bar of the tokens below the best shown, its kept part dark under the removed
 * part, in proportion to their mass. A tail taller than the axis is broken at the top; one too
 * short to show its parts is drawn TAIL_MIN_H tall and marked enlarged, so that a cut in the
 * tail of a peaked row shows. */
#define TAIL_MIN_H 40.0

static int tail_enlarged(const picture *pic) {
  return pic->tail_p > 0 && plot_bottom(&pic->l) - y_p(&pic->l, pic->tail_p) < TAIL_MIN_H;
}

static double tail_top(const picture *pic) {
  return tail_enlarged(pic) ? plot_bottom(&pic->l) - TAIL_MIN_H : y_p(&pic->l, pic->tail_p);
}

static double tail_kept_top(const picture *pic, const panel *pn) {
  double h = plot_bottom(&pic->l) - tail_top(pic);
  return plot_bottom(&pic->l) - (pic->tail_p > 0 ? h * pn->tail_kept / pic->tail_p : 0);
}

static void tail_bar(const picture *pic, const panel *pn, double x0) {
  const layout *l = &pic->l;
  double x = x0 + slot_left(l, l->shown) + 10, w = TAIL_W - 20;
  double top = tail_top(pic), kept_top = tail_kept_top(pic, pn);
  const int enlarged = tail_enlarged(pic);
  rect(pic->f, enlarged ? "bar tail removed enlarged" : "bar tail removed", x, top, w,
       kept_top - top, REMOVED);
  rect(pic->f, enlarged ? "bar tail kept enlarged" : "bar tail kept", x, kept_top, w,
       plot_bottom(l) - kept_top, KEPT);
  if (enlarged)
    text(pic->f, x + w / 2, top - 18, 0,
         "class=\"enlarged\" text-anchor=\"middle\" font-size=\"9\" fill=\"" MUTED "\"",
         "(bar enlarged)");
  if (pic->tail_p > l->ymax)
    fprintf(pic->f,
            "<path class=\"break\" d=\"M%.1f,%.1f L%.1f,%.1f M%.1f,%.1f L%.1f,%.1f\" "
            "stroke=\"white\" stroke-width=\"3\"/>\n",
            x - 2, top + 14, x + w + 2, top + 6, x - 2, top + 21, x + w + 2, top + 13);
}

static void bar_values(const picture *pic, const panel *pn, double x0) {
  const layout *l = &pic->l;
  for (size_t k = 0; k < l->shown; k++) {
    double cx = x0 + slot_left(l, k) + l->slot / 2;
    const char *fill;
    bar_state(pn, k, pic->order[k].id, &fill);
    value_label(pic, cx, l->slot, y_p(l, pic->order[k].p), pic->order[k].p, fill);
  }
  if (!l->tail)
    return;
  double top = tail_top(pic), cx = x0 + slot_left(l, l->shown) + TAIL_W / 2;
  double at = pic->tail_p > l->ymax ? top + 36 : top;
  value_label(pic, cx, TAIL_W, at, pic->tail_p, at + 12 < tail_kept_top(pic, pn) ? REMOVED : KEPT);
}

/* ------------------------------------------------- the mass and the cuts */

static void mass_line(const picture *pic, const panel *pn, double x0) {
  const layout *l = &pic->l;
  size_t slots = l->shown + (l->tail ? 1u : 0u);
  fprintf(pic->f, "<path class=\"mass\" fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" d=\"",
          MASS);
  for (size_t k = 0, pen = 0; k < slots; k++) {
    if (isnan(pn->mass[k])) {
      pen = 0;
      continue;
    }
    double x = x0 + slot_left(l, k), y = y_m(l, pn->mass[k]);
    fprintf(pic->f, "%c%.1f,%.1f L%.1f,%.1f ", pen++ ? 'L' : 'M', x, y, x + slot_width(l, k), y);
  }
  fputs("\"/>\n", pic->f);
  for (size_t k = 0; k < slots; k++)
    if (!isnan(pn->mass[k]))
      fprintf(pic->f,
              "<circle class=\"mass-marker\" cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\" "
              "stroke=\"white\"><title>mass before rank %zu: %.6g</title></circle>\n",
              x0 + slot_left(l, k) + slot_width(l, k) / 2, y_m(l, pn->mass[k]), MASS, k,
              pn->mass[k]);
}

/* Where a cut's line stands: before the first rank it removes, or in the tail's middle. */
static double cut_x(const layout *l, double x0, size_t rank) {
  return x0 + (rank >= l->shown ? slot_left(l, l->shown) + TAIL_W / 2 : slot_left(l, rank));
}

/* The right end of a label `w` wide that ends at `at`, moved left of the line of the cut at
 * `rank` (none when it is the vocabulary size `v`) if that line would cross the label. */
static double clear_of(const layout *l, double x0, size_t rank, size_t v, double at, double w) {
  double x = cut_x(l, x0, rank);
  return rank < v && x > at - w - 4 && x < at + 4 ? x - 6 : at;
}

/* The top_p line, labelled at its right end (left of a cut line that would cross the label),
 * below the line where the mass line ends above it, else above it. */
static void topp_line(const picture *pic, const panel *pn, double x0) {
  const layout *l = &pic->l;
  char label[32];
  snprintf(label, sizeof label, "top_p = %g", pn->params.top_p);
  double y = y_m(l, pn->params.top_p), last = pn->mass[l->shown - (l->tail ? 0 : 1)];
  double at = x0 + l->plot_w - 4, w = text_w(label, 11);
  size_t hi = pn->k_cut > pn->p_cut ? pn->k_cut : pn->p_cut, lo = pn->k_cut + pn->p_cut - hi;
  at = clear_of(l, x0, hi, pic->in->vocab, at, w);
  at = clear_of(l, x0, lo, pic->in->vocab, at, w);
  line(pic->f, "topp", x0, y, x0 + l->plot_w, y,
       "stroke=\"" TOPP "\" stroke-width=\"1.5\" stroke-dasharray=\"6 4\"");
  text(pic->f, at, !isnan(last) && last > pn->params.top_p ? y + 14 : y - 5, 0,
       "class=\"topp-label\" text-anchor=\"end\" fill=\"" TOPP "\" " HALO, "%s", label);
}

/* A cut's line before the first rank it removes (dashed in the tail's middle when that rank is
 * in the tail), labelled above the plot on its own row, and not beyond the plot's ends. */
static void cut_line(const picture *pic, double x0, size_t rank, int row, const char *what) {
  const layout *l = &pic->l;
  int in_tail = rank >= l->shown;
  double x = cut_x(l, x0, rank);
  line(pic->f, "cut", x, l->plot_top - (row ? 2 : 15), x, plot_bottom(l),
       in_tail ? "stroke=\"" INK "\" stroke-width=\"1.5\" stroke-dasharray=\"3 3\""
               : "stroke=\"" INK "\" stroke-width=\"1.5\"");
  char label[64];
  if (in_tail)
    snprintf(label, sizeof label, "%s cut: rank %zu", what, rank);
  else
    snprintf(label, sizeof label, "%s cut", what);
  double half = text_w(label, 11) / 2, at = fmin(fmax(x, x0 + half), x0 + l->plot_w - half);
  text(pic->f, at, l->plot_top - (row ? 5 : 18), 0,
       "class=\"cut-label\" text-anchor=\"middle\" " HALO, "%s", label);
}

static void cuts(const picture *pic, const panel *pn, double x0) {
  size_t v = pic->in->vocab;
  if (pn->k_cut < v && pn->k_cut == pn->p_cut)
    cut_line(pic, x0, pn->k_cut, 1, "top-k = top-p");
  else {
    if (pn->k_cut < v)
      cut_line(pic, x0, pn->k_cut, 0, "top-k");
    if (pn->p_cut < v)
      cut_line(pic, x0, pn->p_cut, 1, "top-p");
  }
}

/* ------------------------------------------------------------- the draw */

/* The kept tokens' cdf in token-id order as a strip, each token's share wide; those too narrow
 * to see stay in the strip's background. */
static void cdf_segments(const picture *pic, const panel *pn, double x0, double y) {
  const layout *l = &pic->l;
  const explained *e = pn->e;
  double total = 0, cum = 0;
  for (size_t i = 0; i < pic->in->vocab; i++)
    total += kept(e, i) ? exp(e->processed[i]) : 0;
  for (size_t i = 0, n = 0; i < pic->in->vocab && total > 0; i++) {
    if (!kept(e, i))
      continue;
    double x = x0 + cum / total * l->plot_w, w = exp(e->processed[i]) / total * l->plot_w;
    int drawn = (int64_t)i == e->drawn.token;
    cum += exp(e->processed[i]);
    if (w < 2 && !drawn)
      continue;
    rect(pic->f, drawn ? "cdf drawn" : "cdf", x, y, fmax(w, 2), 14,
         drawn     ? DRAWN
         : n++ % 2 ? KEPT_ALT
                   : KEPT);
    if (w >= 6.2 * digits(i) + 6)
      text(pic->f, x + w / 2, y + 11, 0,
           "class=\"cdf-id\" text-anchor=\"middle\" font-size=\"10\" fill=\"white\"", "%zu", i);
  }
}

static void draw_strip(const picture *pic, const panel *pn, double x0) {
  const layout *l = &pic->l;
  const sieve_sample_result *d = &pn->e->drawn;
  double y = plot_bottom(l) + l->ids_h + 46, xu = x0 + d->u * l->plot_w;
  text(pic->f, x0, y - 11, 0, "class=\"u\" font-weight=\"bold\" fill=\"" DRAWN "\"",
       "u = %.6f → token %lld (logprob %.4f)", d->u, (long long)d->token, d->logprob);
  rect(pic->f, "cdf-background", x0, y, l->plot_w, 14, "#bee3f8");
  cdf_segments(pic, pn, x0, y);
  fprintf(pic->f,
          "<path class=\"u-marker\" d=\"M%.1f,%.1f L%.1f,%.1f L%.1f,%.1f Z M%.1f,%.1f L%.1f,%.1f "
          "L%.1f,%.1f Z\" fill=\"" INK "\"/>\n",
          xu - 5, y - 6, xu + 5, y - 6, xu, y, xu - 5, y + 20, xu + 5, y + 20, xu, y + 14);
  text(pic->f, x0, y + 30, 0, "class=\"cdf-caption\" font-size=\"10\" fill=\"" MUTED "\"",
       "the draw: the kept tokens' cdf in token-id order; u × total lands in the drawn token");
}

/* ----------------------------------------------------------- the panels */

/* `s` cut to `width` at font size `size`, ending in "…" where it was cut. */
static void clip(char *s, double width, double size) {
  size_t n = strlen(s);
  if (text_w(s, size) <= width)
    return;
  while (n > 0 && (text_w(s, size) + text_w("…", size) > width || (s[n] & 0xC0) == 0x80))
    s[--n] = '\0';
  strcat(s, "…");
}

static void panel_title(const picture *pic, const panel *pn, double x0) {
  const layout *l = &pic->l;
  const explained *e = pn->e;
  double y = l->plot_top - 52;
  const char *bold = "class=\"panel-title\" font-size=\"13\" font-weight=\"bold\"";
  char title[320];
  if (e->rc != 0 && e->error)
    snprintf(title, sizeof title - 4, "%s answers an error: %s", e->name, e->error);
  else if (e->rc != 0)
    snprintf(title, sizeof title - 4, "%s: %s (%s)", e->name, sieve_err_name(e->rc),
             sieve_strerror(e->rc));
  else
    snprintf(title, sizeof title - 4, "%s: kept %zu of %zu", e->name, e->info.kept, pic->in->vocab);
  clip(title, l->plot_w + RIGHT_AXIS - 4, 13);
  text(pic->f, x0, y, 0, bold, "%s", title);
  if (e->rc != 0)
    return;
  if (!e->rule) {
    text(pic->f, x0, y + 15, 0, "class=\"panel-note\" fill=\"" MUTED "\"",
         "the implementation's answer: the tokens it kept");
    return;
  }
  int scope = sieve_rule_get(e->rule, SIEVE_AXIS_TOPP_SCOPE);
  int ge = sieve_rule_get(e->rule, SIEVE_AXIS_BOUNDARY) == SIEVE_BOUNDARY_GE;
  text(pic->f, x0, y + 15, 0, "class=\"panel-note\" fill=\"" MUTED "\"", "%s",
       scope == SIEVE_TOPP_SCOPE_IGNORED ? "top-p not applied"
       : scope == SIEVE_TOPP_SCOPE_AFTER_TOPK
           ? (ge ? "top-p over the top k: mass ≥ top_p removes"
                 : "top-p over the top k: mass > top_p removes")
           : (ge ? "top-p: mass ≥ top_p removes" : "top-p: mass > top_p removes"));
}

static void draw_panel(const picture *pic, size_t r) {
  const panel *pn = &pic->panels[r];
  double x0 = plot_x(&pic->l, r);
  fprintf(pic->f, "<g class=\"panel\" id=\"panel-%zu\">\n", r);
  panel_title(pic, pn, x0);
  prob_axis(pic, x0);
  bars(pic, pn, x0);
  if (pic->l.tail)
    tail_bar(pic, pn, x0);
  if (pn->ok && pn->e->rule) {
    mass_line(pic, pn, x0);
    mass_axis(pic, pn, x0);
    cuts(pic, pn, x0);
    if (pn->topp_on)
      topp_line(pic, pn, x0);
  } else if (pn->ok && pn->p_cut < pic->in->vocab)
    cut_line(pic, x0, pn->p_cut, 1, "its");
  bar_values(pic, pn, x0);
  id_labels(pic, pn, x0);
  if (pn->ok && pn->e->drew)
    draw_strip(pic, pn, x0);
  fputs("</g>\n", pic->f);
}

static int draw(picture *pic, const explained *e) {
  plan_slots(pic);
  int rc = 0;
  for (size_t r = 0; r < pic->n_panels; r++)
    rc |= setup_panel(pic, &pic->panels[r], &e[r]);
  if (rc != 0)
    return -1;
  plan_size(pic);
  header(pic);
  legend(pic);
  for (size_t r = 0; r < pic->n_panels; r++)
    draw_panel(pic, r);
  fputs("</svg>\n", pic->f);
  return 0;
}

int explain_svg(FILE *f, int inline_svg, const char *case_id, const row_input *in,
                const explained *e, size_t n_panels) {
  picture pic = {.f = f,
                 .inline_svg = inline_svg,
                 .case_id = case_id,
                 .in = in,
                 .n_panels = n_panels < 1                ? 1
                             : n_panels > EXPLAIN_PANELS ? EXPLAIN_PANELS
                                                         : n_panels};
  pic.order = explain_rank(e[0].full, in->vocab);
  int ok = pic.order && in->vocab > 0 && draw(&pic, e) == 0;
  free(pic.order);
  for (size_t r = 0; r < pic.n_panels; r++)
    free(pic.panels[r].mass);
  return ok ? 0 : -1;
}

int explain_write_svg(const char *path, const char *case_id, const row_input *in,
                      const explained *e, size_t n_panels) {
  outfile o;
  FILE *f = outfile_open(&o, path);
  return f ? outfile_commit(&o, explain_svg(f, 0, case_id, in, e, n_panels) == 0) : -1;
}
