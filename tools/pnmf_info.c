/* SPDX-License-Identifier: GPL-2.0-or-later */
/* pnmf-info: what a .pnmf file holds and where its bytes go; optionally a
 * mosaic image of one window's components, or the sprites the file paints
 * and where (an object tracker). */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_util.h"
#include "output/muxer.h"
#include "pnmf/info.h"
#include "pnmf/pnmf.h"

static const char *prog = "pnmf-info";

/* CSV column stems of the sections (enum PnmfInfoSection order). */
static const char *const sec_csv[PNMF_INFO_SECTIONS] = {
    "head", "sizes", "levels", "counts", "coefs", "rowshifts", "colshifts", "sprites", "reshead", "resmodes",
    "resvectors", "reslevels",
};

/* Mosaic: tiles grow to about this many pixels a side, by an integer
 * factor of at most MOSAIC_MAX_SCALE; SEP pixels between and around them. */
#define MOSAIC_TARGET    128
#define MOSAIC_MAX_SCALE 16
#define MOSAIC_SEP       2
#define MOSAIC_BG_UNSIGNED 96
#define MOSAIC_BG_SIGNED   0
#define MOSAIC_MAX_SIDE  16384

static void usage(FILE *f)
{
    fprintf(f,
            "usage: pnmf-info [options] FILE.pnmf\n"
            "Print the header of FILE.pnmf and, for every window, its frames, components,\n"
            "entries, block sizes and bytes by section of the payload.\n"
            "\n"
            "      --csv              one CSV row per window and a 'total' row, instead of tables\n"
            "      --level N          zstd level at which each section is compressed alone to\n"
            "                         show where the bytes go, 0 to skip (default 19, the\n"
            "                         encoder's default; the file does not record its level)\n"
            "      --components OUT   write the components of one window as a mosaic image\n"
            "      --window N         the window --components draws, 0-based (default 0)\n"
            "      --components-format FMT\n"
            "                         png or pgm (default png)\n"
            "      --scale N          magnify every component N times; 0 = each component\n"
            "                         to about %d pixels a side, at most %dx (default 0)\n"
            "      --sprites DIR      decode the file and write every distinct sprite as\n"
            "                         DIR/sprite_NNNN.png (gray, its mask as alpha) and\n"
            "                         DIR/tracks.csv: frame,sprite,x,y,coefficient per placement\n"
            "  -y                     overwrite the --components file if it exists; in the\n"
            "                         --sprites DIR, remove the sprite files and tracks.csv\n"
            "  -n                     never overwrite (default: ask on a terminal, else\n"
            "                         refuse)\n"
            "  -h, --help             this help\n"
            "  -V, --version          print the version\n"
            "\n"
            "Mosaic: a component's value v = level * w_step / 256 (1.0 is the encoder's peak)\n"
            "is drawn as gray 255 * v, or, in a window with a negative level, as\n"
            "128 + 127 * v (0 is mid-gray); the legend is printed with the tables.\n"
            "\n"
            "Exit status: 0 ok, 2 usage, 3 cannot read input, 4 invalid or corrupt data,\n"
            "5 cannot write output, 6 a size exceeds a limit, 1 other errors.\n",
            MOSAIC_TARGET, MOSAIC_MAX_SCALE);
}

/* ---- tables ---------------------------------------------------------- */

#define CELL 48

typedef struct Table {
    int cols;
    const char *align;  /* 'l' or 'r' per column */
    int rows, cap;
    char (*cell)[CELL];
} Table;

static int table_row(Table *t, ...)
{
    if (t->rows == t->cap) {
        const int cap = t->cap ? 2 * t->cap : 64;
        void *p = realloc(t->cell, (size_t)cap * t->cols * CELL);
        if (!p) return -1;
        t->cell = p, t->cap = cap;
    }
    va_list ap;
    va_start(ap, t);
    for (int c = 0; c < t->cols; c++) {
        const char *s = va_arg(ap, const char *);
        snprintf(t->cell[(size_t)t->rows * t->cols + c], CELL, "%s", s ? s : "");
    }
    va_end(ap);
    t->rows++;
    return 0;
}

/* The first row is the heading. */
static void table_print(const Table *t, const char *indent)
{
    int w[16] = { 0 };
    for (int r = 0; r < t->rows; r++)
        for (int c = 0; c < t->cols; c++) {
            const int n = (int)strlen(t->cell[(size_t)r * t->cols + c]);
            if (n > w[c]) w[c] = n;
        }
    for (int r = 0; r < t->rows; r++) {
        fputs(indent, stdout);
        for (int c = 0; c < t->cols; c++) {
            const char *s = t->cell[(size_t)r * t->cols + c];
            const int last = c == t->cols - 1;
            if (t->align[c] == 'r') printf("%*s", w[c], s);
            else if (last) fputs(s, stdout);
            else printf("%-*s", w[c], s);
            if (!last) fputs("  ", stdout);
        }
        putchar('\n');
    }
}

/* n with thousands separators, in one of 8 rotating buffers. */
static const char *num(uint64_t n)
{
    static char buf[8][32];
    static int next;
    char *b = buf[next++ & 7], tmp[32];
    const int len = snprintf(tmp, sizeof(tmp), "%llu", (unsigned long long)n);
    int o = 0;
    for (int i = 0; i < len; i++) {
        if (i && (len - i) % 3 == 0) b[o++] = ',';
        b[o++] = tmp[i];
    }
    b[o] = 0;
    return b;
}

static const char *pct(uint64_t part, uint64_t whole)
{
    static char buf[8][16];
    static int next;
    char *b = buf[next++ & 7];
    if (!whole) snprintf(b, 16, "-");
    else snprintf(b, 16, "%.1f%%", 100.0 * (double)part / (double)whole);
    return b;
}

/* ---- the mosaic ------------------------------------------------------ */

typedef struct Tile {
    int comp, scale, x, y;
} Tile;

typedef struct Mosaic {
    int width, height, is_signed, bg;
    int ntiles, cell_w, cell_h, grid_cols;
    Tile *tiles;
    uint8_t *pix;
} Mosaic;

/* a / b rounded half away from zero, b > 0 */
static long div_round(long a, long b) { return a >= 0 ? (a + b / 2) / b : -((-a + b / 2) / b); }

static uint8_t level_gray(int level, int w_step, int is_signed)
{
    const long v = (long)level * w_step; /* value * 256 */
    const long g = is_signed ? 128 + div_round(v * 127, 256) : div_round(v * 255, 256);
    return (uint8_t)(g < 0 ? 0 : g > 255 ? 255 : g);
}

