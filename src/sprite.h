/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The sprite layer (docs/format.md, "Sprite layer"): opaque poses with
 * masks, kept in a dictionary that lives from a key window to the next,
 * and per frame a list of placements painted in order over a background
 * the decoder keeps itself. The composite is the window's model frame P_j,
 * which the residual layer's model and motion modes predict from.
 *
 * The decoder's state across frames:
 *   - the dictionary: a key window empties it; every window's new poses
 *     are appended in the order sent (ids are indices, never reused). A
 *     new pose is sent as a mask and a box of a frame of its window: its
 *     pixels are those of that frame as decoded, cut once the frame is
 *     decoded, so it is placed only in later frames. Its first showing is
 *     the residual layer's to code, at the quality asked for, and every
 *     later one is predicted from it;
 *   - the background B: 128 everywhere before a key window's first frame;
 *     after each decoded frame D_j, B takes D_j wherever frame j's
 *     placements paint nothing, and keeps its value where they paint
 *     (what a sprite covers is remembered, and shows again when it moves).
 *
 * P_j = B (as left by frame j-1), then each placement of frame j in list
 * order paints its pose's opaque pixels that fall inside the frame.
 */
#ifndef PNMF_SPRITE_H
#define PNMF_SPRITE_H

#include <stddef.h>
#include <stdint.h>

#include "rangecoder.h"

#define PNMF_SPRITE_MAX_POSES  1024      /* dictionary cap on poses */
#define PNMF_SPRITE_MAX_PIXELS (1 << 20) /* dictionary cap on the poses' box pixels (w * h summed) */
#define PNMF_SPRITE_MAX_PLACES 4096      /* placements in one frame */
#define PNMF_SPRITE_WORK       8         /* a frame's placements paint at most this many times its
                                          * pixels, plus PNMF_SPRITE_WORK_MIN */
#define PNMF_SPRITE_WORK_MIN   65536
#define PNMF_SPRITE_BG         128       /* the background before a key window's first frame */

/* A pose: one opaque sprite image, cropped to its mask's bounding box. */
typedef struct PnmfSpritePose {
    int w, h;             /* box size, both >= 1 */
    uint8_t *pix;         /* w * h luma, row-major; 0 outside the mask */
    uint8_t *mask;        /* w * h: 1 opaque, 0 transparent */
    int npix;             /* opaque pixels, >= 1 */
    uint32_t *list;       /* npix opaque pixels in raster order, (y << 16) | x in the box */
    uint64_t hash;        /* of w, h, mask and the opaque pixels (pnmf_sprite_hash()) */
    int src, sy, sx;      /* a layer's new pose: cut from its window's frame src, box at (sy, sx) */
    int mref, mdy, mdx;   /* a layer's new pose with context-coded masks: its mask read against the
                           * mask of new pose i - mref placed at (mdy, mdx) of its box; 0: none */
    int edge;             /* the encoder's: cut from a blob touching the frame edge */
    int line;             /* the encoder's: a frame line the sprites pass under (sprite_find.c) */
    int first_window;     /* the encoder's: window that added it */
    int last_window;      /* the encoder's: last window that placed it */
    long uses;            /* the encoder's: placements over all windows */
} PnmfSpritePose;

/* The dictionary: ids are indices and never change while it lives. */
typedef struct PnmfSpriteDict {
    PnmfSpritePose *pose; /* count poses */
    int count, alloc;
    size_t pixels;        /* sum of w * h over the poses */
    int windows;          /* the encoder's: windows processed */
} PnmfSpriteDict;

/* A pose painted in a frame: its box's top-left corner at (y, x) of the
 * frame; negative or past the frame where the pose is cut by the edge. */
typedef struct PnmfSpritePlace {
    int pose;             /* index into the dictionary */
    int y, x;
} PnmfSpritePlace;

typedef struct PnmfSpriteFrame {
    PnmfSpritePlace *place; /* count placements in paint order: back first */
    int count;
    int fg_pixels;        /* the encoder's: foreground pixels (differing from the background) */
    int unexplained;      /* the encoder's: foreground pixels no placement paints */
} PnmfSpriteFrame;

/* A window's sprite layer: the poses it adds to the dictionary and every
 * frame's placements. */
