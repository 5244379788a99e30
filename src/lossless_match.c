/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The encoder's exact block matcher for lossless windows (lossless_match.h). */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "lossless_match.h"
#include "residual.h"
#include "tuning.h"

#define LXM_B PNMF_RES_BLOCK

/* One indexed reference: the positions (y * w + x, w = cols - 7) of its
 * blocks in chains by hash bucket. A chain's entry is 2 p + 1 where the
 * chain goes on at next[p], 2 p where p is its last position (so that
 * the walk of a chain of one place reads no link). */
typedef struct LxmSlot {
    long tag; /* the frame it indexes: j - 1 - t of frame j's reference t */
    int used, built; /* assigned to the frame; its index made (when a lookup first needs it) */
    const uint8_t *frame;
    int32_t *next; /* of a position in a chain, the chain's next entry */
    int32_t *head; /* a chain's first entry, -1 (empty), or -2 - o: its run at runs[o]; read only where
                    * seen has a bit of the bucket (not cleared between indexes) */
    uint64_t *seen; /* a bit per LXM_SEEN_MORE-fold finer bucket: a block of that hash is indexed */
    int32_t *runs;  /* long chains' first PNMF_LXM_CHAIN places as runs: a length, then the places */
    size_t nruns;   /* of runs used */
    int coarse_made; /* its box means (pnmf_lxm_coarse()) hold the frame's */
    /* (the four in the matcher's arena, made on the first index) */
} LxmSlot;

struct PnmfLxMatch {
    int rows, cols, w, h; /* w x h block positions */
    int bits;             /* log2 of the buckets */
    uint64_t wmul;        /* p / w as (p * wmul) >> wshift, exact for 0 <= p < 2^31 */
    int wshift;
    LxmSlot slot[PNMF_RES_REFS + 1];
    int cur[PNMF_RES_REFS]; /* reference t's slot for the frame last given */
    uint8_t *arena;         /* every slot's seen bits, heads and links */
    uint64_t *up;           /* index_frame()'s block hashes, one per column, of the row being indexed */
    int32_t *keep;          /* the columns of the row being indexed that go into a chain (not in a run) */
    uint64_t *words;        /* index_frame()'s row words (row_word()) of the LXM_B rows of the blocks */
    const uint8_t *hsrc;    /* the block whose hash hval is (pnmf_lxm_find() looks in each reference) */
    int hy, hx;
    uint64_t hval;
    long looks, hits;       /* the frame's lookups in reference 0, and those that found the block */
    uint8_t *coarse;        /* pnmf_lxm_coarse()'s room, csize bytes a slot (made on its first call) */
    size_t csize;
    int fast;               /* pnmf_lxm_new()'s */
    int nref;               /* the references of the frame last given */
    int sparse;             /* fast, and the frame before found few: reference 0 alone is looked in */
};

/* The seen bits: log2 of how many more than the buckets. A lookup reads
 * them first: they fit in the cache for the 17 slots together where the
 * chains' heads do not, and most blocks of camera footage are in no
 * reference. */
#define LXM_SEEN_MORE 1

/* A chain a lookup walks this far without reaching its end or leaving the
 * vector bound is copied into a run (its first PNMF_LXM_CHAIN places, in
 * the chain's order: positions falling) that the lookups of every later
 * block bisect: a repeating pattern's chain holds hundreds of places, most
 * of them rows beyond the bound, that a walk would step through one cache
 * miss at a time. Speed alone: a run gives the places the walk gives. */
#define LXM_RUN_AT 8

/* How many places ahead index_frame() asks for a chain's head. */
#define LXM_AHEAD 8

#if defined(__GNUC__) || defined(__clang__)
#define LXM_PREFETCH(a) __builtin_prefetch(a)
#else
#define LXM_PREFETCH(a) ((void)0)
#endif

/* A block's hash: its rows' 8 bytes as words r_k, each times an odd
 * constant, summed as a polynomial in P (Horner: rows rolled in from the
 * top), so that the next block down is one row's product away
 * (index_frame()); its high bits pick the bucket. Arithmetic mod 2^64. */
#define LXM_K 0x9E3779B97F4A7C15ull
#define LXM_P 0xC2B2AE3D27D4EB4Full

static inline uint64_t row_word(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v * LXM_K;
}

