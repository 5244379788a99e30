/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * make_sprites: the sprites.mkv sample, written as a gray y4m stream to
 * stdout (160x120, 60 frames, 20 fps; another count as the argument: the
 * sprites go on along the same paths, wrapping around the edges).
 *
 * In the spirit of the Permutation NMF paper's synthetic clips: four small
 * bright sprites (a square, a cross, a ring and a plane, 12-17 px) move by
 * whole pixels along smooth paths (straight lines and gentle parabolas) over
 * a static, darker background made of gradients and a few large blocks.
 * Sprites are opaque, drawn in a fixed order (ring, square, plane, cross),
 * and wrap around the frame edges (a 2-D cyclic shift): the plane enters
 * across the left border and leaves across the right one. The cross passes
 * over the square, the square over the ring, the plane over the ring, and
 * the plane meets the cross at the end. Integer arithmetic only: the output
 * is the same on every machine.
 *
 *   cc -O2 -o make_sprites make_sprites.c && ./make_sprites > sprites.y4m
 *   ./make_sprites 180 > sprites180.y4m    # three windows of 60 frames
 *   ./make_sprites 60 twins > twins.y4m     # each sprite twice: a second copy
 *                                           # mirrored through the centre
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define W 160
#define H 120
#define FRAMES 60
#define FPS 20

typedef struct Sprite {
    const char *name;
    int w, h;
    unsigned char value;    /* gray level of the sprite's pixels */
    const char *const *rows; /* '#' = sprite pixel, anything else = transparent */
} Sprite;

static const char *const square_rows[] = {
    "############", "############", "############", "############",
    "############", "############", "############", "############",
    "############", "############", "############", "############",
};

static const char *const cross_rows[] = {
    ".....#####.....", ".....#####.....", ".....#####.....", ".....#####.....",
    ".....#####.....", "###############", "###############", "###############",
    "###############", "###############", ".....#####.....", ".....#####.....",
    ".....#####.....", ".....#####.....", ".....#####.....",
};

static const char *const ring_rows[] = {
    "......#####......", "....#########....", "...###########...",
    "..####.....####..", ".####.......####.", ".###.........###.",
    "####.........####", "###...........###", "###...........###",
    "###...........###", "####.........####", ".###.........###.",
    ".####.......####.", "..####.....####..", "...###########...",
    "....#########....", "......#####......",
};

static const char *const plane_rows[] = {
    "....##..........", "....###.........", ".....###........",
    "##....###.......", "###...####......", "###############.",
    "################", "###############.", "###...####......",
    "##....###.......", ".....###........", "....###.........",
    "....##..........",
};

static const Sprite sprites[4] = {
    { "ring",   17, 17, 200, ring_rows },
    { "square", 12, 12, 225, square_rows },
    { "plane",  16, 13, 245, plane_rows },
    { "cross",  15, 15, 255, cross_rows },
};

static int wrap(int v, int n)
{
    v %= n;
    return v < 0 ? v + n : v;
}

/* Top-left corner of sprite i in frame t. */
static void position(int i, int t, int *x, int *y)
{
    switch (i) {
    case 0: /* ring: up and to the left, crossing the square's path */
        *x = 140 - t;
        *y = 102 - t;
        break;
    case 1: /* square: straight line, down and to the right */
        *x = 8 + 2 * t;
        *y = 14 + t;
        break;
    case 2: /* plane: flies right in a gentle arc, entering from the left edge */
        *x = 3 * t - 12;
        *y = 92 - t * (FRAMES - 1 - t) / 30;
        break;
    default: /* cross: leftwards, sinking along a parabola */
        *x = 130 - 2 * t;
        *y = 20 + t * t / 60;
        break;
    }
}

static unsigned char background(int x, int y)
{
    int v = 24 + x * 40 / (W - 1) + y * 24 / (H - 1); /* 24..88 */
    if (x >= 8 && x < 56 && y >= 70 && y < 112)
        v += 28;                                      /* a lighter slab */
    if (x >= 100 && x < 152 && y >= 8 && y < 48)
        v -= 14;                                      /* a darker one */
    if (x >= 64 && x < 96 && y >= 30 && y < 90)
        v += 14;                                      /* a vertical band */
    return (unsigned char)v;
}

static void draw(unsigned char *img, const Sprite *s, int x0, int y0)
{
    for (int y = 0; y < s->h; y++)
        for (int x = 0; x < s->w; x++)
            if (s->rows[y][x] == '#')
                img[wrap(y0 + y, H) * W + wrap(x0 + x, W)] = s->value;
}

int main(int argc, char **argv)
{
    const int frames = argc > 1 ? atoi(argv[1]) : FRAMES;
    const int twins = argc > 2 && !strcmp(argv[2], "twins");
    if (frames < 1 || frames > 100000) return 2;
    static unsigned char bg[W * H], img[W * H];
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++)
            bg[y * W + x] = background(x, y);

    printf("YUV4MPEG2 W%d H%d F%d:1 Ip A1:1 Cmono XCOLORRANGE=FULL\n", W, H, FPS);
    for (int t = 0; t < frames; t++) {
        memcpy(img, bg, sizeof(img));
        for (int i = 0; i < 4; i++) {
            int x, y;
            position(i, t, &x, &y);
            draw(img, &sprites[i], x, y);
            if (twins) /* a second copy, mirrored through the frame's centre */
                draw(img, &sprites[i], W - sprites[i].w - x, H - sprites[i].h - y);
        }
        fputs("FRAME\n", stdout);
        if (fwrite(img, 1, sizeof(img), stdout) != sizeof(img))
            return 1;
    }
    return fflush(stdout) ? 1 : 0;
}