typedef struct PnmfSpriteLayer {
    int present;          /* window flags bit 5 */
    int ctxmasks;         /* window flags bit 11: the masks context-coded */
    int ctxplaces;        /* window flags bit 16: the placements context-coded (the reader's; to the
                           * writer 0: whichever layout is shorter, 1: the stream, -1: the varints) */
    int base;             /* the id of its first new pose (pnmf_sprite_dict_commit() sets it) */
    int npose;            /* new poses, appended to the dictionary in this order */
    PnmfSpritePose *pose;
    int m;                /* frames */
    int *first;           /* m + 1: frame j's placements are place[first[j] .. first[j+1]) */
    PnmfSpritePlace *place;
    size_t bytes;         /* the reader's: the layer's bytes in the payload */
} PnmfSpriteLayer;

/* ps = a copy of the w x h pose (pix, mask: nonzero is opaque), its list,
 * count and hash made. 0 or PNMF_ERR_NOMEM. */
int  pnmf_sprite_pose_make(PnmfSpritePose *ps, int w, int h, const uint8_t *pix, const uint8_t *mask);
/* As pnmf_sprite_pose_make(), hash 0: for the model reader's poses, which
 * nothing looks up by hash (the pose search's dictionaries are made with it). */
int  pnmf_sprite_pose_make_unhashed(PnmfSpritePose *ps, int w, int h, const uint8_t *pix, const uint8_t *mask);
void pnmf_sprite_pose_free(PnmfSpritePose *ps);

void pnmf_sprite_dict_init(PnmfSpriteDict *d);
void pnmf_sprite_dict_free(PnmfSpriteDict *d);
/* dst (freed first) = a deep copy of src. 0 or PNMF_ERR_NOMEM. */
int  pnmf_sprite_dict_copy(PnmfSpriteDict *dst, const PnmfSpriteDict *src);
/* Append a copy of a w x h pose (pix, mask); returns its id or PNMF_ERR_NOMEM. */
int  pnmf_sprite_dict_add(PnmfSpriteDict *d, int w, int h, const uint8_t *pix, const uint8_t *mask);

/* The dictionary after window L (NULL or not present: no sprite layer):
 * a key window (continues 0) empties it, then L's poses are appended,
 * their pixels 0 until pnmf_sprite_cut() fills them; L->base is set.
 * Refused (PNMF_ERR_CORRUPT, d unchanged, the reason in err) when a cap
 * would be passed, a placement names a pose the dictionary will not hold
 * (or a new pose in a frame not after the one it is cut from) or shows
 * none of its box in the rows x cols frame; PNMF_ERR_LIMIT when
 * a frame's placements paint more than PNMF_SPRITE_WORK * rows * cols +
 * PNMF_SPRITE_WORK_MIN pixels. */
int  pnmf_sprite_dict_commit(PnmfSpriteDict *d, PnmfSpriteLayer *L, int continues, int rows, int cols,
                             char *err, size_t errlen);

/* After frame j of L's window is decoded into D (rows of cols): the new
 * poses cut from it get their pixels. */
void pnmf_sprite_cut(PnmfSpriteDict *d, const PnmfSpriteLayer *L, int j, int cols, const uint8_t *D);

void pnmf_sprite_layer_free(PnmfSpriteLayer *L);

/* P (rows x cols) = B, then frame j's placements of L painted in order
 * with d's poses. */
void pnmf_sprite_paint(const PnmfSpriteDict *d, const PnmfSpriteLayer *L, int j, int rows, int cols,
                       const uint8_t *B, uint8_t *P);

/* pnmf_sprite_paint() without the copy of B: frame j's placements painted
 * over what P holds. */
void pnmf_sprite_paint_over(const PnmfSpriteDict *d, const PnmfSpriteLayer *L, int j, int rows, int cols,
                            uint8_t *P);

/* The background under n placements pl (of d's poses) in a rows x cols
 * frame, saved out of a frame and put back into another: the decoder keeps
 * the background B as the frame decoded last with the preceding B's samples
 * under the last frame's placements put back, which is
 * pnmf_sprite_background_update()'s B without a pass over the frame. A
 * pose that goes by rows of its mask saves its box's rows inside the
 * frame, a sparser one its opaque pixels inside it (the work stays within
 * what pnmf_sprite_dict_commit() bounds). under_size: the bytes save
 * writes; restore sets only the opaque pixels, so placements that overlap
 * put back one value, that of the frame saved from. */
