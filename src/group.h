/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Window flags bit 20 (format 16, docs/format.md "Groups"): 16x16 groups
 * of four 8x8 blocks under one vector. A block at an even block row and
 * column with a block to its right and one below *leads* a group; after a
 * leader's mode of prediction 4 (shifted) the modes stream holds one
 * decision, whether the group is taken. The other three blocks of a taken
 * group *follow* it: their prediction is 4 with the leader's vector,
 * reference and second hypothesis, none of which the vectors stream
 * repeats, and their modes hold only whether levels follow and whether
 * they are transform coefficients. A smooth picture that moves as one
 * over 16x16 then pays one vector, searched over the whole group, where
 * four blocks would pay four.
 */
#ifndef PNMF_GROUP_H
#define PNMF_GROUP_H

#include <stddef.h>
#include <stdint.h>

#include "rangecoder.h"

#define PNMF_FLAG_GROUPS 1048576 /* window flags bit 20 (format 16): 16x16 groups under one vector */

/* A frame's group map (one byte a block): a block that leads a taken
 * group, one that follows one, any other. */
#define PNMF_GRP_NONE   0
#define PNMF_GRP_LEADS  1
#define PNMF_GRP_FOLLOWS 2

/* The decisions' contexts: the group's decision by how many of the groups
 * left and above are taken (0..2); a follower's levels by whether the
 * leader has levels, its transform by whether the leader's are transform
 * coefficients. */
typedef struct PnmfGrpCtx {
    RcProb take[3];
    RcProb coded[2];
    RcProb tx[2];
} PnmfGrpCtx;

static inline void pnmf_grp_ctx_init(PnmfGrpCtx *c) { rc_probs_init(&c->take[0], sizeof(*c) / sizeof(RcProb)); }

/* Whether block (bcol, brow) of a bx x by grid leads a group. */
static inline int pnmf_grp_leader(int bx, int by, int bcol, int brow)
{
    return !(bcol & 1) && !(brow & 1) && bcol + 1 < bx && brow + 1 < by;
}

/* The block that leads (bcol, brow)'s group when one does (block b of a
 * grid bx across). */
static inline size_t pnmf_grp_lead_of(int bx, size_t b, int bcol, int brow)
{
    return b - (size_t)(bcol & 1) - (size_t)(brow & 1) * (size_t)bx;
}

/* The context of leader b's decision in its frame's group map g. */
static inline int pnmf_grp_take_ctx(const uint8_t *g, int bx, size_t b, int bcol, int brow)
{
    return (bcol >= 2 && g[b - 2] == PNMF_GRP_LEADS) + (brow >= 2 && g[b - 2 * (size_t)bx] == PNMF_GRP_LEADS);
}

/* Mark leader b's group taken in g (the three followers). */
static inline void pnmf_grp_mark(uint8_t *g, int bx, size_t b)
{
    g[b] = PNMF_GRP_LEADS;
    g[b + 1] = g[b + (size_t)bx] = g[b + (size_t)bx + 1] = PNMF_GRP_FOLLOWS;
}

#endif