static inline uint64_t raw_hash(const uint8_t *p, size_t cols)
{
    uint64_t h = 0;
    for (int y = 0; y < LXM_B; y++) h = h * LXM_P + row_word(p + (size_t)y * cols);
    return h;
}

PnmfLxMatch *pnmf_lxm_new(int rows, int cols, int fast)
{
    if (rows < LXM_B || cols < LXM_B) return NULL;
    PnmfLxMatch *m = pnmf_calloc(1, sizeof(*m));
    if (!m) return NULL;
    m->rows = rows, m->cols = cols, m->w = cols - LXM_B + 1, m->h = rows - LXM_B + 1;
    m->fast = fast;
    const size_t n = (size_t)m->w * m->h;
    /* Division by the invariant w as a multiply: with l = ceil(log2 w),
     * s = 31 + l and M = ceil(2^s / w), M * w - 2^s < 2^l, so for p < 2^31
     * the error p * (M * w - 2^s) stays under 2^s and (p * M) >> s is
     * p / w; M < 2^32 keeps p * M in 64 bits. The chains' walk takes each
     * place's row and column so, once per place looked at. */
    int l = 0;
    while (((int64_t)1 << l) < m->w) l++;
    m->wshift = 31 + l;
    m->wmul = (((uint64_t)1 << m->wshift) + (uint64_t)m->w - 1) / (uint64_t)m->w;
    m->bits = 8;
    while (m->bits < 24 && ((size_t)1 << m->bits) < n) m->bits++;
    for (int s = 0; s <= PNMF_RES_REFS; s++) m->slot[s].tag = 0, m->slot[s].used = 0;
    m->up = pnmf_malloc_array((size_t)m->w, sizeof(uint64_t));
    m->keep = pnmf_malloc_array((size_t)m->w, sizeof(int32_t));
    m->words = pnmf_malloc_array((size_t)m->w * LXM_B, sizeof(uint64_t));
    if (!m->up || !m->keep || !m->words) {
        pnmf_lxm_free(m);
        return NULL;
    }
    return m;
}

void pnmf_lxm_free(void *p)
{
    PnmfLxMatch *m = p;
    if (!m) return;
    pnmf_free(m->arena);
    pnmf_free(m->coarse);
    pnmf_free(m->up);
    pnmf_free(m->keep);
    pnmf_free(m->words);
    pnmf_free(m);
}

/* The room for a slot's runs: every chain copied holds more than
 * LXM_RUN_AT places, and each place is in one chain. */
static size_t runs_size(size_t n) { return n + n / (LXM_RUN_AT + 1) + 1; }

/* Index frame f into slot s: every position in raster order, but of a
 * run of equal blocks along a row or a column only every
 * PNMF_LXM_RUN-th (a flat area would fill a chain with places that all
 * predict alike; one within PNMF_LXM_RUN - 1 of any place of the run
 * stays). Chains list the later positions first. */
