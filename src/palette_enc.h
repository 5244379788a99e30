/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The encoder's palette blocks (palette.h). */
#ifndef PNMF_PALETTE_ENC_H
#define PNMF_PALETTE_ENC_H

#include "palette.h"

#define PNMF_PAL_SEARCH_MAX 32 /* a block of more gray levels is not tried (camera noise, gradients) */

/* The best palette block for the h x w source samples at src (rows cols
 * apart) after the left and above palettes (NULL: none): the palette of
 * 1..8 colours, grouping neighbouring gray levels, with the least squared
 * error + lambda * bits of its decisions priced with c as it stands. The
 * block into p, its bits into *bits, its cost returned (1e300 when not
 * tried: more than PNMF_PAL_SEARCH_MAX gray levels, or when no palette
 * costs less than bound, whose pricing stops there: 1e300 weighs them all). */
double pnmf_pal_search(const uint8_t *src, size_t cols, int h, int w, const PnmfPalBlock *left,
                       const PnmfPalBlock *above, const PnmfPalCtx *c, double lambda, double bound, PnmfPalBlock *p,
                       double *bits);

/* Whether the rows x cols frame at src looks like a captured screen: at
 * least PNMF_PAL_SCREEN_SHARE of its whole 8x8 blocks hold at most
 * PNMF_PAL_MAX gray levels (flat colours, sharp edges; camera noise and
 * rendered gradients give many blocks more). */
int pnmf_pal_screen_like(const uint8_t *src, int rows, int cols);

#endif
