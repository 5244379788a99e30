/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The encoder's side of the window model (model.h): filling it and
 * writing it as a window payload. Only the encoder includes this. */
#ifndef PNMF_MODEL_WRITE_H
#define PNMF_MODEL_WRITE_H

#include <stddef.h>
#include <stdint.h>

#include "model.h"

/* Append an entry to frame j, which must be the last frame with entries
 * so far (frames are filled in order; entries of a frame in nondecreasing
 * i). Returns PNMF_ERR_LIMIT when the entries allocated are used up. */
int  pnmf_model_add(PnmfWindowModel *md, int j, int i, uint32_t c, int32_t p);

/* Serialize into a newly allocated buffer (pnmf_free it), in the format
 * pnmf_model_read() reads (PNMF_PAYLOAD_VERSION). A model whose work is
 * over pnmf_model_max_work() is refused (PNMF_ERR_LIMIT): a reader would
 * refuse it; one that breaks a rule of the format (an entry of an empty
 * component, entries out of order, a value out of range) is refused with
 * PNMF_ERR_ARG. */
int  pnmf_model_write(const PnmfWindowModel *md, uint8_t **buf, size_t *size);

/* The bytes L's new poses take in the payload (their count, frames, boxes
 * and masks, without the placements), as pnmf_model_write() writes them;
 * 0 where the writer runs out of memory. */
size_t pnmf_sprite_poses_bytes(const PnmfSpriteLayer *L);

/* Where the side information of a residual layer goes: each block's bits
 * in the modes stream (its mode, a palette block's palette) and in the
 * vectors stream (a shifted block's vector, 0 for the others), each
 * frame's global vector's, as the writer codes rs (its nbctx and median
 * as they are); merged: the vector copies a candidate. Blocks frame by
 * frame, in raster order. */
typedef struct PnmfSideBits {
    float *mode, *vec, *global;
    int8_t *merged;
    size_t mode_bytes, vec_bytes; /* the two streams' lengths */
} PnmfSideBits;
/* 0, PNMF_ERR_ARG (a layer the writer refuses) or PNMF_ERR_NOMEM; free
 * with pnmf_side_bits_free() (also after a failure). */
int  pnmf_residual_side_bits(const PnmfResidual *rs, PnmfSideBits *sb);
void pnmf_side_bits_free(PnmfSideBits *sb);

#endif /* PNMF_MODEL_WRITE_H */