/* Layout: nonempty components in order, in a grid of ceil(sqrt(n))
 * columns; every cell is as large as the largest scaled block, the block
 * at its top-left corner; SEP pixels between cells and around the grid. */
static int mosaic_make(const PnmfInfoBlocks *b, int scale, Mosaic *m, char *err, size_t errlen)
{
    memset(m, 0, sizeof(*m));
    int maxside = 0;
    for (int i = 0; i < b->count; i++) {
        if (b->bh[i] > maxside) maxside = b->bh[i];
        if (b->bw[i] > maxside) maxside = b->bw[i];
        for (int x = 0; x < b->bh[i] * b->bw[i]; x++)
            if (b->lev[i][x] < 0) m->is_signed = 1;
    }
    m->bg = m->is_signed ? MOSAIC_BG_SIGNED : MOSAIC_BG_UNSIGNED;
    m->tiles = calloc((size_t)b->count, sizeof(Tile));
    if (!m->tiles) {
        snprintf(err, errlen, "out of memory");
        return PNMF_EXIT_FAIL;
    }
    const int target = maxside > MOSAIC_TARGET ? maxside : MOSAIC_TARGET;
    for (int i = 0; i < b->count; i++) {
        if (!b->bh[i]) continue;
        const int side = b->bh[i] > b->bw[i] ? b->bh[i] : b->bw[i];
        int s = scale ? scale : target / side;
        if (!scale) s = s < 1 ? 1 : s > MOSAIC_MAX_SCALE ? MOSAIC_MAX_SCALE : s;
        Tile *t = &m->tiles[m->ntiles++];
        t->comp = i, t->scale = s;
        if ((long)b->bh[i] * s > m->cell_h) m->cell_h = b->bh[i] * s;
        if ((long)b->bw[i] * s > m->cell_w) m->cell_w = b->bw[i] * s;
    }
    if (!m->ntiles) {
        snprintf(err, errlen, "window %d has no component to draw (all are empty)", b->window);
        return PNMF_EXIT_FAIL;
    }
    int gc = 1;
    while (gc * gc < m->ntiles) gc++;
    const int gr = (m->ntiles + gc - 1) / gc;
    m->grid_cols = gc;
    const long W = (long)gc * m->cell_w + (long)(gc + 1) * MOSAIC_SEP;
    const long H = (long)gr * m->cell_h + (long)(gr + 1) * MOSAIC_SEP;
    if (W > MOSAIC_MAX_SIDE || H > MOSAIC_MAX_SIDE) {
        snprintf(err, errlen, "the mosaic would be %ldx%ld pixels, over %d a side (try a smaller --scale)",
                 W, H, MOSAIC_MAX_SIDE);
        return PNMF_EXIT_LIMIT;
    }
    m->width = (int)W, m->height = (int)H;
    m->pix = malloc((size_t)W * H);
    if (!m->pix) {
        snprintf(err, errlen, "out of memory");
        return PNMF_EXIT_FAIL;
    }
    memset(m->pix, m->bg, (size_t)W * H);
    for (int n = 0; n < m->ntiles; n++) {
        Tile *t = &m->tiles[n];
        t->x = MOSAIC_SEP + (n % gc) * (m->cell_w + MOSAIC_SEP);
        t->y = MOSAIC_SEP + (n / gc) * (m->cell_h + MOSAIC_SEP);
        const int bh = b->bh[t->comp], bw = b->bw[t->comp], s = t->scale;
        for (int y = 0; y < bh * s; y++)
            for (int x = 0; x < bw * s; x++)
                m->pix[(size_t)(t->y + y) * W + t->x + x] =
                    level_gray(b->lev[t->comp][(y / s) * bw + x / s], b->w_step, m->is_signed);
    }
    return PNMF_EXIT_OK;
}

static void mosaic_free(Mosaic *m)
{
    free(m->tiles);
    free(m->pix);
    memset(m, 0, sizeof(*m));
}

/* The image goes through the output module, which writes DIR/frame_000001.EXT
 * (itself through a temporary name): DIR is a temporary directory beside
 * the target, the file is renamed onto the target, the directory removed.
 * A signal removes whatever of them exists. */
static char tmp_dir[PATH_MAX], tmp_file[PATH_MAX + 32], tmp_part[PATH_MAX + 32];
static volatile sig_atomic_t tmp_dir_active;

static void tmp_dir_remove(void)
{
    if (!tmp_dir_active) return;
    unlink(tmp_part);
    unlink(tmp_file);
    rmdir(tmp_dir);
    tmp_dir_active = 0;
}

static void on_signal(int sig)
{
    tmp_dir_remove();
    signal(sig, SIG_DFL);
    raise(sig);
}

static int mosaic_write(const Mosaic *m, const char *format, const char *target, char *err, size_t errlen)
{
    const char *slash = strrchr(target, '/');
    const int dirlen = slash ? (int)(slash - target + 1) : 0;
    if (snprintf(tmp_dir, sizeof(tmp_dir), "%.*s.%s.tmp.XXXXXX", dirlen, target,
                 slash ? slash + 1 : target) >= (int)sizeof(tmp_dir) - 32) {
        snprintf(err, errlen, "name too long");
        return -1;
    }
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    signal(SIGHUP, on_signal);
    if (!mkdtemp(tmp_dir)) {
        snprintf(err, errlen, "cannot create a temporary directory beside it: %s", strerror(errno));
        return -1;
    }
    snprintf(tmp_file, sizeof(tmp_file), "%s/frame_000001.%s", tmp_dir, format);
    snprintf(tmp_part, sizeof(tmp_part), "%s/.frame_000001.%s.tmp", tmp_dir, format);
    tmp_dir_active = 1;
    const PnmfOutputInfo oi = { .width = m->width, .height = m->height, .fps_num = 1, .fps_den = 1 };
    char why[512] = "";
    PnmfOutput *out = pnmf_output_open(format, tmp_dir, &oi, why, sizeof(why));
    int ok = out && pnmf_output_write(out, m->pix, m->width, why, sizeof(why)) == 0;
    if (out && pnmf_output_close(&out, ok ? why : NULL, ok ? sizeof(why) : 0) < 0) ok = 0;
    if (ok && rename(tmp_file, target) < 0) {
        snprintf(why, sizeof(why), "cannot write: %s", strerror(errno));
        ok = 0;
    }
    if (!ok) snprintf(err, errlen, "%s", why);
    tmp_dir_remove();
    return ok ? 0 : -1;
}