static int index_frame(PnmfLxMatch *m, LxmSlot *s, const uint8_t *f)
{
    const size_t n = (size_t)m->w * m->h, nh = (size_t)1 << m->bits, cols = (size_t)m->cols;
    const size_t ns = (nh << LXM_SEEN_MORE) / 64;
    if (!m->arena) {
        /* one block for every slot: large enough for huge pages (mem.c),
         * which spare the page faults of indexes made window after window;
         * a slot no frame uses is never touched */
        const size_t per =
            (ns * sizeof(uint64_t) + (nh + n + runs_size(n)) * sizeof(int32_t) + 63) & ~(size_t)63;
        if (!(m->arena = pnmf_malloc_array(PNMF_RES_REFS + 1, per))) return PNMF_ERR_NOMEM;
        for (int k = 0; k <= PNMF_RES_REFS; k++) {
            uint8_t *a = m->arena + (size_t)k * per;
            m->slot[k].seen = (uint64_t *)a;
            m->slot[k].head = (int32_t *)(a + ns * sizeof(uint64_t));
            m->slot[k].next = m->slot[k].head + nh;
            m->slot[k].runs = m->slot[k].next + n;
        }
    }
    s->nruns = 0;
    memset(s->seen, 0, ns * sizeof(uint64_t));
    const uint64_t fine = (((uint64_t)1 << (1 << LXM_SEEN_MORE)) - 1); /* a bucket's seen bits */
    const int shift = 64 - m->bits, sshift = shift - LXM_SEEN_MORE;
    uint64_t p7 = 1; /* P^7: the top row's weight */
    for (int k = 1; k < LXM_B; k++) p7 *= LXM_P;
    uint64_t *col = m->up;      /* each column's block hash, rolled down row by row */
    uint64_t *words = m->words; /* the row words of the last LXM_B rows, row r's at r % LXM_B */
    int32_t *keep = m->keep;
    /* (in locals: the stores to seen[] could alias the slot's fields) */
    int32_t *const head = s->head, *const next = s->next;
    uint64_t *const seen = s->seen;
    const size_t w = (size_t)m->w;
    for (int y = 0; y < m->h; y++) {
        const uint8_t *row = f + (size_t)y * cols;
        /* the row's hashes first, and the columns it puts in chains, so
         * that the chains' heads can be asked for ahead of their
         * insertion (each a likely cache miss) and the places left out
         * (in runs: most of a screen's flat areas) cost no test there;
         * equal hashes stand for equal blocks here: a collision only
         * leaves a place out, a lookup compares the samples */
        size_t nk = 0;
        if (!y) {
            for (int k = 0; k < LXM_B; k++)
                for (size_t x = 0; x < w; x++) words[k * w + x] = row_word(row + k * cols + x);
            uint64_t left = 0;
            for (size_t x = 0; x < w; x++) {
                uint64_t h = 0;
                for (int k = 0; k < LXM_B; k++) h = h * LXM_P + words[k * w + x];
                col[x] = h;
                keep[nk] = (int32_t)x;
                nk += !((x % PNMF_LXM_RUN != 0) & (h == left));
                left = h;
            }
        } else {
            /* row y - 1 leaves the block, row y + 7 enters it: both in
             * the slot of row y - 1 */
            uint64_t *wk = words + (size_t)((y + LXM_B - 1) % LXM_B) * w;
            const uint8_t *in = row + (LXM_B - 1) * cols;
            const int ym = y % PNMF_LXM_RUN != 0;
            uint64_t left = 0;
            for (size_t x = 0; x < w; x++) {
                const uint64_t up = col[x], nw = row_word(in + x);
                const uint64_t raw = (up - wk[x] * p7) * LXM_P + nw;
                wk[x] = nw;
                col[x] = raw;
                keep[nk] = (int32_t)x;
                nk += !(((x % PNMF_LXM_RUN != 0) & (raw == left)) | (ym & (raw == up)));
                left = raw;
            }
        }
        const size_t p0 = (size_t)y * w;
        for (size_t i = 0; i < nk; i++) {
            if (i + LXM_AHEAD < nk) LXM_PREFETCH(&head[col[keep[i + LXM_AHEAD]] >> shift]);
            const size_t x = (size_t)keep[i];
            const uint64_t raw = col[x];
            const size_t p = p0 + x;
            const size_t bk = raw >> shift, f0 = bk << LXM_SEEN_MORE;
            const int32_t e = seen[f0 / 64] >> (f0 % 64) & fine ? head[bk] : -1;
            next[p] = e;
            head[bk] = (int32_t)(2 * p) | (e >= 0);
            seen[(raw >> sshift) / 64] |= 1ull << ((raw >> sshift) % 64);
        }
    }
    s->built = 1;
    return 0;
}

int pnmf_lxm_refs(PnmfLxMatch *m, int j, const uint8_t *const *ref, int nref)
{
    if (nref > PNMF_RES_REFS) nref = PNMF_RES_REFS;
    m->hsrc = NULL; /* a new frame: its blocks' hashes anew */
    /* where the blocks of the frame before were seldom in reference 0
     * (camera footage: no block repeats exactly), the farther references
     * hold them no more often: this frame looks in reference 0 alone */
    m->sparse = m->fast && m->looks >= PNMF_LXM_SPARSE_LOOKS && m->hits * PNMF_LXM_SPARSE < m->looks;
    m->looks = m->hits = 0;
    m->nref = nref;
    for (int t = 0; t < nref; t++) {
        const long tag = (long)j - 1 - t;
        int s = -1;
        for (int k = 0; k <= PNMF_RES_REFS && s < 0; k++)
            if (m->slot[k].used && m->slot[k].tag == tag && m->slot[k].frame == ref[t]) s = k;
        if (s < 0) { /* a slot no reference of this frame needs */
            for (int k = 0; k <= PNMF_RES_REFS && s < 0; k++) {
                const LxmSlot *q = &m->slot[k];
                const long u = (long)j - 1 - q->tag; /* the reference it would be */
                if (!q->used || u < 0 || u >= nref || ref[u] != q->frame) s = k;
            }
            if (s < 0) return PNMF_ERR_ARG; /* not reached: 17 slots, 16 references */
            m->slot[s].used = 1, m->slot[s].built = 0, m->slot[s].tag = tag, m->slot[s].frame = ref[t];
            m->slot[s].coarse_made = 0;
        }
        m->cur[t] = s;
    }
    return 0;
}

