/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The paper's section 4 data sets, drawn from a seed, and how a fit is
 * scored against them. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "paper.h"
#include "pnmf/fit.h"

/* ---- the figures --------------------------------------------------------- */

static const char *const square_rows[] = { "###", "###", "###" };
/* a plus sign of 9 pixels: the centre and four arms of length 2 */
static const char *const cross_rows[] = { "..#..", "..#..", "#####", "..#..", "..#.." };
/* a plane seen from above: nose up, wings, tail */
static const char *const plane_rows[] = {
    "...#...",
    "...#...",
    ".#####.",
    "#######",
    "...#...",
    "...#...",
    "..###..",
};
/* a tank from the side: turret and gun, hull, wheels, track */
static const char *const tank_rows[] = {
    "..###....",
    "..#######",
    "#########",
    "#.#.#.#.#",
    ".#######.",
};
/* a sailing ship from the side: sail, deck, hull */
static const char *const ship_rows[] = {
    "...#.....",
    "...##....",
    "...###...",
    "#########",
    ".#######.",
    "..#####..",
};

const PaperFigure paper_square = { "square", 3, 3, square_rows };
const PaperFigure paper_cross = { "cross", 5, 5, cross_rows };
const PaperFigure paper_plane = { "plane", 7, 7, plane_rows };
const PaperFigure paper_tank = { "tank", 5, 9, tank_rows };
const PaperFigure paper_ship = { "ship", 6, 9, ship_rows };

/* ---- random numbers ------------------------------------------------------- */