static void mosaic_legend(const Mosaic *m, const PnmfInfoBlocks *b, const PnmfInfoWindow *w,
                          const char *target)
{
    printf("\ncomponents of window %d (frames %d-%d): %s, %dx%d pixels\n", b->window,
           w->first_frame, w->first_frame + w->frames - 1, target, m->width, m->height);
    if (m->is_signed)
        printf("  value v = level * %d / 256; gray = 128 + 127 v (-1 -> 1, 0 -> 128 mid-gray, 1 -> 255);\n"
               "  separators and padding gray %d\n", b->w_step, m->bg);
    else
        printf("  value v = level * %d / 256; gray = 255 v (0 -> black, 1 -> white);\n"
               "  separators and padding gray %d\n", b->w_step, m->bg);
    Table t = { 8, "rrrrrrrr", 0, 0, NULL };
    char c0[CELL], c1[CELL], c2[CELL], c3[CELL], c4[CELL], c5[CELL], c6[CELL];
    table_row(&t, "comp", "block", "scale", "tile x", "tile y", "tile size", "entries", "levels");
    int n = 0;
    for (int i = 0; i < b->count; i++) {
        snprintf(c0, CELL, "%d", i);
        if (!b->bh[i]) {
            table_row(&t, c0, "-", "", "", "", "", num(w->comp_entries[i]), "empty, not drawn");
            continue;
        }
        const Tile *tl = &m->tiles[n++];
        int lo = INT_MAX, hi = INT_MIN;
        for (int x = 0; x < b->bh[i] * b->bw[i]; x++) {
            if (b->lev[i][x] < lo) lo = b->lev[i][x];
            if (b->lev[i][x] > hi) hi = b->lev[i][x];
        }
        snprintf(c1, CELL, "%dx%d", b->bh[i], b->bw[i]);
        snprintf(c2, CELL, "%d", tl->scale);
        snprintf(c3, CELL, "%d", tl->x);
        snprintf(c4, CELL, "%d", tl->y);
        snprintf(c5, CELL, "%dx%d", b->bw[i] * tl->scale, b->bh[i] * tl->scale);
        snprintf(c6, CELL, "%d..%d", lo, hi);
        table_row(&t, c0, c1, c2, c3, c4, c5, num(w->comp_entries[i]), c6);
    }
    table_print(&t, "  ");
    printf("  (block: height x width in samples; tile size: width x height in pixels)\n");
    free(t.cell);
}

/* ---- sprites --------------------------------------------------------- */

/* The reader's I/O errors are on the input side. */
static int in_exit_code(int err) { return err == PNMF_ERR_IO ? PNMF_EXIT_INPUT : cli_exit_code(err); }

/* A sprite as written: the decoder's ids restart at each key window, so a
 * sprite is known by its content (a hash, then the bytes compared), and a
 * pose sent again after a key window keeps its number. */
typedef struct Sprite {
    int w, h;
    uint64_t hash;
    uint8_t *pix, *mask;
} Sprite;

typedef struct SpriteSet {
    Sprite *s;
    int count, cap;
} SpriteSet;

static uint64_t sprite_hash(const PnmfSprite *sp)
{
    uint64_t h = 14695981039346656037ULL; /* FNV-1a */
    const size_t n = (size_t)sp->w * sp->h;
    h = (h ^ (uint64_t)sp->w) * 1099511628211ULL;
    h = (h ^ (uint64_t)sp->h) * 1099511628211ULL;
    for (size_t i = 0; i < n; i++) h = (h ^ sp->mask[i]) * 1099511628211ULL;
    for (size_t i = 0; i < n; i++) h = (h ^ sp->pix[i]) * 1099511628211ULL;
    return h;
}

/* A file of ours in a --sprites DIR: sprite_ and 4 or more digits .png,
 * tracks.csv, or a temporary name of either. */
static int is_sprite_file(const char *name)
{
    if (!strcmp(name, "tracks.csv") || !strcmp(name, ".tracks.csv.tmp")) return 1;
    if (strncmp(name, "sprite_", 7)) return 0;
    const size_t digits = strspn(name + 7, "0123456789");
    return digits >= 4 && !strcmp(name + 7 + digits, ".png");
}

/* Entries of dir other than . and .. (ours: those is_sprite_file()
 * accepts), removing ours when remove is set. -1 (errno) if one cannot be
 * removed. */
static int dir_entries(const char *dir, int *ours, int remove)
{
    DIR *d = opendir(dir);
    *ours = 0;
    if (!d) return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        n++;
        if (!is_sprite_file(e->d_name)) continue;
        ++*ours;
        char p[PATH_MAX];
        if (!remove || snprintf(p, sizeof(p), "%s/%s", dir, e->d_name) >= (int)sizeof(p)) continue;
        if (unlink(p) < 0 && errno != ENOENT) {
            const int saved = errno;
            closedir(d);
            errno = saved;
            return -1;
        }
    }
    closedir(d);
    return n;
}

/* Ahead of any write: a DIR that holds anything is refused unless -y (or
 * a yes on a terminal), which removes the sprite files and tracks.csv of
 * an earlier run, so none passes for this one's; a DIR holding other files
 * is refused either way. 0 or an exit code, the reason printed. */
static int sprites_check_dir(const char *dir, const char *inpath, int policy)
{
    int ours;
    const int n = dir_entries(dir, &ours, 0);
    if (n == 0) return 0;
    if (n > ours) {
        fprintf(stderr, "%s: %s: not empty, and holds files other than sprite_NNNN.png and tracks.csv\n",
                prog, dir);
        return PNMF_EXIT_OUTPUT;
    }
    const int ret = cli_check_folder(prog, dir, inpath, n, "sprite", policy);
    if (ret) return ret;
    if (dir_entries(dir, &ours, 1) < 0) {
        fprintf(stderr, "%s: %s: cannot remove the old sprite files: %s\n", prog, dir, strerror(errno));
        return PNMF_EXIT_OUTPUT;
    }
    return 0;
}

/* dir/sprite_NNNN.png through the output module, which writes
 * tmp/frame_000001.png: renamed into place once complete. */
