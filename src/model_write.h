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

#endif /* PNMF_MODEL_WRITE_H */