uint64_t paper_rng_next(PaperRng *r)
{
    uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

double paper_rng_unit(PaperRng *r) { return (paper_rng_next(r) >> 11) * (1.0 / 9007199254740992.0); }

int paper_rng_int(PaperRng *r, int n) { return (int)(paper_rng_unit(r) * n); }

/* ---- scenes --------------------------------------------------------------- */

void paper_scene_free(PaperScene *sc)
{
    free(sc->frames);
    free(sc->truth);
    free(sc->place);
    memset(sc, 0, sizeof(*sc));
}

static void draw(const PaperFigure *f, int width, float *img, int y0, int x0)
{
    for (int y = 0; y < f->h; y++)
        for (int x = 0; x < f->w; x++)
            if (f->rows[y][x] == '#') img[(y0 + y) * width + x0 + x] += 1.0f;
}

static int boxes_meet(int ay, int ax, int ah, int aw, int by, int bx, int bh, int bw)
{
    /* one free pixel between copies */
    return ay < by + bh + 1 && by < ay + ah + 1 && ax < bx + bw + 1 && bx < ax + aw + 1;
}

static int scene_alloc(PaperScene *sc, int width, int height, int m, int nfig,
                       const PaperFigure *fig, int max_place)
{
    const size_t n = (size_t)width * height;
    memset(sc, 0, sizeof(*sc));
    sc->width = width, sc->height = height, sc->m = m, sc->nfig = nfig, sc->fig = fig;
    sc->frames = calloc((size_t)m * n, sizeof(float));
    sc->truth = calloc((size_t)nfig * n, sizeof(float));
    sc->place = calloc((size_t)max_place, sizeof(PaperPlacement));
    if (!sc->frames || !sc->truth || !sc->place) {
        paper_scene_free(sc);
        return -1;
    }
    for (int f = 0; f < nfig; f++) draw(&fig[f], width, sc->truth + f * n, 0, 0);
    return 0;
}

/* Place count[f] copies of each figure in frame j without overlaps, then
 * add the noise; redraws the positions when the frame gets too crowded. */
static void fill_frame(PaperScene *sc, int j, const int *count, PaperRng *rng)
{
    const int W = sc->width, H = sc->height;
    const size_t n = (size_t)W * H;
    float *img = sc->frames + j * n;
    const int first = sc->nplace;
    for (;;) {
        int ok = 1;
        sc->nplace = first;
        for (int f = 0; f < sc->nfig && ok; f++)
            for (int c = 0; c < count[f] && ok; c++) {
                const PaperFigure *fg = &sc->fig[f];
                int tries = 0, y, x, clash;
                do {
                    y = paper_rng_int(rng, H - fg->h + 1);
                    x = paper_rng_int(rng, W - fg->w + 1);
                    clash = 0;
                    for (int t = first; t < sc->nplace && !clash; t++) {
                        const PaperFigure *g = &sc->fig[sc->place[t].figure];
                        clash = boxes_meet(y, x, fg->h, fg->w, sc->place[t].y, sc->place[t].x, g->h, g->w);
                    }
                } while (clash && ++tries < 200);
                if (clash) ok = 0;
                else sc->place[sc->nplace++] = (PaperPlacement){ j, f, y, x };
            }
        if (ok) break;
    }
    memset(img, 0, n * sizeof(float));
    for (int t = first; t < sc->nplace; t++)
        draw(&sc->fig[sc->place[t].figure], W, img, sc->place[t].y, sc->place[t].x);
    for (size_t q = 0; q < n; q++) {
        const float v = img[q] + (float)(0.3 * paper_rng_unit(rng));
        img[q] = v > 1 ? 1 : v;
    }
}

int paper_scene_exp1(PaperScene *sc, uint64_t seed)
{
    static PaperFigure fig[2];
    fig[0] = paper_square, fig[1] = paper_cross;
    const int m = 10;
    if (scene_alloc(sc, 20, 20, m, 2, fig, 2 * m) < 0) return -1;
    PaperRng rng = { seed * 0x2545F4914F6CDD1Dull + 1 };
    const int count[2] = { 1, 1 };
    for (int j = 0; j < m; j++) fill_frame(sc, j, count, &rng);
    return 0;
}

int paper_scene_exp2(PaperScene *sc, uint64_t seed)
{
    static PaperFigure fig[3];
    fig[0] = paper_plane, fig[1] = paper_tank, fig[2] = paper_ship;
    const int m = 20;
    if (scene_alloc(sc, 30, 30, m, 3, fig, 6 * m) < 0) return -1;
    PaperRng rng = { seed * 0x2545F4914F6CDD1Dull + 2 };
    for (int j = 0; j < m; j++) {
        int count[3], total;
        do {
            total = 0;
            for (int f = 0; f < 3; f++) {
                /* 0, 1 or 2 copies with probabilities 0.2, 0.4, 0.4 */
                const double u = paper_rng_unit(&rng);
                count[f] = u < 0.2 ? 0 : u < 0.6 ? 1 : 2;
                total += count[f];
            }
        } while (total == 0);
        fill_frame(sc, j, count, &rng);
    }
    return 0;
}

/* ---- scoring -------------------------------------------------------------- */

double paper_ncc(int model, int width, int height, const float *f, const float *w, int32_t *best_q)
{
    const int n = width * height;
    double mf = 0, mw = 0;
    for (int x = 0; x < n; x++) mf += f[x], mw += w[x];
    mf /= n, mw /= n;
    float *fc = malloc(sizeof(float) * n), *wc = malloc(sizeof(float) * n), *s = malloc(sizeof(float) * n);
    double best = -1;
    int32_t bq = 0;
    if (fc && wc && s) {
        double nf = 0, nw = 0;
        for (int x = 0; x < n; x++) {
            fc[x] = (float)(f[x] - mf), wc[x] = (float)(w[x] - mw);
            nf += (double)fc[x] * fc[x], nw += (double)wc[x] * wc[x];
        }
        if (nf > 0 && nw > 0)
            for (int32_t q = 0; q < n; q++) {
                memset(s, 0, sizeof(float) * n);
                pnmf_fit_shift_add(model, width, height, s, fc, 1, q);
                double c = 0;
                for (int x = 0; x < n; x++) c += (double)s[x] * wc[x];
                c /= sqrt(nf * nw);
                if (c > best) best = c, bq = q;
            }
    }
    free(fc), free(wc), free(s);
    if (best_q) *best_q = bq;
    return best < 0 ? 0 : best;
}

void paper_match(int model, const PaperScene *sc, const float *W, int k, double *ncc, int *comp,
                 int32_t *q)
{
    const size_t n = (size_t)sc->width * sc->height;
    for (int f = 0; f < sc->nfig; f++) {
        ncc[f] = 0, comp[f] = 0, q[f] = 0;
        for (int i = 0; i < k; i++) {
            int32_t qi;
            const double c = paper_ncc(model, sc->width, sc->height, sc->truth + f * n, W + i * n, &qi);
            if (c > ncc[f]) ncc[f] = c, comp[f] = i, q[f] = qi;
        }
    }
}

int32_t paper_center_shift(int model, int width, int height, const float *w)
{
    const int n = width * height;
    float *s = malloc(sizeof(float) * n);
    double best = -1;
    int32_t bq = 0;
    if (!s) return 0;
    for (int32_t q = 0; q < n; q++) {
        memset(s, 0, sizeof(float) * n);
        pnmf_fit_shift_add(model, width, height, s, w, 1, q);
        /* weights rising linearly towards the middle on each axis */
        double c = 0;
        for (int y = 0; y < height; y++) {
            const int wy = y + 1 < height - y ? y + 1 : height - y;
            for (int x = 0; x < width; x++) {
                const int wx = x + 1 < width - x ? x + 1 : width - x;
                c += (double)s[y * width + x] * wy * wx;
            }
        }
        if (c > best * (1 + 1e-9)) best = c, bq = q;
    }
    free(s);
    return bq;
}

/* ---- montage -------------------------------------------------------------- */

#define GAP 4
#define GAP_GRAY 96

int paper_montage_open(PaperMontage *mt, int ncols, int nrows, int iw, int ih, int scale)
{
    mt->width = ncols * (iw * scale + GAP) + GAP;
    mt->height = nrows * (ih * scale + GAP) + GAP;
    mt->pix = malloc((size_t)mt->width * mt->height);
    if (!mt->pix) return -1;
    memset(mt->pix, GAP_GRAY, (size_t)mt->width * mt->height);
    return 0;
}

void paper_montage_put(PaperMontage *mt, int row, int col, int model, int iw, int ih, int scale,
                       const float *img, int32_t q)
{
    const int n = iw * ih;
    float *s = calloc((size_t)n, sizeof(float));
    if (!s) return;
    pnmf_fit_shift_add(model, iw, ih, s, img, 1, q);
    float mx = 0;
    for (int x = 0; x < n; x++) mx = s[x] > mx ? s[x] : mx;
    const int y0 = GAP + row * (ih * scale + GAP), x0 = GAP + col * (iw * scale + GAP);
    for (int y = 0; y < ih * scale; y++)
        for (int x = 0; x < iw * scale; x++) {
            const float v = mx > 0 ? s[(y / scale) * iw + x / scale] / mx : 0;
            mt->pix[(size_t)(y0 + y) * mt->width + x0 + x] = (uint8_t)lrintf(255 * (v < 0 ? 0 : v));
        }
    free(s);
}

void paper_montage_free(PaperMontage *mt)
{
    free(mt->pix);
    mt->pix = NULL;
}