static int sprite_png(const char *dir, const char *tmp, int number, const Sprite *sp, char *err, size_t errlen)
{
    const size_t n = (size_t)sp->w * sp->h;
    uint8_t *ya = malloc(2 * n);
    if (!ya) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < n; i++) ya[2 * i] = sp->pix[i], ya[2 * i + 1] = sp->mask[i] ? 255 : 0;
    const PnmfOutputInfo oi = { .width = sp->w, .height = sp->h, .fps_num = 1, .fps_den = 1, .alpha = 1 };
    char from[2 * PATH_MAX], to[2 * PATH_MAX];
    snprintf(from, sizeof(from), "%s/frame_000001.png", tmp);
    snprintf(to, sizeof(to), "%s/sprite_%04d.png", dir, number);
    PnmfOutput *out = pnmf_output_open("png", tmp, &oi, err, errlen);
    int ok = out && pnmf_output_write(out, ya, 2 * sp->w, err, errlen) == 0;
    if (out && pnmf_output_close(&out, ok ? err : NULL, ok ? errlen : 0) < 0) ok = 0;
    free(ya);
    if (ok && rename(from, to) < 0) {
        snprintf(err, errlen, "sprite_%04d.png: %s", number, strerror(errno));
        ok = 0;
    }
    return ok ? 0 : -1;
}

/* The number of the sprite with sp's content, added and written as a PNG
 * when new; -1 on failure (reason in err). */
static int sprite_number(SpriteSet *set, const PnmfSprite *sp, const char *dir, const char *tmp, char *err,
                         size_t errlen)
{
    const uint64_t h = sprite_hash(sp);
    const size_t n = (size_t)sp->w * sp->h;
    for (int i = 0; i < set->count; i++) {
        const Sprite *q = &set->s[i];
        if (q->hash == h && q->w == sp->w && q->h == sp->h && !memcmp(q->mask, sp->mask, n) &&
            !memcmp(q->pix, sp->pix, n))
            return i;
    }
    if (set->count == set->cap) {
        const int cap = set->cap ? 2 * set->cap : 64;
        void *p = realloc(set->s, (size_t)cap * sizeof(Sprite));
        if (!p) goto nomem;
        set->s = p, set->cap = cap;
    }
    Sprite *q = &set->s[set->count];
    q->w = sp->w, q->h = sp->h, q->hash = h;
    q->pix = malloc(n), q->mask = malloc(n);
    if (!q->pix || !q->mask) {
        free(q->pix);
        free(q->mask);
        goto nomem;
    }
    memcpy(q->pix, sp->pix, n);
    memcpy(q->mask, sp->mask, n);
    set->count++;
    if (sprite_png(dir, tmp, set->count - 1, q, err, errlen) < 0) return -1;
    return set->count - 1;
nomem:
    snprintf(err, errlen, "out of memory");
    return -1;
}

/* Decode path and write the sprites it paints and tracks.csv into dir;
 * the counts go to *nsprites and *nplaces. 0 or an exit code, the reason
 * printed. */
static int sprites_write(const char *path, const char *dir, int policy, int *nsprites, long *nplaces)
{
    int code = sprites_check_dir(dir, path, policy);
    if (code) return code;
    char err[PATH_MAX + 256] = "";
    if (pnmf_output_mkdir(dir, err, sizeof(err)) < 0) {
        fprintf(stderr, "%s: %s: %s\n", prog, dir, err);
        return PNMF_EXIT_OUTPUT;
    }
    char csv_tmp[PATH_MAX + 32], csv[PATH_MAX + 32], tmp[PATH_MAX + 32];
    if (snprintf(tmp, sizeof(tmp), "%s/.sprite.tmp.XXXXXX", dir) >= (int)sizeof(tmp) - 32) {
        fprintf(stderr, "%s: %s: name too long\n", prog, dir);
        return PNMF_EXIT_OUTPUT;
    }
    snprintf(csv_tmp, sizeof(csv_tmp), "%s/.tracks.csv.tmp", dir);
    snprintf(csv, sizeof(csv), "%s/tracks.csv", dir);
    FILE *in = fopen(path, "rb"), *f = NULL;
    PnmfDecoder *dec = NULL;
    SpriteSet set = { 0 };
    PnmfSpritePlacement *pl = NULL;
    uint8_t *frame = NULL;
    int tmp_made = 0, maxpl = 0;
    long places = 0;
    if (!in) {
        fprintf(stderr, "%s: %s: %s\n", prog, path, strerror(errno));
        return PNMF_EXIT_INPUT;
    }
    int ret = pnmf_dec_open(&dec, in);
    if (ret < 0) {
        fprintf(stderr, "%s: %s: %s\n", prog, path, dec && *pnmf_dec_errmsg(dec) ? pnmf_dec_errmsg(dec) : pnmf_strerror(ret));
        code = in_exit_code(ret);
        goto end;
    }
    const PnmfStreamInfo *si = pnmf_dec_info(dec);
    if (!mkdtemp(tmp)) {
        fprintf(stderr, "%s: %s: cannot create a temporary directory: %s\n", prog, dir, strerror(errno));
        code = PNMF_EXIT_OUTPUT;
        goto end;
    }
    tmp_made = 1;
    if (!(f = fopen(csv_tmp, "w"))) {
        fprintf(stderr, "%s: %s: %s\n", prog, csv, strerror(errno));
        code = PNMF_EXIT_OUTPUT;
        goto end;
    }
    fprintf(f, "frame,sprite,x,y,coefficient\n");
    if (!(frame = malloc((size_t)si->width * si->height))) goto nomem;
    for (int j = 0;; j++) {
        ret = pnmf_dec_read_frame(dec, frame, si->width);
        if (ret == PNMF_ERR_EOF) break;
        if (ret < 0) {
            fprintf(stderr, "%s: %s: frame %d: %s\n", prog, path, j, *pnmf_dec_errmsg(dec) ? pnmf_dec_errmsg(dec) : pnmf_strerror(ret));
            code = in_exit_code(ret);
            goto end;
        }
        int np = pnmf_dec_frame_sprites(dec, pl, maxpl);
        if (np > maxpl) {
            free(pl);
            if (!(pl = malloc((size_t)np * sizeof(*pl)))) goto nomem;
            maxpl = np;
            np = pnmf_dec_frame_sprites(dec, pl, maxpl);
        }
        for (int i = 0; i < np; i++) {
            PnmfSprite sp;
            if (pnmf_dec_sprite(dec, pl[i].sprite, &sp) < 0) {
                fprintf(stderr, "%s: %s: frame %d: sprite %d is not in the dictionary\n", prog, path, j,
                        pl[i].sprite);
                code = PNMF_EXIT_CORRUPT;
                goto end;
            }
            const int num = sprite_number(&set, &sp, dir, tmp, err, sizeof(err));
            if (num < 0) {
                fprintf(stderr, "%s: %s: %s\n", prog, dir, err);
                code = PNMF_EXIT_OUTPUT;
                goto end;
            }
            /* coefficient 1: sprites are painted opaque */
            fprintf(f, "%d,%d,%d,%d,1\n", j, num, pl[i].x, pl[i].y);
            places++;
        }
    }
    if (ferror(f) | fclose(f)) {
        f = NULL;
        fprintf(stderr, "%s: %s: %s\n", prog, csv, strerror(errno));
        code = PNMF_EXIT_OUTPUT;
        goto end;
    }
    f = NULL;
    if (rename(csv_tmp, csv) < 0) {
        fprintf(stderr, "%s: %s: %s\n", prog, csv, strerror(errno));
        code = PNMF_EXIT_OUTPUT;
        goto end;
    }
    *nsprites = set.count, *nplaces = places;
    goto end;
nomem:
    fprintf(stderr, "%s: %s: out of memory\n", prog, path);
    code = PNMF_EXIT_FAIL;
end:
    if (f) {
        fclose(f);
        unlink(csv_tmp);
    }
    if (tmp_made) rmdir(tmp);
    for (int i = 0; i < set.count; i++) free(set.s[i].pix), free(set.s[i].mask);
    free(set.s);
    free(pl);
    free(frame);
    pnmf_dec_close(&dec);
    fclose(in);
    return code;
}

