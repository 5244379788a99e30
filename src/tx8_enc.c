/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The encoder's side of the 8x8 transform's levels (tx8.h): the decisions
 * pnmf_tx8_levels_read() reads, written or priced. */
#include <stdlib.h>

#include "rangecoder_enc.h"
#include "tx8.h"

int pnmf_tx8_levels(RcBin *o, RcLevCtx *c, int kind, const int16_t *lev, int max_l)
{
    int last = 63;
    while (last >= 0 && !lev[last]) last--;
    if (last < 0) return -1; /* not codable: the block has a level */
    int i = 0, end = 63;
    if (!o->enc && !o->update) { /* a price: rc_bin()'s additions in its order, the contexts as they stand */
        const RcProb *sig = c->sig8[kind], *lst = c->last8[kind];
        double bits = o->bits;
        for (; i < last; i++) {
            const int k = rc_tx8_pos(i);
            bits += rc_cost(sig[k], lev[i] != 0);
            if (lev[i]) bits += rc_cost(lst[k], 0);
        }
        if (last < 63) { /* the last level's significance and last flags */
            bits += rc_cost(sig[rc_tx8_pos(last)], 1);
            bits += rc_cost(lst[rc_tx8_pos(last)], 1);
        }
        o->bits = bits;
        end = last;
        i = 63;
    }
    for (; i < 63; i++) {
        const int s = rc_bin(o, &c->sig8[kind][rc_tx8_pos(i)], lev[i] != 0);
        if (s && rc_bin(o, &c->last8[kind][rc_tx8_pos(i)], i == last)) {
            end = i;
            break;
        }
    }
    int gt1 = 0, ones = 0;
    for (i = end; i >= 0; i--) {
        if (!lev[i]) continue;
        const int a = abs(lev[i]);
        if (rc_bin(o, &c->tgt1_8[kind][gt1 ? 0 : 1 + (ones < 3 ? ones : 3)], a > 1)) {
            const int r = rc_lev_rem(o, c->tmag8[kind] + (gt1 < 4 ? gt1 : 4), 0, a - 2);
            if (r < 0 || r + 2 > max_l) return -1;
            gt1++;
        } else {
            ones++;
        }
        rc_bin_direct(o, lev[i] < 0);
    }
    return 0;
}