uint8_t *pnmf_lxm_coarse(PnmfLxMatch *m, int t, size_t size, int *fresh)
{
    if (t < 0 || t >= m->nref || !size) return NULL;
    if (!m->coarse) {
        if (!(m->coarse = pnmf_malloc_array(PNMF_RES_REFS + 1, size))) return NULL;
        m->csize = size;
    }
    if (size != m->csize) return NULL;
    LxmSlot *s = &m->slot[m->cur[t]];
    *fresh = !s->coarse_made;
    s->coarse_made = 1;
    return m->coarse + (size_t)(s - m->slot) * size;
}

/* A place found: kept among the cap nearest to the prediction, by d, then
 * by position falling (the order in which a chain lists them); far[],
 * pos[] and out[] hold the n kept. */
typedef struct LxmBest {
    int n, cap;
    int far[PNMF_LXM_CAP];
    int32_t pos[PNMF_LXM_CAP];
} LxmBest;

/* Whether a place at d, position p, would be kept. */
static inline int best_takes(const LxmBest *k, int d, int32_t p)
{
    return k->n < k->cap || d < k->far[k->cap - 1] || (d == k->far[k->cap - 1] && p > k->pos[k->cap - 1]);
}

static inline void best_put(LxmBest *k, int16_t (*out)[2], int d, int32_t p, int dy, int dx)
{
    int i = k->n < k->cap ? k->n++ : k->cap - 1;
    for (; i > 0 && (k->far[i - 1] > d || (k->far[i - 1] == d && k->pos[i - 1] < p)); i--)
        k->far[i] = k->far[i - 1], k->pos[i] = k->pos[i - 1], out[i][0] = out[i - 1][0], out[i][1] = out[i - 1][1];
    k->far[i] = d, k->pos[i] = p, out[i][0] = (int16_t)dy, out[i][1] = (int16_t)dx;
}

/* Copy the chain from entry e (of more than LXM_RUN_AT places) into a
 * run of s; its offset. */
static size_t make_run(LxmSlot *s, int32_t e)
{
    const size_t o = s->nruns;
    int32_t *r = s->runs + o + 1;
    int len = 0;
    for (;;) {
        r[len++] = e >> 1;
        if (!(e & 1) || len == PNMF_LXM_CHAIN) break;
        e = s->next[e >> 1];
    }
    s->runs[o] = len;
    s->nruns = o + 1 + (size_t)len;
    return o;
}