/* ---- report ---------------------------------------------------------- */

/* What the report keeps of a window: the statistics and its block sizes. */
typedef struct WinRow {
    PnmfInfoWindow st;
    char *blocks;
} WinRow;

static char *blocks_string(const PnmfInfoWindow *w)
{
    const size_t cap = (size_t)w->components * 24 + 1;
    char *s = malloc(cap);
    if (!s) return NULL;
    size_t o = 0;
    s[0] = 0;
    for (int i = 0; i < w->components; i++) {
        if (w->block_h[i]) o += (size_t)snprintf(s + o, cap - o, "%s%dx%d", i ? " " : "", w->block_h[i], w->block_w[i]);
        else o += (size_t)snprintf(s + o, cap - o, "%s-", i ? " " : "");
    }
    return s;
}

static const char *shift_name(int s)
{
    switch (s) {
    case PNMF_SHIFT_VECTOR: return "vector (1-D cyclic shift of the column-stacked frame)";
    case PNMF_SHIFT_TORUS: return "torus (2-D cyclic shift of the frame)";
    case PNMF_SHIFT_CANVAS: return "canvas (2-D cyclic shift on a canvas; the frame is its top-left corner)";
    default: return "unknown";
    }
}

static void add_window(PnmfInfoWindow *tot, const PnmfInfoWindow *w)
{
    tot->frames += w->frames;
    tot->components += w->components;
    tot->nonempty += w->nonempty;
    tot->used += w->used;
    tot->entries += w->entries;
    tot->repeat_frames += w->repeat_frames;
    if (w->max_occurrences > tot->max_occurrences) tot->max_occurrences = w->max_occurrences;
    tot->levels += w->levels;
    tot->chunk_bytes += w->chunk_bytes;
    tot->payload_bytes += w->payload_bytes;
    tot->payload_zstd_bytes += w->payload_zstd_bytes;
    for (int i = 0; i < 8; i++) tot->res_pred[i] += w->res_pred[i];
    tot->res_coded += w->res_coded;
    tot->res_transform += w->res_transform;
    tot->res_palette += w->res_palette;
    tot->sprite_poses += w->sprite_poses;
    tot->sprite_places += w->sprite_places;
    for (int s = 0; s < PNMF_INFO_SECTIONS; s++) {
        tot->sec[s].values += w->sec[s].values;
        tot->sec[s].raw_bytes += w->sec[s].raw_bytes;
        tot->sec[s].zstd_bytes += w->sec[s].zstd_bytes;
    }
}

/* The window's optional tools as letters, one per flags bit
 * (docs/format.md, "Window payload" item 1). */
static void tools_cell(char *out, uint64_t flags)
{
    static const struct { int bit; char letter; } tool[] = {
        { 6, 'q' }, { 7, 'd' }, { 8, '8' }, { 9, 'c' }, { 10, 'a' }, { 11, 'm' }, { 12, 's' }, { 13, 'p' }, { 14, 'n' }, { 15, 'v' }, { 16, 't' }, { 17, 'b' }, { 18, 'w' }, { 19, 'o' }, { 20, 'f' }, { 21, 'k' }, { 22, 'r' }, { 23, 'z' },
    };
    int n = 0;
    for (size_t i = 0; i < sizeof(tool) / sizeof(tool[0]); i++)
        if (flags >> tool[i].bit & 1) out[n++] = tool[i].letter;
    if (!n) out[n++] = '-';
    out[n] = 0;
}

static void print_csv(const WinRow *rows, int n, const PnmfInfoWindow *tot)
{
    printf("window,first_frame,frames,components,nonempty,used,entries,repeat_frames,"
           "max_occurrences,chunk_bytes,payload_bytes,payload_zstd_bytes");
    for (int s = 0; s < PNMF_INFO_SECTIONS; s++)
        printf(",%s_values,%s_raw,%s_zstd", sec_csv[s], sec_csv[s], sec_csv[s]);
    printf(",blocks,tools\n");
    for (int r = 0; r <= n; r++) {
        const PnmfInfoWindow *w = r < n ? &rows[r].st : tot;
        if (r < n) printf("%d,%d,", w->index, w->first_frame);
        else printf("total,0,");
        printf("%d,%d,%d,%d,%llu,%d,%d,%llu,%llu,%llu", w->frames, w->components, w->nonempty,
               w->used, (unsigned long long)w->entries, w->repeat_frames, w->max_occurrences,
               (unsigned long long)w->chunk_bytes, (unsigned long long)w->payload_bytes,
               (unsigned long long)w->payload_zstd_bytes);
        for (int s = 0; s < PNMF_INFO_SECTIONS; s++)
            printf(",%llu,%llu,%llu", (unsigned long long)w->sec[s].values,
                   (unsigned long long)w->sec[s].raw_bytes, (unsigned long long)w->sec[s].zstd_bytes);
        char tl[CELL] = "";
        if (r < n) tools_cell(tl, w->flags);
        printf(",%s,%s\n", r < n ? rows[r].blocks : "", tl);
    }
}

