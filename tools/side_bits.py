#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Where a file's residual side information goes, and what a superblock
flag would save on it.

    side_bits FILE.pnmf FILE.csv          # built with the tests (tests/side_bits.c)
    python3 tools/side_bits.py [--variants | --check] [--format 12] FILE.csv...

reads side_bits' rows (one per 8x8 block) and prints, per file:

- the modes and vectors streams' bits, and the share of the blocks and of
  those bits in S x S superblocks (S = 2, 4, 8 blocks a side: 16x16,
  32x32, 64x64 samples) whose blocks all have one uncoded mode (and, when
  it is the shifted prediction, one vector): the blocks a skip flag over
  the superblock could cover;
- the change in the two streams' bits (in % of the streams' bits: the
  same decisions coded with the flag against without it, the palettes of
  the modes stream left out of both) if each superblock carried a
  flag saying "every block inside is skipped": U, each block takes the
  mode and vector of the block left of the superblock (above it in the
  first column, the previous frame's in the first row); P, each block
  takes its own mode and vector in the previous frame. The flag is coded
  with an adaptive context of the flags of the superblocks to the left,
  above and in the previous frame; the other blocks' modes are coded again
  as the modes stream codes them (docs/format.md, "Range-coded streams"
  and "Neighbour contexts"), so their contexts see only the blocks not
  skipped; a skipped block's vector bits are saved, the others' kept.

With --variants, also the modes stream's bits under other codings of the
same modes (in % against the stream's): "tree by A", the 5-bit tree's
contexts by the above block's prediction too; "apart", the flags (coded,
transform) coded first under contexts of the neighbours' flags, then the
prediction with the stream's left/above/previous steps on predictions and
a 3-bit tree; "two rates", every context a pair of probabilities adapted
by 1/16 and 1/128 (the mean is the probability; each at 1/2 at first and
adapting faster over its first decisions), as AV1 and VVC adapt theirs.

With --check, only whether the coding reproduced here (without a flag)
gives the streams' bits within 0.5 % in each file without palette blocks
(whose palettes and indices the modes stream holds and the script leaves
out); exit status 1 otherwise. `ctest -R side_bits` runs it.

The encoder's decisions are the file's: the figures say what a flag
saves on them, not what an encoder searching with it would choose.
"""
import csv
import math
import sys
from collections import defaultdict


class Coder12:
    """The bits of an adaptive binary coder as the streams' of format 12
    and older (11-bit probabilities, adapted by 1/16)."""

    def __init__(self):
        self.p = {}
        self.bits = 0.0

    def code(self, ctx, bit):
        p = self.p.get(ctx, 1024)
        if bit:
            self.bits -= math.log2((2048 - p) / 2048)
            p -= p >> 4
        else:
            self.bits -= math.log2(p / 2048)
            p += (2048 - p) >> 4
        self.p[ctx] = p


def code_mode(c, mo, L, A, P, e, tree_by_a=False):
    """The modes stream's decisions for mode mo (e: the neighbour context of
    window flags bit 14, None without it; tree_by_a: the tree's contexts by
    A's prediction too, a variant the format does not have)."""
    if L >= 0:
        c.code(('l', L, L == A, L == P, e), int(mo != L))
        if mo == L:
            return
    if A >= 0 and A != L:
        c.code(('a', A, A == P), int(mo != A))
        if mo == A:
            return
    if P >= 0 and P != L and P != A:
        c.code(('p', P), int(mo != P))
        if mo == P:
            return
    node = 1
    tree = (L + 1, A & 7 if A >= 0 else -1) if tree_by_a else (L + 1,)
    for i in range(4, -1, -1):
        bit = (mo >> i) & 1
        c.code(('t',) + tree + (node,), bit)
        node = 2 * node + bit


def windows(path):
    rows = defaultdict(list)
    with open(path) as f:
        for r in csv.DictReader(f):
            rows[int(r['window'])].append(r)
    for w in sorted(rows):
        rs = rows[w]
        bx = int(rs[0]['bx'])
        m = int(rs[-1]['frame']) + 1
        nb = len(rs) // m
        M = [[int(rs[j * nb + b]['mode']) for b in range(nb)] for j in range(m)]
        V = [[(int(rs[j * nb + b]['dy']), int(rs[j * nb + b]['dx']), int(rs[j * nb + b]['t'])) for b in range(nb)]
             for j in range(m)]
        mb = [[float(rs[j * nb + b]['mode_bits']) for b in range(nb)] for j in range(m)]
        vb = [[float(rs[j * nb + b]['vector_bits']) for b in range(nb)] for j in range(m)]
        yield m, nb, bx, int(rs[0]['nbctx']), M, V, mb, vb


class Coder13:
    """The bits of an adaptive binary coder as the streams' of format 13
    (docs/format.md "Range-coded streams": two 15-bit probabilities and a
    count a context, shifts from floor(log2(n + 2)) within 2..4 and 2..7)."""

    def __init__(self):
        self.p = {}
        self.bits = 0.0

    def code(self, ctx, bit):
        a, b, n = self.p.get(ctx, (16384, 16384, 0))
        p = (a + b) >> 1
        self.bits -= math.log2((32768 - p) / 32768 if bit else p / 32768)
        k = (n + 2).bit_length() - 1
        s1, s2 = min(max(k, 2), 4), min(max(k, 2), 7)
        if bit:
            a, b = a - (a >> s1), b - (b >> s2)
        else:
            a, b = a + ((32768 - a) >> s1), b + ((32768 - b) >> s2)
        self.p[ctx] = (a, b, min(n + 1, 126))


Coder = Coder13  # the files' format: 13, or 12 with --format 12


class TwoRates:
    """Coder with two probabilities a context, 15 bits each, adapted by
    1/2^a and 1/2^b (the first decisions faster)."""

    def __init__(self, a=4, b=7):
        self.p = {}
        self.bits = 0.0
        self.a, self.b = a, b

    def code(self, ctx, bit):
        p1, p2, n = self.p.get(ctx, (16384, 16384, 0))
        p = min(max((p1 + p2) / 65536, 1 / 2048), 1 - 1 / 2048)
        self.bits -= math.log2(1 - p if bit else p)
        a, b = min(self.a, 1 + n), min(self.b, 1 + n)
        if bit:
            p1, p2 = p1 - (p1 >> a), p2 - (p2 >> b)
        else:
            p1, p2 = p1 + ((32768 - p1) >> a), p2 + ((32768 - p2) >> b)
        self.p[ctx] = (p1, p2, n + 1)


def code_mode_tree_a(c, mo, L, A, P, e):
    """code_mode() with the tree's contexts by A's prediction too."""
    code_mode(c, mo, L, A, P, e, tree_by_a=True)


def code_mode_apart(c, mo, L, A, P, e):
    """The flags, then the prediction on its own."""
    fl = lambda v: v >> 3 if v >= 0 else -1
    pr = lambda v: v & 7 if v >= 0 else -1
    f = mo >> 3
    c.code(('f0', fl(L), fl(A), fl(P)), int(f != 0))
    if f:
        c.code(('f1', fl(L), fl(A)), int(f != 1))
        if f != 1:
            c.code(('f2', fl(L)), int(f == 3))
    p, L, A, P = mo & 7, pr(L), pr(A), pr(P)
    if L >= 0:
        c.code(('l', f, L, L == A, L == P, e), int(p != L))
        if p == L:
            return
    if A >= 0 and A != L:
        c.code(('a', f, A, A == P), int(p != A))
        if p == A:
            return
    if P >= 0 and P != L and P != A:
        c.code(('p', f, P), int(p != P))
        if p == P:
            return
    node = 1
    for i in range(2, -1, -1):
        bit = (p >> i) & 1
        c.code(('t', f, L + 1, node), bit)
        node = 2 * node + bit


def neighbours(M, j, b, bx, nbctx):
    """Block b of frame j's mode contexts: the modes left, above and in the
    frame before (-1 where there is none), and with the neighbour contexts
    whether the above-left and the frame before's left agree with them."""
    L = M[j][b - 1] if b % bx else -1
    A = M[j][b - bx] if b >= bx else -1
    P = M[j - 1][b] if j else -1
    e = None
    if nbctx:
        AL = M[j][b - bx - 1] if b >= bx and b % bx else -1
        PL = M[j - 1][b - 1] if j and b % bx else -1
        e = (AL == A) + 2 * (PL == P)
    return L, A, P, e


def variants(win):
    """The modes stream's bits under code_mode() with Coder, and the
    variants'."""
    m, nb, bx, nbctx, M, V, mb, vb = win
    coders = [(Coder(), code_mode), (Coder(), code_mode_tree_a), (Coder(), code_mode_apart), (TwoRates(), code_mode)]
    for j in range(m):
        for b in range(nb):
            ctx = neighbours(M, j, b, bx, nbctx)
            for c, f in coders:
                f(c, M[j][b], *ctx)
    return [c.bits for c, f in coders]


def uniform(M, V, j, blocks):
    md = M[j][blocks[0]]
    return not (md & 24) and all(M[j][b] == md and V[j][b] == V[j][blocks[0]] for b in blocks)


def superblocks(nb, bx, S):
    by = nb // bx
    for sy in range(0, by, S):
        for sx in range(0, bx, S):
            yield sy, sx, [(sy + y) * bx + sx + x for y in range(S) for x in range(S) if sy + y < by and sx + x < bx]


def simulate(win, S, kind):
    """Bits of the two streams with the flag, of the file's decisions
    (kind None: without the flag, the base the flags are weighed against;
    the modes stream's palettes are left out of both)."""
    m, nb, bx, nbctx, M, V, mb, vb = win
    c = Coder()
    flags = {}
    skipped = set()
    vbits = 0.0
    for j in range(m):
        for sy, sx, blocks in superblocks(nb, bx, S) if kind else ():
            b0 = blocks[0]
            if kind == 'P':
                if not j:
                    continue
                ok = all(M[j][b] == M[j - 1][b] and V[j][b] == V[j - 1][b] for b in blocks)
            else:
                src = (j, b0 - 1) if sx else (j, b0 - bx) if sy else (j - 1, b0) if j else None
                if src is None:
                    continue
                ok = uniform(M, V, j, blocks) and M[src[0]][src[1]] == M[j][b0] and V[src[0]][src[1]] == V[j][b0]
            ctx = ('sb', flags.get((j, sy, sx - S), 0), flags.get((j, sy - S, sx), 0), flags.get((j - 1, sy, sx), 0))
            c.code(ctx, int(ok))
            flags[(j, sy, sx)] = int(ok)
            if ok:
                skipped.update(blocks)
        for b in range(nb):
            if b in skipped:
                continue
            vbits += vb[j][b]
            code_mode(c, M[j][b], *neighbours(M, j, b, bx, nbctx))
        skipped.clear()
    return c.bits + vbits


def check(path, wins, tm, tv):
    """1 when the file has no palette block and the streams' coding
    reproduced here (simulate() without a flag) misses the streams' bits
    by more than 0.5 %: the flags' figures are weighed against it."""
    if any(16 in row for w in wins for row in w[4]):
        return 0
    base = sum(simulate(w, 2, None) for w in wins)
    off = abs(base - tm - tv) / max(tm + tv, 1)
    print('  check: the streams\' coding reproduced to %.3f %%' % (100 * off))
    if off > 0.005:
        print('%s: the coding reproduced here is %.0f bits, the streams\' %.0f' % (path, base, tm + tv))
        return 1
    return 0


def main(paths):
    global Coder
    var = '--variants' in paths
    chk = '--check' in paths
    paths = [p for p in paths if p not in ('--variants', '--check')]
    bad = 0
    if '--format' in paths:  # the streams' coder: format 13 (the default) or 12 and older
        i = paths.index('--format')
        Coder = Coder12 if int(paths[i + 1]) <= 12 else Coder13
        del paths[i:i + 2]
    for path in paths:
        wins = list(windows(path))
        tm = sum(sum(map(sum, w[6])) for w in wins)
        tv = sum(sum(map(sum, w[7])) for w in wins)
        nblocks = sum(w[0] * w[1] for w in wins)
        print('%s: %d blocks, modes %.0f bits (%.3f a block), vectors %.0f bits' % (path, nblocks, tm, tm / nblocks, tv))
        if chk:
            bad |= check(path, wins, tm, tv)
            continue
        for S in (2, 4, 8):
            cov = covm = covv = 0
            for m, nb, bx, nbctx, M, V, mb, vb in wins:
                for j in range(m):
                    for sy, sx, blocks in superblocks(nb, bx, S):
                        if len(blocks) == S * S and uniform(M, V, j, blocks):
                            cov += S * S
                            covm += sum(mb[j][b] for b in blocks)
                            covv += sum(vb[j][b] for b in blocks)
            sims = []
            base = sum(simulate(w, S, None) for w in wins)
            for kind in ('U', 'P'):
                total = sum(simulate(w, S, kind) for w in wins)
                sims.append('%s %+.2f %%' % (kind, 100 * (total - base) / (tm + tv)))
            print('  %2dx%-2d uniform superblocks: %5.1f %% of the blocks, %5.1f %% of the mode bits, %5.1f %% of the '
                  'vector bits; with a flag: %s' % (8 * S, 8 * S, 100 * cov / nblocks, 100 * covm / max(tm, 1),
                                                   100 * covv / max(tv, 1), ', '.join(sims)))
        if var:
            v = [sum(x) for x in zip(*(variants(w) for w in wins))]
            print('  modes stream %.0f bits (the coder as the stream\'s, %+.2f %% from the file\'s); tree by A %+.2f %%, '
                  'apart %+.2f %%, two rates %+.2f %%' % (v[0], 100 * (v[0] / tm - 1), 100 * (v[1] / v[0] - 1),
                                                         100 * (v[2] / v[0] - 1), 100 * (v[3] / v[0] - 1)))
    return bad


if __name__ == '__main__':
    if len(sys.argv) < 2:
        sys.exit('usage: side_bits.py [--variants | --check] [--format 12|13] FILE.csv...')
    sys.exit(main(sys.argv[1:]))
