/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The encoder's restoration filter (window flags bit 22, pfilter.h): the
 * taps fitted to frames shown and their sources, and the classes kept. */
#ifndef PNMF_ENC_PFILTER_H
#define PNMF_ENC_PFILTER_H

#include <stddef.h>
#include <stdint.h>

#include "pfilter.h"

typedef struct PnmfPfFit {
    int w, h;
    int pass;                                           /* 0: the normal equations; 1: the taps' errors */
    int64_t a[PNMF_PF_CLASSES][PNMF_PF_TAPS][PNMF_PF_TAPS]; /* sum of g_i g_j (upper triangle) */
    int64_t b[PNMF_PF_CLASSES][PNMF_PF_TAPS];           /* sum of g_i (s - p) */
    PnmfPFilter pf;                                     /* the rounded taps of the classes fitted */
    int64_t e0[PNMF_PF_CLASSES], e1[PNMF_PF_CLASSES];   /* pass 1: squared error unfiltered, filtered */
    uint8_t *tmp;                                       /* pass 1: a frame filtered, w * h */
    uint8_t *cls;                                       /* the classes of a frame's blocks (pnmf_pf_classes()) */
    uint8_t *pad;                                       /* the frame shown, padded (pnmf_pf_padded_size()) */
    ptrdiff_t stride;                                   /* pad's */
} PnmfPfFit;

/* Pass 0 adds the h x w frame shown (rows w apart) and its source to the
 * normal equations of its blocks' classes (the samples of its even rows);
 * pass 1 adds both frames'
 * squared errors by class, the frame shown filtered by f->pf with every
 * class fitted. f->tmp, f->cls and f->pad are the caller's: w * h bytes,
 * a byte per 4x4 block, pnmf_pf_padded_size(). */
void pnmf_pf_fit_frame(PnmfPfFit *f, const uint8_t *shown, const uint8_t *src);

/* After pass 0: each class's least-squares taps into f->pf (its mask the
 * classes whose equations fix them), pass 1 next. Returns the mask. */
int pnmf_pf_fit_taps(PnmfPfFit *f);

/* After pass 1: the classes whose squared error falls by more than lambda
 * times their taps' bits and by PNMF_PF_MIN_GAIN of itself at least, into
 * pf (pf->on 0 when none, or when they save less than a byte's worth), and
 * the change of the squared error they make. */
void pnmf_pf_fit_choose(const PnmfPfFit *f, double lambda, PnmfPFilter *pf, double *dsse);

#endif