size_t pnmf_sprite_under_size(const PnmfSpriteDict *d, const PnmfSpritePlace *pl, int n);
void pnmf_sprite_under_save(const PnmfSpriteDict *d, const PnmfSpritePlace *pl, int n, int rows, int cols,
                            const uint8_t *P, uint8_t *val);
void pnmf_sprite_under_restore(const PnmfSpriteDict *d, const PnmfSpritePlace *pl, int n, int rows, int cols,
                               const uint8_t *val, uint8_t *P);

/* After frame j is decoded into D: B = D outside the pixels frame j's
 * placements of L paint (L NULL or not present: everywhere). mark is
 * rows * cols bytes of zeros, left zero. */
void pnmf_sprite_background_update(const PnmfSpriteDict *d, const PnmfSpriteLayer *L, int j, int rows,
                                   int cols, const uint8_t *D, uint8_t *B, uint8_t *mark);

/* FNV-1a over w, h, the mask and the opaque pixels of a w x h box. */
/* Context-coded masks (window flags bit 11, docs/format.md "Sprite
 * layer"): the probabilities' count, the context of sample (y, x) of mask
 * m (w x h, its samples before (y, x) in raster order known) with the
 * reference mask r (rw x rh placed at (dy, dx) of m's box; NULL: none),
 * and the reading of the stream of a layer's np masks. */
#define PNMF_SPRITE_MASK_CTX (1024 + 512)
int pnmf_sprite_mask_context(const uint8_t *m, int w, int y, int x, const uint8_t *r, int rw, int rh, int dy,
                             int dx);
/* pnmf_sprite_mask_context() with direct reads where every sample it
 * takes lies inside both boxes (most of a mask), without a bounds test
 * a sample. */
static inline int pnmf_sprite_mask_context_fast(const uint8_t *m, int w, int y, int x, const uint8_t *r, int rw, int rh,
                                                int dy, int dx)
{
    if (!r) {
        if (y >= 2 && x >= 2 && x + 2 < w) {
            const uint8_t *a = m + (size_t)(y - 2) * w + x, *b = a + w, *c = b + w;
            return a[-1] << 9 | a[0] << 8 | a[1] << 7 | b[-2] << 6 | b[-1] << 5 | b[0] << 4 | b[1] << 3 |
                   b[2] << 2 | c[-2] << 1 | c[-1];
        }
    } else {
        const int ry = y - dy, rx = x - dx;
        if (y >= 1 && x >= 1 && x + 1 < w && ry >= 1 && ry + 1 < rh && rx >= 1 && rx + 1 < rw) {
            const uint8_t *b = m + (size_t)(y - 1) * w + x, *c = b + w, *q = r + (size_t)ry * rw + rx;
            return 1024 + (b[-1] << 8 | b[0] << 7 | b[1] << 6 | c[-1] << 5 | q[0] << 4 | q[-rw] << 3 |
                           q[rw] << 2 | q[-1] << 1 | q[1]);
        }
    }
    return pnmf_sprite_mask_context(m, w, y, x, r, rw, rh, dy, dx);
}
/* masks[i] (w[i] x h[i], zeroed) of the np poses of a layer, reference
 * ref[i] (0: none, else pose i - ref[i]) at (dy[i], dx[i]); 0, or -1 when
 * the n bytes at p are not exactly the stream. */
int pnmf_sprite_masks_read(const uint8_t *p, size_t n, int version, int np, uint8_t *const *masks, const int *w, const int *h,
                           const int *ref, const int *dy, const int *dx);

/* The encoder's (enc_sprite.c): each new pose's mask reference, chosen
 * for what its mask costs, and the layer's masks as the stream. */
struct Buf;
void pnmf_sprite_masks_plan(PnmfSpriteLayer *L);
void pnmf_sprite_masks_write(struct Buf *b, const PnmfSpriteLayer *L);

