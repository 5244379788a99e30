/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * side_bits FILE.pnmf [CSV]: where the residual layer's side information
 * goes (pnmf_residual_side_bits()). Per window it prints the modes and
 * vectors streams' lengths and their bits by kind of block: a mode equal
 * to the block's left, above or previous-frame neighbour, or one of the
 * 5-bit tree; a vector that copies a candidate or is coded. With CSV it
 * also writes one row per block (window, frame, block, bx, mode, dy, dx,
 * t, merged, mode bits, vector bits, the window's flags bit 14) for
 * tools/side_bits.py.
 *
 * It is a check too: it exits 1 when a window's per-block bits do not add
 * up to its streams' lengths (8 bits a byte, within the 5 bytes a stream's
 * end adds), so the accounting cannot drift from the writer. Built with
 * the tests; `ctest -R side_bits` runs it on golden files.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "container.h"
#include "internal.h"
#include "model.h"
#include "model_write.h"
#include "pnmf/pnmf.h"

/* The accounting agrees with a stream of len bytes: its first byte and
 * the flush's five are not any block's, nor is the last byte's rounding. */
static int agrees(double bits, size_t len) { return bits <= 8.0 * (double)len && bits >= 8.0 * ((double)len - 6) - 1; }

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 3) {
        fprintf(stderr, "usage: side_bits FILE.pnmf [CSV]\n");
        return 2;
    }
    FILE *f = fopen(argv[1], "rb");
    FILE *csv = argc == 3 ? fopen(argv[2], "w") : NULL;
    if (!f || (argc == 3 && !csv)) {
        fprintf(stderr, "side_bits: cannot open %s\n", !f ? argv[1] : argv[2]);
        return 3;
    }
    char err[256] = "";
    PnmfContainerReader *cr = NULL;
    if (pnmf_container_reader_open(&cr, f, err, sizeof(err)) < 0) {
        fprintf(stderr, "side_bits: %s\n", err);
        return 4;
    }
    const PnmfHeader *h = pnmf_container_reader_header(cr);
    const int vector = h->shift_model == PNMF_SHIFT_VECTOR;
    int rows = vector ? 1 : (int)h->height, cols = vector ? (int)(h->width * h->height) : (int)h->width;
    const int vis_rows = rows, vis_cols = cols;
    if (h->shift_model == PNMF_SHIFT_CANVAS) rows = (int)h->canvas_height, cols = (int)h->canvas_width;
    const int version = h->writer_version < PNMF_READER_VERSION ? h->writer_version : PNMF_READER_VERSION;
    PnmfWindowModel last = { 0 }, md = { 0 };
    const uint8_t *payload;
    size_t size;
    uint32_t first, count;
    int w = 0, bad = 0, ret;
    if (csv) fprintf(csv, "window,frame,block,bx,mode,dy,dx,t,merged,mode_bits,vector_bits,nbctx\n");
    printf("window frames  modes B  eqL n/bits  eqA n/bits  eqP n/bits  tree n/bits  vectors B  coded n/bits  "
           "merged n/bits  global bits\n");
    while ((ret = pnmf_container_read_window(cr, &payload, &size, &first, &count, err, sizeof(err))) > 0) {
        ret = pnmf_model_read_carry(version, payload, size, rows, cols, vis_rows, vis_cols, (int)count,
                                    h->components, h->w_step, h->r_step, &last, &md, err, sizeof(err));
        if (ret >= 0) ret = pnmf_model_track(&last, &md);
        if (ret < 0) {
            fprintf(stderr, "side_bits: window %d: %s\n", w, err);
            return 4;
        }
        const PnmfResidual *rs = &md.res;
        if (rs->step16 && version >= 4) {
            PnmfSideBits sb;
            if (pnmf_residual_side_bits(rs, &sb) < 0) {
                fprintf(stderr, "side_bits: window %d: the writer refuses its residual layer\n", w);
                return 1;
            }
            const size_t nb = (size_t)rs->bx * rs->by;
            long n[6] = { 0 };
            double b[6] = { 0 }, gsum = 0, msum = 0, vsum = 0;
            size_t q = 0;
            for (int j = 0; j < rs->m; j++) {
                gsum += sb.global[j];
                for (size_t k = 0; k < nb; k++) {
                    const size_t i = (size_t)j * nb + k;
                    const int mo = rs->modes[i];
                    const int L = k % (size_t)rs->bx ? rs->modes[i - 1] : -1;
                    const int A = k >= (size_t)rs->bx ? rs->modes[i - rs->bx] : -1, P = j ? rs->modes[i - nb] : -1;
                    const int c = mo == L ? 0 : mo == A ? 1 : mo == P ? 2 : 3;
                    n[c]++, b[c] += sb.mode[i], msum += sb.mode[i], vsum += sb.vec[i];
                    int dy = 0, dx = 0, t = -1;
                    if ((mo & 7) == PNMF_RES_SHIFTED && !(rs->palette && mo == PNMF_RES_PALETTE) && q < rs->nmv) {
                        dy = rs->mv[2 * q], dx = rs->mv[2 * q + 1], t = rs->mvref[q], q++;
                        n[4 + sb.merged[i]]++, b[4 + sb.merged[i]] += sb.vec[i];
                    }
                    if (csv)
                        fprintf(csv, "%d,%d,%zu,%d,%d,%d,%d,%d,%d,%.3f,%.3f,%d\n", w, j, k, rs->bx, mo, dy, dx, t,
                                sb.merged[i], sb.mode[i], sb.vec[i], rs->nbctx);
                }
            }
            printf("%6d %6d %8zu %6ld/%-6.0f %6ld/%-6.0f %6ld/%-6.0f %6ld/%-6.0f %9zu %7ld/%-6.0f %7ld/%-6.0f %6.0f\n", w,
                   rs->m, sb.mode_bytes, n[0], b[0], n[1], b[1], n[2], b[2], n[3], b[3], sb.vec_bytes, n[4], b[4],
                   n[5], b[5], gsum);
            if (!agrees(msum, sb.mode_bytes) || !agrees(vsum + gsum, sb.vec_bytes)) {
                fprintf(stderr, "side_bits: window %d: %.1f and %.1f bits for streams of %zu and %zu bytes\n", w,
                        msum, vsum + gsum, sb.mode_bytes, sb.vec_bytes);
                bad = 1;
            }
            pnmf_side_bits_free(&sb);
        }
        pnmf_model_free(&md);
        w++;
    }
    if (ret < 0) {
        fprintf(stderr, "side_bits: %s\n", err);
        return 4;
    }
    pnmf_model_free(&last);
    pnmf_container_reader_close(&cr);
    fclose(f);
    if (csv && fclose(csv)) return 5;
    return bad;
}