static int section_rows(Table *t, const char *label, const PnmfInfoWindow *w, int level)
{
    uint64_t zsum = 0;
    for (int s = 0; s < PNMF_INFO_SECTIONS; s++) zsum += w->sec[s].zstd_bytes;
    for (int s = 0; s < PNMF_INFO_SECTIONS; s++) {
        const PnmfInfoSectionBytes *x = &w->sec[s];
        /* format 6: the residual levels may be a range-coded stream */
        const int rc = s == PNMF_INFO_SEC_RES_LEVELS ? w->rc_levels : 0;
        if (table_row(t, s ? "" : label, rc == 4 ? "res levels f0+ctx" : rc == 3 ? "res levels ctx" : rc == 2 ? "res levels f0+rc" : rc ? "res levels rc" : pnmf_info_section_name(s),
                      num(x->values),
                      num(x->raw_bytes),
                      pct(x->raw_bytes, w->payload_bytes), level ? num(x->zstd_bytes) : "-",
                      level ? pct(x->zstd_bytes, zsum) : "-") < 0)
            return -1;
    }
    uint64_t values = 0;
    for (int s = 0; s < PNMF_INFO_SECTIONS; s++) values += w->sec[s].values;
    if (table_row(t, "", "sum of sections", num(values), num(w->payload_bytes), "100.0%",
                  level ? num(zsum) : "-", level ? "100.0%" : "-") < 0 ||
        table_row(t, "", "whole payload", "", num(w->payload_bytes), "",
                  level ? num(w->payload_zstd_bytes) : "-", "") < 0)
        return -1;
    return 0;
}

/* The frame times of the whole file (pnmf_info_window_time()). */
typedef struct TimeSum {
    int timed;
    int64_t start, end;
    long runs;
} TimeSum;
static TimeSum times;

static const char *range_name(int r) { return r == 1 ? "limited (16..235)" : r == 2 ? "full (0..255)" : "unspecified"; }