/* Context-coded placements (window flags bit 16, docs/format.md
 * "Context-coded placements"): one routine writes and reads them, so
 * that both see the same contexts. A magnitude's Exp-Golomb prefix has
 * PNMF_PLACE_MAG_CTX contexts and fewer than PNMF_PLACE_MAG_MAX ones. */
#define PNMF_PLACE_MAG_CTX 12
#define PNMF_PLACE_MAG_MAX 24
/* The decisions' contexts, offsets into PnmfPlaceIO.p (docs/format.md,
 * "Context-coded placements"). */
enum {
    PNMF_PC_CNT_ZERO = 0,                            /* 3: the count's difference is 0 */
    PNMF_PC_CNT_SIGN = PNMF_PC_CNT_ZERO + 3,              /* 1 */
    PNMF_PC_CNT_MAG = PNMF_PC_CNT_SIGN + 1,               /* magnitude */
    PNMF_PC_TRACK = PNMF_PC_CNT_MAG + PNMF_PLACE_MAG_CTX, /* 9: the reference is the expected one */
    PNMF_PC_NEW = PNMF_PC_TRACK + 9,                      /* 3: a placement on its own */
    PNMF_PC_REF_SIGN = PNMF_PC_NEW + 3,                   /* 1 */
    PNMF_PC_REF_MAG = PNMF_PC_REF_SIGN + 1,
    PNMF_PC_POSE = PNMF_PC_REF_MAG + PNMF_PLACE_MAG_CTX,  /* 6: the pose changes */
    PNMF_PC_POSE_NEXT = PNMF_PC_POSE + 6,                 /* 3: the changed pose is the one that last followed */
    PNMF_PC_POSE_SIGN = PNMF_PC_POSE_NEXT + 3,            /* 1 */
    PNMF_PC_POSE_MAG = PNMF_PC_POSE_SIGN + 1,
    PNMF_PC_RES = PNMF_PC_POSE_MAG + PNMF_PLACE_MAG_CTX,  /* 12: the position is the predicted one */
    PNMF_PC_RES_ZERO = PNMF_PC_RES + 12,                  /* 4: a component is 0 (y, x; by the velocity) */
    PNMF_PC_RES_SIGN = PNMF_PC_RES_ZERO + 4,              /* 2 */
    PNMF_PC_RES_MAG = PNMF_PC_RES_SIGN + 2,               /* 2 magnitudes */
    PNMF_PC_NEW_POSE = PNMF_PC_RES_MAG + 2 * PNMF_PLACE_MAG_CTX,
    PNMF_PC_NEW_SIGN = PNMF_PC_NEW_POSE + PNMF_PLACE_MAG_CTX, /* 2 */
    PNMF_PC_NEW_MAG = PNMF_PC_NEW_SIGN + 2,               /* 2 magnitudes */
    PNMF_PLACE_CTX = PNMF_PC_NEW_MAG + 2 * PNMF_PLACE_MAG_CTX
};

typedef struct PnmfPlaceIO {
    RcProb p[PNMF_PLACE_CTX];
    void (*put)(void *enc, RcProb *p, int bit); /* the writer's coder (p NULL: probability 1/2); NULL: reading d */
    void *enc;
    RcDec d;
    int bad;              /* the writer's: a value the layout cannot hold */
} PnmfPlaceIO;
/* Write (io->put set: L's placements, each against the reference of
 * least cost) or read (into L->place and L->first, which has m + 1
 * ints) a layer's placements. 0; reading: -1 for a stream read past its
 * end or a magnitude over the prefix's bound, -2 a count over
 * PNMF_SPRITE_MAX_PLACES, -3 a reference the frame before does not have,
 * -4 a pose or position out of range; PNMF_ERR_NOMEM. */
int pnmf_sprite_places_code(PnmfPlaceIO *io, PnmfSpriteLayer *L, int rows, int cols);
/* Read the n bytes at p as the stream: as pnmf_sprite_places_code(), and
 * -1 when the stream is not exactly its n bytes. */
int pnmf_sprite_places_read(const uint8_t *p, size_t n, int version, PnmfSpriteLayer *L, int rows, int cols);

uint64_t pnmf_sprite_hash(int w, int h, const uint8_t *pix, const uint8_t *mask);

#endif /* PNMF_SPRITE_H */