/* The first index i of r[0 .. len) (positions falling) with r[i] < p. */
static inline int run_below(const int32_t *r, int len, int32_t p)
{
    int lo = 0, hi = len;
    while (lo < hi) {
        const int mid = (lo + hi) >> 1;
        if (r[mid] >= p) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* pnmf_lxm_find() on a run: the places of the rows within the bound, from
 * the predicted row outwards on either side, each side left once its rows
 * are farther from the prediction than the cap-th place kept. */
static void find_in_run(const PnmfLxMatch *m, const LxmSlot *s, const int32_t *r, int len, const uint8_t *b, int y0,
                        int x0, int maxv, int py, int px, LxmBest *k, int16_t (*out)[2])
{
    const int ylo = y0 - maxv < 0 ? 0 : y0 - maxv, yhi = y0 + maxv;
    int yc = y0 + py;
    yc = yc < ylo ? ylo : yc > yhi ? yhi : yc;
    const int i0 = run_below(r, len, (int32_t)((yhi < m->h ? yhi + 1 : m->h) * m->w)); /* rows yhi and above */
    const int i1 = run_below(r, len, (int32_t)(ylo * m->w));                          /* rows above ylo */
    const int ic = run_below(r, len, (int32_t)((yc < m->h ? yc + 1 : m->h) * m->w));   /* rows yc and above */
    for (int side = 0; side < 2; side++) {
        /* side 0: rows yc, yc - 1, ... (indices up from ic); side 1: rows
         * yc + 1, yc + 2, ... (indices down from ic - 1) */
        const int step = side ? -1 : 1, end = side ? i0 - 1 : i1;
        for (int i = side ? ic - 1 : ic; i != end; i += step) {
            const int32_t p = r[i];
            const int y = (int)(((uint64_t)p * m->wmul) >> m->wshift), x = p - y * m->w, dy = y - y0, dx = x - x0;
            const int ry = abs(dy - py);
            if (k->n == k->cap && ry > k->far[k->cap - 1]) break;
            if (abs(dx) > maxv) continue;
            const int d = ry + abs(dx - px);
            if (!best_takes(k, d, p)) continue;
            if (!pnmf_residual_same_block(b, s->frame + (size_t)y * m->cols + x, (size_t)m->cols)) continue;
            best_put(k, out, d, p, dy, dx);
        }
    }
}

int pnmf_lxm_find(PnmfLxMatch *m, int t, const uint8_t *src, int y0, int x0, int maxv, int py, int px,
                  int16_t (*out)[2], int cap)
{
    if (t < 0 || t >= PNMF_RES_REFS || cap <= 0 || y0 + LXM_B > m->rows || x0 + LXM_B > m->cols) return 0;
    if (t && m->sparse) return 0;
    LxmSlot *s = &m->slot[m->cur[t]];
    if (!s->used) return 0;
    if (!s->built && index_frame(m, s, s->frame) < 0) return PNMF_ERR_NOMEM;
    const uint8_t *b = src + (size_t)y0 * m->cols + x0;
    if (m->hsrc != src || m->hy != y0 || m->hx != x0) {
        m->hsrc = src, m->hy = y0, m->hx = x0, m->hval = raw_hash(b, (size_t)m->cols);
        /* the block is looked for in each reference in turn, with the
         * search of the one before in between: the heads of the buckets
         * that hold its hash are asked for at once (each a cache miss) */
        const uint64_t hs = m->hval >> (64 - m->bits - LXM_SEEN_MORE), bk = m->hval >> (64 - m->bits);
        for (int u = 0; u < (m->sparse ? 1 : m->nref); u++) {
            const LxmSlot *q = &m->slot[m->cur[u]];
            if (q->built && (q->seen[hs / 64] >> (hs % 64) & 1)) LXM_PREFETCH(&q->head[bk]);
        }
    }
    const uint64_t h = m->hval, hs = h >> (64 - m->bits - LXM_SEEN_MORE);
    if (!(s->seen[hs / 64] >> (hs % 64) & 1)) {
        m->looks += !t;
        return 0;
    }
    LxmBest k;
    k.n = 0, k.cap = cap > PNMF_LXM_CAP ? PNMF_LXM_CAP : cap;
    const size_t bucket = h >> (64 - m->bits);
    int32_t e = s->head[bucket];
    if (e < -1) {
        const int32_t *r = s->runs + (size_t)(-2 - (int64_t)e);
        find_in_run(m, s, r + 1, r[0], b, y0, x0, maxv, py, px, &k, out);
    } else if (e >= 0) {
        /* the chain lists the positions falling: the places come in the
         * order that breaks ties of d */
        for (int walked = 0;; walked++) {
            if (walked == LXM_RUN_AT) { /* a long chain: its run from here on */
                const size_t o = make_run(s, s->head[bucket]);
                s->head[bucket] = (int32_t)(-2 - (int64_t)o);
                k.n = 0;
                find_in_run(m, s, s->runs + o + 1, s->runs[o], b, y0, x0, maxv, py, px, &k, out);
                break;
            }
            const int32_t p = e >> 1;
            const int y = (int)(((uint64_t)p * m->wmul) >> m->wshift), x = p - y * m->w, dy = y - y0, dx = x - x0;
            if (dy < -maxv) break; /* a chain runs up the frame: the rest is above the bound too */
            if (dy <= maxv && abs(dx) <= maxv) {
                const int d = abs(dy - py) + abs(dx - px);
                if ((k.n < k.cap || d < k.far[k.cap - 1]) &&
                    pnmf_residual_same_block(b, s->frame + (size_t)y * m->cols + x, (size_t)m->cols))
                    best_put(&k, out, d, p, dy, dx);
            }
            if (!(e & 1) || walked + 1 == PNMF_LXM_CHAIN) break;
            e = s->next[p];
        }
    }
    if (!t) m->looks++, m->hits += k.n > 0;
    return k.n;
}