static int print_tables(const char *path, const PnmfInfoHeader *h, const WinRow *rows, int n,
                        const PnmfInfoWindow *tot, int level)
{
    printf("file          %s, %s bytes\n", path, num(h->file_bytes));
    printf("version       %d (needs a reader of version %d or later)\n", h->version, h->min_reader_version);
    if (h->half)
        printf("frame size    %dx%d, coded at half size (%dx%d) and scaled up\n", h->width, h->height, (h->width + 1) / 2,
               (h->height + 1) / 2);
    else
        printf("frame size    %dx%d\n", h->width, h->height);
    printf("frame rate    %d/%d (%.3f fps)\n", h->fps_num, h->fps_den, (double)h->fps_num / h->fps_den);
    printf("frames        %d\n", h->frame_count);
    printf("levels        %s; matrix %d, primaries %d, transfer %d (H.273, 2: unspecified)\n",
           range_name(h->color_range), h->colorspace, h->color_primaries, h->color_trc);
    if (times.timed)
        printf("frame times   time base %d/%d: from %lld to %lld (%.3f s to %.3f s), %ld runs of equal durations\n",
               h->time_base_num, h->time_base_den, (long long)times.start, (long long)times.end,
               (double)times.start * h->time_base_num / h->time_base_den,
               (double)times.end * h->time_base_num / h->time_base_den, times.runs);
    else
        printf("frame times   none: constant frame rate\n");
    printf("windows       %d, of up to %d frames\n", n, h->window);
    printf("components    up to %d per window\n", h->components);
    printf("shift model   %s\n", shift_name(h->shift_model));
    if (h->shift_model == PNMF_SHIFT_CANVAS)
        printf("canvas        %dx%d\n", h->canvas_width, h->canvas_height);
    printf("quality       -q %d: component step %d/256, coefficient step %d/16\n", h->quality,
           h->w_step, h->r_step);

    Table t = { 15, "rrrrrrrrrrrrrrr", 0, 0, NULL };
    char c[6][CELL];
    int ret = table_row(&t, "window", "first", "frames", "key", "tools", "comps", "used", "entries", "repeat",
                        "max occ", "levels", "poses", "places", "chunk", "payload");
    for (int r = 0; r < n && ret == 0; r++) {
        const PnmfInfoWindow *w = &rows[r].st;
        snprintf(c[0], CELL, "%d", w->index);
        snprintf(c[1], CELL, "%d", w->first_frame);
        snprintf(c[2], CELL, "%d", w->frames);
        snprintf(c[3], CELL, "%d%s", w->components, w->carried ? " c" : "");
        snprintf(c[4], CELL, "%d", w->used);
        snprintf(c[5], CELL, "%d", w->repeat_frames);
        char mo[CELL];
        snprintf(mo, CELL, "%d", w->max_occurrences);
        char np[CELL], pl[CELL];
        snprintf(np, CELL, "%s", w->sprites ? num((uint64_t)w->sprite_poses) : "-");
        snprintf(pl, CELL, "%s", w->sprites ? num(w->sprite_places) : "-");
        char tl[CELL];
        tools_cell(tl, w->flags);
        ret = table_row(&t, c[0], c[1], c[2], w->key ? "yes" : "no", tl, c[3], c[4], num(w->entries), c[5], mo,
                        num(w->levels), np, pl, num(w->chunk_bytes), num(w->payload_bytes));
    }
    if (ret == 0) {
        snprintf(c[2], CELL, "%d", tot->frames);
        snprintf(c[5], CELL, "%d", tot->repeat_frames);
        char mo[CELL];
        snprintf(mo, CELL, "%d", tot->max_occurrences);
        char np[CELL], pl[CELL];
        snprintf(np, CELL, "%s", num((uint64_t)tot->sprite_poses));
        snprintf(pl, CELL, "%s", num(tot->sprite_places));
        ret = table_row(&t, "all", "", c[2], "", "", "", "", num(tot->entries), c[5], mo, num(tot->levels), np, pl,
                        num(tot->chunk_bytes), num(tot->payload_bytes));
    }
    if (ret < 0) {
        free(t.cell);
        return -1;
    }
    printf("\n");
    table_print(&t, "");
    printf("(first: 0-based frame; key: yes if it decodes on its own (a key window, or no\n"
           " residual layer), no if it predicts from the window before; tools: the residual\n"
           " layer's optional tools (q quarter-sample vectors, d deblocking, 8 8x8 transform,\n"
           " c sample-context levels, a intra directions, p palette blocks, m context-coded\n"
           " sprite masks, s step cascade, n neighbour contexts of modes and vectors, v\n"
           " vectors from their neighbours' median, t context-coded sprite placements (tracks),\n"
           " b compound prediction (second hypotheses), w weighted prediction (a gain and\n"
           " offset a frame), o coding order (groups of frames, the last coded first),\n"
           " f quarter samples by the 6-tap filter, k the key frame as reference 15, r the\n"
           " restoration filter of the frames shown, z the previous prediction along a warp\n"
           " a frame; '-' none); comps: components in the payload, c: carried over from the\n"
           " last model (no blocks in the payload); used: with an entry; entries:\n"
           " (component, coefficient, shift) triples of all frames;\n"
           " repeat: frames in which a component appears more than once; max occ: most\n"
           " entries of one component in a frame; levels: samples of the blocks in the\n"
           " payload; poses: sprites the window adds to the dictionary, places: their\n"
           " placements in all frames ('-': no sprite layer); chunk: bytes in the file, 20 of\n"
           " framing and the zstd frame; payload: decompressed)\n");
    free(t.cell);

    printf("\nblock sizes (height x width, '-' for an empty component)\n");
    for (int r = 0; r < n; r++) printf("  window %d: %s\n", rows[r].st.index, rows[r].blocks);

    uint64_t nres = 0;
    for (int i = 0; i < 8; i++) nres += tot->res_pred[i];
    if (nres) {
        static const char *const pred[8] = { "model", "previous", "motion", "spatial", "shifted",
                                             "intra DC", "intra V", "intra H" };
        printf("\nresidual blocks (8x8, all frames): %s; with levels %s (%.1f%%), through the transform %s\n",
               num(nres), num(tot->res_coded), 100.0 * (double)tot->res_coded / (double)nres,
               num(tot->res_transform));
        for (int i = 0; i < 8; i++)
            printf("%s%s %s (%.1f%%)%s", i % 4 ? ", " : "  ", pred[i], num(tot->res_pred[i]),
                   100.0 * (double)tot->res_pred[i] / (double)nres, i % 4 == 3 ? "\n" : "");
        if (tot->res_palette) /* format 9: drawn from their palettes, counted under model */
            printf("  of the model's, palette blocks %s (%.1f%%)\n", num(tot->res_palette),
                   100.0 * (double)tot->res_palette / (double)nres);
    }

    if (level) printf("\nbytes by section of the payload (zstd: the section compressed alone at level %d)\n", level);
    else printf("\nbytes by section of the payload\n");
    Table s = { 7, "llrrrrr", 0, 0, NULL };
    ret = table_row(&s, "window", "section", "values", "raw bytes", "raw %", "zstd bytes", "zstd %");
    for (int r = 0; r < n && ret == 0; r++) {
        char lab[CELL];
        snprintf(lab, CELL, "%d", rows[r].st.index);
        ret = section_rows(&s, lab, &rows[r].st, level);
    }
    if (ret == 0 && n > 1) ret = section_rows(&s, "all", tot, level);
    if (ret < 0) {
        free(s.cell);
        return -1;
    }
    table_print(&s, "");
    free(s.cell);

    const uint64_t framing = h->file_bytes - tot->chunk_bytes - (uint64_t)h->header_bytes;
    printf("\nfile: %s bytes = header %s + window chunks %s + index and trailer %s\n",
           num(h->file_bytes), num((uint64_t)h->header_bytes), num(tot->chunk_bytes), num(framing));
    printf("      %s payload bytes in %s stored (%.2f : 1), %.4f bits per pixel\n",
           num(tot->payload_bytes), num(tot->chunk_bytes),
           tot->chunk_bytes ? (double)tot->payload_bytes / (double)tot->chunk_bytes : 0.0,
           h->frame_count ? 8.0 * (double)h->file_bytes / ((double)h->frame_count * h->width * h->height) : 0.0);
    if (level) {
        const uint64_t zstd = tot->chunk_bytes - 20 * (uint64_t)n;
        printf("      zstd frames %s bytes; the payloads compressed again at level %d: %s bytes%s\n",
               num(zstd), level, num(tot->payload_zstd_bytes),
               zstd == tot->payload_zstd_bytes ? " (the same: written at this level, most likely)" : "");
    }
    return 0;
}

/* ---- main ------------------------------------------------------------ */


