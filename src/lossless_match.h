/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The encoder's exact block matcher for lossless windows: each reference
 * frame's 8x8 blocks at every sample position, indexed by a hash of their
 * samples, so that a block of the frame being coded finds the places of
 * the references that hold it exactly (a shifted block with no levels)
 * in a few lookups, where a search over the vectors of 16 references
 * would measure thousands of candidates. A reference is indexed once,
 * when a frame first needs it, and kept for the next frames of the
 * window's coding. Only the encoder includes this.
 */
#ifndef PNMF_LOSSLESS_MATCH_H
#define PNMF_LOSSLESS_MATCH_H

#include <stddef.h>
#include <stdint.h>

typedef struct PnmfLxMatch PnmfLxMatch;

/* A matcher for frames of rows x cols (NULL: no memory, or a frame under
 * 8 x 8). fast (a lossless coding): a frame after one whose blocks were
 * seldom in reference 0 looks in reference 0 alone (camera footage,
 * where the references' lookups find nothing and cost a cache miss
 * each). */
PnmfLxMatch *pnmf_lxm_new(int rows, int cols, int fast);
void         pnmf_lxm_free(void *m);

/* Frame j's references ref[t] = D_{j-1-t}, t < nref, each indexed when
 * pnmf_lxm_find() first looks in it (those of the frames before already
 * are). 0, or PNMF_ERR_ARG for more than PNMF_RES_REFS references. */
int pnmf_lxm_refs(PnmfLxMatch *m, int j, const uint8_t *const *ref, int nref);

/* The vectors (dy, dx), |dy|, |dx| <= maxv, at which reference t (of the
 * frame pnmf_lxm_refs() was last given) holds the 8 x 8 block of src at
 * (y0, x0) exactly: at most cap of them into out, those nearest to
 * (py, px) first (ties to the later position in raster order) among the
 * places the index keeps (of a run of equal blocks along a row or a
 * column, every PNMF_LXM_RUN-th) and of those sharing the block's hash
 * bucket, the last PNMF_LXM_CHAIN in raster order. Returns how many, or
 * PNMF_ERR_NOMEM. */
int pnmf_lxm_find(PnmfLxMatch *m, int t, const uint8_t *src, int y0, int x0, int maxv, int py, int px,
                  int16_t (*out)[2], int cap);

/* Room for reference t's box means (size bytes, the same at every call),
 * kept with its index for the next frames that take the same frame as a
 * reference: *fresh 1 when the caller is to fill it (it then holds them),
 * 0 when it holds them already. NULL (no memory, or t not a reference of
 * the frame last given): the caller's own room. */
uint8_t *pnmf_lxm_coarse(PnmfLxMatch *m, int t, size_t size, int *fresh);

#endif /* PNMF_LOSSLESS_MATCH_H */