int main(int argc, char **argv)
{
    enum { OPT_CSV = 256, OPT_LEVEL, OPT_COMPONENTS, OPT_WINDOW, OPT_FORMAT, OPT_SCALE, OPT_SPRITES };
    static const struct option longopts[] = {
        { "csv", no_argument, NULL, OPT_CSV },
        { "level", required_argument, NULL, OPT_LEVEL },
        { "components", required_argument, NULL, OPT_COMPONENTS },
        { "window", required_argument, NULL, OPT_WINDOW },
        { "components-format", required_argument, NULL, OPT_FORMAT },
        { "scale", required_argument, NULL, OPT_SCALE },
        { "sprites", required_argument, NULL, OPT_SPRITES },
        { "help", no_argument, NULL, 'h' },
        { "version", no_argument, NULL, 'V' },
        { NULL, 0, NULL, 0 },
    };
    cli_init();
    opterr = 0;
    const char *comp_path = NULL, *format = "png", *sprite_dir = NULL;
    long long level = 19, window = 0, scale = 0, v;
    int csv = 0, window_given = 0, c, policy = CLI_OUT_ASK;
    while ((c = getopt_long(argc, argv, ":hVyn", longopts, NULL)) != -1) {
        switch (c) {
        case OPT_CSV: csv = 1; break;
        case OPT_LEVEL: if (cli_parse_int(prog, "--level", optarg, 0, 22, &v)) return PNMF_EXIT_USAGE; level = v; break;
        case OPT_COMPONENTS:
            if (!*optarg) {
                fprintf(stderr, "%s: option --components expects a file name\n", prog);
                return PNMF_EXIT_USAGE;
            }
            comp_path = optarg;
            break;
        case OPT_WINDOW: if (cli_parse_int(prog, "--window", optarg, 0, 1LL << 28, &v)) return PNMF_EXIT_USAGE; window = v; window_given = 1; break;
        case OPT_FORMAT:
            if (strcmp(optarg, "png") && strcmp(optarg, "pgm")) {
                fprintf(stderr, "%s: option --components-format expects png or pgm, got '%s'\n", prog, optarg);
                return PNMF_EXIT_USAGE;
            }
            format = optarg;
            break;
        case OPT_SCALE: if (cli_parse_int(prog, "--scale", optarg, 0, 64, &v)) return PNMF_EXIT_USAGE; scale = v; break;
        case OPT_SPRITES:
            if (!*optarg) {
                fprintf(stderr, "%s: option --sprites expects a folder name\n", prog);
                return PNMF_EXIT_USAGE;
            }
            sprite_dir = optarg;
            break;
        case 'y': policy = CLI_OUT_OVERWRITE; break;
        case 'n': policy = CLI_OUT_KEEP; break;
        case 'h': usage(stdout); return PNMF_EXIT_OK;
        case 'V': printf("pnmf-info %s\n", PNMF_VERSION_STRING); return PNMF_EXIT_OK;
        default:
            cli_bad_option(prog, argv, c);
            return PNMF_EXIT_USAGE;
        }
    }
    if (argc - optind != 1) {
        fprintf(stderr, "%s: expected one FILE.pnmf; try '%s --help'\n", prog, prog);
        return PNMF_EXIT_USAGE;
    }
    if (window_given && !comp_path) {
        fprintf(stderr, "%s: option --window needs --components OUT\n", prog);
        return PNMF_EXIT_USAGE;
    }
    const char *path = argv[optind];
    FILE *in = fopen(path, "rb");
    if (!in) {
        fprintf(stderr, "%s: %s: %s\n", prog, path, strerror(errno));
        return PNMF_EXIT_INPUT;
    }
    PnmfInfo *info = NULL;
    PnmfInfoBlocks *blocks = NULL;
    PnmfInfoWindow drawn, tot;
    WinRow *rows = NULL;
    uint64_t *drawn_entries = NULL;
    Mosaic mosaic = { 0 };
    int n = 0, cap = 0, code = PNMF_EXIT_OK;
    memset(&tot, 0, sizeof(tot));
    memset(&drawn, 0, sizeof(drawn));
    int ret = pnmf_info_open(&info, in);
    if (ret < 0) {
        const char *why = pnmf_info_errmsg(info);
        fprintf(stderr, "%s: %s: %s\n", prog, path, why && *why ? why : pnmf_strerror(ret));
        code = in_exit_code(ret);
        goto end;
    }
    const PnmfInfoHeader *h = pnmf_info_header(info);
    for (;;) {
        PnmfInfoWindow st;
        ret = pnmf_info_next_window(info, &st, (int)level);
        if (ret == 0) break;
        if (ret < 0) {
            const char *why = pnmf_info_errmsg(info);
            fprintf(stderr, "%s: %s: window %d: %s\n", prog, path, n, *why ? why : pnmf_strerror(ret));
            code = in_exit_code(ret);
            goto end;
        }
        int64_t ts, te;
        int runs;
        if (pnmf_info_window_time(info, &ts, &te, &runs) == 1) {
            if (!times.timed) times.start = ts;
            times.timed = 1, times.end = te, times.runs += runs;
        }
        if (n == cap) {
            cap = cap ? 2 * cap : 16;
            void *p = realloc(rows, (size_t)cap * sizeof(*rows));
            if (!p) goto nomem;
            rows = p;
        }
        rows[n].st = st;
        if (!(rows[n].blocks = blocks_string(&st))) goto nomem;
        n++;
        add_window(&tot, &st);
        if (comp_path && st.index == window) {
            if ((ret = pnmf_info_window_blocks(info, &blocks)) < 0) goto nomem;
            /* st's arrays are refilled by the next read: keep a copy */
            if (!(drawn_entries = malloc((size_t)st.components * sizeof(uint64_t)))) goto nomem;
            memcpy(drawn_entries, st.comp_entries, (size_t)st.components * sizeof(uint64_t));
            drawn = st;
            drawn.comp_entries = drawn_entries;
            drawn.block_h = blocks->bh, drawn.block_w = blocks->bw;
        }
    }
    if (comp_path && !blocks) {
        fprintf(stderr, "%s: %s: --window %lld: the file has %d window%s (0..%d)\n", prog, path,
                window, n, n == 1 ? "" : "s", n - 1);
        code = PNMF_EXIT_USAGE;
        goto end;
    }
    if (comp_path) {
        char err[512] = "";
        if ((code = cli_check_output(prog, comp_path, &path, 1, policy))) goto end;
        code = mosaic_make(blocks, (int)scale, &mosaic, err, sizeof(err));
        if (code != PNMF_EXIT_OK) {
            fprintf(stderr, "%s: %s: %s\n", prog, comp_path, err);
            goto end;
        }
        if (mosaic_write(&mosaic, format, comp_path, err, sizeof(err)) < 0) {
            fprintf(stderr, "%s: %s: %s\n", prog, comp_path, err);
            code = PNMF_EXIT_OUTPUT;
            goto end;
        }
    }
    int nsprites = 0;
    long nplaces = 0;
    if (sprite_dir && (code = sprites_write(path, sprite_dir, policy, &nsprites, &nplaces))) goto end;
    if (csv) print_csv(rows, n, &tot);
    else if (print_tables(path, h, rows, n, &tot, (int)level) < 0) goto nomem;
    if (comp_path && !csv) mosaic_legend(&mosaic, blocks, &drawn, comp_path);
    if (sprite_dir && !csv)
        printf("\nsprites: %d written to %s/sprite_NNNN.png, %ld placements in %s/tracks.csv\n", nsprites,
               sprite_dir, nplaces, sprite_dir);
    if (fflush(stdout) || ferror(stdout)) {
        fprintf(stderr, "%s: standard output: %s\n", prog, strerror(errno));
        code = PNMF_EXIT_OUTPUT;
    }
    goto end;
nomem:
    fprintf(stderr, "%s: %s: out of memory\n", prog, path);
    code = PNMF_EXIT_FAIL;
end:
    for (int r = 0; r < n; r++) free(rows[r].blocks);
    free(rows);
    free(drawn_entries);
    mosaic_free(&mosaic);
    pnmf_info_blocks_free(&blocks);
    pnmf_info_close(&info);
    fclose(in);
    return code;
}
