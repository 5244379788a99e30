/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The encoder's tuning constants, one place for all of them. None is part
 * of the format: changing one changes what the encoder chooses (and so its
 * output bytes), never what a decoder can read.
 */
#ifndef PNMF_TUNING_H
#define PNMF_TUNING_H

/* Model and rate-distortion weights */

/* Bits of the range coder's price table: a decision's probability rounded to 1/2^this, its price looked up. */
#define PNMF_RC_COST_BITS 11

/* The -q at which the model is fitted, quantized and weighed wherever the step is picked. */
#define PNMF_MODEL_Q 52
/* Squared error per bit at the finest step: so small a weight that the coding is lossless. */
#define PNMF_LOSSLESS_LAMBDA 1e-3
/* Bits a coefficient equal to its value in the frame before is worth keeping it for. */
#define PNMF_COEF_STICK_BITS 32.0
/* How many times finer than the window's step a key window's first frame is coded. */
#ifndef PNMF_KEY_STEP_DIV
#define PNMF_KEY_STEP_DIV 4
#endif
/* The key window's first frame's step follows what later frames inherit of it (enc_prop.h): its propagation weight w
 * makes it w^(this / 6) times finer, at most PNMF_KEY_STEP_DIV, in windows of sub-pixel motion (0: PNMF_KEY_STEP_DIV). */
#ifndef PNMF_KEY_PROP_STRENGTH
#define PNMF_KEY_PROP_STRENGTH 3.0
#endif
/* ... measured in windows of at least this many frames, or with no continuing window after them. */
#define PNMF_PROP_MIN_FRAMES 24
/* The propagation's search: whole displacements within this many samples of the frames scaled down by 4 ... */
#define PNMF_PROP_RANGE 4
/* ... and around the frame's displacement, found within this many of those samples ... */
#define PNMF_PROP_GLOBAL_RANGE 16
/* ... and a constant added to a 4x4 block's intra and inter costs, so that flat blocks weigh little either way. */
#define PNMF_PROP_INTRA_FLOOR 8
/* Half size (PNMF_HALF_AUTO, enc_half.c): tried from this -q on ... */
#ifndef PNMF_HALF_MIN_Q
#define PNMF_HALF_MIN_Q 35
#endif
/* ... on frames of at least this many samples a side ... */
#define PNMF_HALF_MIN_SIDE 64
/* ... by coding this many first frames both ways, at their size at -q and PNMF_HALF_TRIAL_DQ coarser too; ... */
#ifndef PNMF_HALF_TRIAL_FRAMES
#define PNMF_HALF_TRIAL_FRAMES 10
#endif
#define PNMF_HALF_TRIAL_DQ 8
/* Half size is coded this much finer than -q, and taken where its trial point lies this many dB above the line. */
#ifndef PNMF_HALF_MARGIN
#define PNMF_HALF_MARGIN 0.25
#endif
/* Rendered frames of whole-sample motion (cartoons): how many times finer a continuing window's first frame is coded ... */
#ifndef PNMF_CONT_STEP_DIV
#define PNMF_CONT_STEP_DIV 2.0
#endif
/* ... and how much more a bit weighs in their blocks' search (docs/measurements.md, "Cartoons"). */
#ifndef PNMF_DRAWN_LAMBDA
#define PNMF_DRAWN_LAMBDA 1.25
#endif
/* Camera footage (a filtered first frame): how many times finer a continuing window's first frame is coded (1: not). */
#ifndef PNMF_CONT_NOISY_DIV
#define PNMF_CONT_NOISY_DIV 2.0
#endif
/* 1: their windows price levels with the levels stream's contexts and try the 8x8 transform, intra directions and RDOQ. */
#ifndef PNMF_DRAWN_RC
#define PNMF_DRAWN_RC 1
#endif

/* Window flags bit 12: in windows with sub-pixel motion every this many
 * frames is coded at a finer step (0: none, the default: period 4 gains
 * 1.2 % BD-rate on natural_cup, loses 0.7 % on natural_vtest and
 * povray_spline, docs/measurements.md "Step cascade"); -DPNMF_CASC_PERIOD=4
 * builds an encoder that uses it. Readers read it either way. */
#ifndef PNMF_CASC_PERIOD
#define PNMF_CASC_PERIOD 0
#endif
/* ... this many transform quantizers (1/6 octave each) finer than the window's. */
#ifndef PNMF_CASC_QP
#define PNMF_CASC_QP 2
#endif

/* Step choice */

/* Above the pick's floor, a byte weighs as at the step of -q + this. */
#define PNMF_PICK_LAMBDA_Q 4
/* Below the pick's floor, a byte weighs as at the step of -q + this. */
#define PNMF_FINE_LAMBDA_Q 8
/* Below the pick's floor, the lossless coding and the walk around the start are made where the floor's error is under 1/this of a uniform quantizer's. */
#define PNMF_FINE_EXACT_NOISE 16
/* The step search also codes the step above -q's where the error at -q's is under 1/this of a uniform quantizer's. */
#define PNMF_PICK_EXACT_NOISE 64
/* From this -q up (the grid step below -q's -q 20 or coarser), a window without sprite animation or a model is searched without -q 16's coding. */
#define PNMF_PICK_NO_FLOOR_Q 24
/* The step search's walk to coarser steps over exact content stops after this many codings past -q's step in a row within the bound... */
#define PNMF_PICK_SETTLED 3
/* ... none of which costs less than (1 - this) times the least cost made before them. */
#define PNMF_PICK_SETTLED_GAIN 0.005
/* Where a window's two families (with its model, without) first both coded in the step search cost under this share apart, later steps code the one offered alone. */
#define PNMF_PICK_TIE 0.05
/* Where one of a window's two families costs over 1 + this times the other's ... */
#define PNMF_PICK_CLEAR 0.10
/* ... at this many coded steps in a row, the step search codes the cheaper one alone from then on. */
#define PNMF_PICK_CLEAR_RUN 2
/* The step search codes one step finer only where that coding, foretold from the last two, costs under this times the finest made. */
#ifndef PNMF_PICK_AHEAD
#define PNMF_PICK_AHEAD 1.0
#endif
/* The step search's finer codings are weighed on a window's first 1/this of frames before they are coded on. */
#ifndef PNMF_PICK_PREFIX_DIV
#define PNMF_PICK_PREFIX_DIV 4
#endif
/* ... in windows of this many frames or more. */
#define PNMF_PICK_PREFIX_MIN 16
/* ... and a coding whose foretold cost exceeds the one above it by more than this share is not coded on (0.05 moves pingus_pan -q 54: a 1.057 that wins; none from 1.07 up wins on the ladders). */
#ifndef PNMF_PICK_PREFIX_MARGIN
#define PNMF_PICK_PREFIX_MARGIN 0.07
#endif

/* The full fit and its check */

/* ALS iterations of each size's fit while the automatic size grows (the final fit uses --iterations). */
#define PNMF_GROW_ITERS 8
/* Sweeps of those fits' H steps: short fits rank the sizes about as well as long ones, at half the time. */
#define PNMF_GROW_SWEEPS 3

/* Torus samples above which the model is fitted on a torus d times coarser each way, the least such d. */
#define PNMF_FIT_MAX_SAMPLES 262144
/* Relative objective decrease below which a fit stops iterating. */
#define PNMF_FIT_TOL 1e-4
/* Iterations after which a full fit that follows a probe is checked against no model. */
#define PNMF_CHECK_ITERS 2
/* The checked fit stops when its cost is above this many times the residual layer alone's. */
#define PNMF_CHECK_MARGIN 1.3
/* --two-level: level-1 components with less energy than this share of the strongest are dropped. */
#define PNMF_TWO_LEVEL_DROP 0.05f
/* zstd level of the byte counts that decide between codings (the container compresses again). */
#define PNMF_ESTIMATE_ZSTD_LEVEL 3
/* zstd levels from which cheap searches first check whether the payload shrinks (19-22: btultra2). */
#define PNMF_ZSTD_PROBE_FROM 19
/* Payload bytes below which level 19 runs unprobed (one zstd block: screen payloads, which shrink). */
#define PNMF_ZSTD_PROBE_MIN_SIZE 131072
/* The cheap searches' hash and chain table logs. */
#define PNMF_ZSTD_PROBE_HASH_LOG 17
/* Their shortest match (and the light search's match long enough to take at once). */
#define PNMF_ZSTD_PROBE_MIN_MATCH 6
/* Payload bytes over which the rate search prices codings at the rank level 3, not 19 (development set's largest: 199,523, -q 8). */
#define PNMF_PRICE_BIG_SIZE 524288
/* 1: lossless windows' payloads get the light btultra2 probe too (0: the double-fast probe settles them; same files on the development set). */
#define PNMF_ZSTD_LIGHT_LOSSLESS 0

/* The probe: one cheap fit that decides whether a full fit can pay */

/* The probe drops the model when its cost is above this many times the residual layer alone's. */
#define PNMF_PROBE_MARGIN 1.7
/* The same where the step is picked (bytes weighed as at PNMF_MODEL_Q). */
#define PNMF_PROBE_MARGIN_FIXED 1.2
/* Sweeps of the probe's H steps. */
#define PNMF_PROBE_SWEEPS 1
/* The probe drops the model when its bytes are above this many times the residual layer alone's. */
#define PNMF_PROBE_BYTES 2.0
/* A probe whose cost ratio is above this skips the probe (and the model) in the next windows. */
#define PNMF_PROBE_FAR 1.5
/* How many windows such a probe, or a stopped fit, leaves without a model, unprobed. */
#define PNMF_PROBE_SKIPS 2

/* Scene cuts */

/* Share of the pixels by which two frames' 64-bin gray histograms must differ at a cut. */
#define PNMF_CUT_HIST 0.15
/* Mean absolute pixel difference (gray levels) two frames must exceed at a cut. */
#define PNMF_CUT_PIXEL 20.0
/* Fewest frames between two cuts (or after the first frame): a flash is not two cuts. */
#define PNMF_CUT_MIN_GAP 4
/* ... but none after a flat frame (a black leader): this share of its pixels in one bin of the 64-bin histogram. */
#define PNMF_CUT_FLAT 0.99

/* The residual layer's search (residual_search.c) */

/* Estimated bits of a zero level: cheap in zstd's runs. */
#define PNMF_LEVEL_BITS_ZERO 0.9
/* Estimated bits of a level l != 0: this + 2 log2 |l|. */
#define PNMF_LEVEL_BITS_BASE 4.0
/* Estimated bits of a vector equal to its prediction. */
#define PNMF_MV_BITS_SAME 1.0
/* Estimated bits of another vector: this + 2 log2(1 + |d|) per component d. */
#define PNMF_MV_BITS_BASE 4.0
/* Reach of the search for a frame's dominant displacement (+-). */
#define PNMF_GLOBAL_RANGE 24
/* Reach of a block's grid of vectors (+-). */
#define PNMF_LOCAL_RANGE 16
/* Spacing of that grid for the nearest references ... */
#define PNMF_GRID_STEP 4
/* ... and for those from PNMF_GRID_REFS on. */
#define PNMF_GRID_STEP_FAR 8
/* References older than this get the coarser grid. */
#define PNMF_GRID_REFS 4
/* Rounds of steps from the best vector, at each step size. */
#define PNMF_REFINE_ITERS 8
/* Frames after a window's first that decide on sub-pixel vectors (residual_search.c; as many spread over the window after a still start). */
#define PNMF_SUBPEL_PROBE_FRAMES 4
/* Reach of the whole-sample search of that probe (+-). */
#define PNMF_SUBPEL_PROBE_RANGE 3
/* Share of the changed blocks' SAD the quarter positions must save. */
#define PNMF_SUBPEL_MIN_GAIN 0.03
/* Largest share of changed blocks matched exactly by a whole vector. */
#define PNMF_SUBPEL_MAX_EXACT 0.10
/* ... or up to this share where the quarter positions save at least PNMF_SUBPEL_WIDE_GAIN and the frame is no screen (camera2, a POV-Ray render: -1.80 % BD-rate). */
#define PNMF_SUBPEL_WIDE_EXACT 0.25
#define PNMF_SUBPEL_WIDE_GAIN 0.15
/* Which filter such windows interpolate with: 0 the bilinear, 1 the 6-tap, 2 the cheaper on the window's first frames (sharp_trial()). */
#ifndef PNMF_SHARP_ENCODE
#define PNMF_SHARP_ENCODE 2
#endif
/* ... those first frames (8 or 15 gave the same BD-rates within 0.2 % on the smooth clips at 1.1 and 1.3 times the CPU). */
/* ... tried only where the probe's gain is at least this (natural_vtest, povray_spline, tree and vtest2 measure 0.064 to 0.134 and lose or tie with the 6-tap filter; preambletaffy, Megamind, natural_cup and camera2 0.154 to 0.343). */
#ifndef PNMF_SHARP_MIN_GAIN
#define PNMF_SHARP_MIN_GAIN 0.14
#endif
#ifndef PNMF_SHARP_TRIAL_FRAMES
#define PNMF_SHARP_TRIAL_FRAMES 4
#endif
/* Reach of the wide search on 4x4 box means (+-). */
#define PNMF_WIDE_RANGE PNMF_RES_MAX_MV
/* SAD per sample above which a block is poorly predicted and searched wide. */
#define PNMF_WIDE_POOR 4
/* Coarse vectors refined at full resolution (5 x 5 around each). */
#define PNMF_WIDE_KEEP 2
/* Offsets kept from the coarse search's first, sparse pass. */
#define PNMF_COARSE_KEEP 8
/* Distinct motions a frame counts for the next frame's candidates. */
#define PNMF_MOTION_SLOTS 64
/* The sample-context stream (lossless windows; lossy ones with window flags bit 24): frames over which it is priced against the plain levels stream. */
#define PNMF_LX_PROBE_FRAMES 2
/* ... and the factor of the plain one's price within which its codings are offered. */
#define PNMF_LX_PROBE_MARGIN 1.05
/* Lossy windows also try the sample-context levels stream (window flags bit 24, format 21); 0: never. */
#ifndef PNMF_LXQ_ENCODE
#define PNMF_LXQ_ENCODE 1
#endif
/* Lossless: references a block with no exact match anywhere searches whole (the others: candidates). */
#define PNMF_LXM_FULL_REFS 1
/* Lossless: SAD per sample above which a farther reference's search goes wide. */
#define PNMF_LXM_WIDE_POOR 16
/* Lossless: exact places a hash lookup gives a block per reference, nearest the predicted vector first. */
#define PNMF_LXM_CAP 4
/* Lossless: of a run of equal blocks along a row or column, the index keeps every this-th place. */
#define PNMF_LXM_RUN 8
/* Lossless: positions of a hash chain a lookup visits at most. */
#define PNMF_LXM_CHAIN 256
/* lossless: a frame looks in reference 0 alone when fewer than one in this
 * many of the frame before's lookups there found the block ... */
#define PNMF_LXM_SPARSE 32
/* ... out of at least this many lookups. */
#define PNMF_LXM_SPARSE_LOOKS 64
/* lossless: a coded trial whose levels' fixed-table bits exceed this many
 * times the least of the block's trials is not priced with the contexts
 * (residual_search.c): it is seldom the cheapest. */
#define PNMF_LX_TRIAL_PRUNE 1.25
/* lossless, sub-pixel motion: the references a shifted block searches (camera
 * noise makes the farther ones' predictions poorer). */
#define PNMF_LX_SUBPEL_REFS 2


/* ---- the sprite layer (enc_sprite.c) ---------------------------------- */

/* Frames the pose search holds at once: about this many pixels (its work
 * space is 6 bytes a pixel), at least one frame. */
#define PNMF_SPRITE_CHUNK_PIXELS (16 << 20)
/* A new pose is sent only when the window places it in this many frames:
 * one placed once costs its pixels and saves no more than the residual
 * layer's coding of it. */
#define PNMF_SPRITE_MIN_FRAMES 2
/* Foreground and pose matches within this many gray levels on an exact
 * source (screen captures, synthetic animation) ... */
#define PNMF_SPRITE_TOL 0
/* ... and on a lossy one (sprites through H.264 and the like), whose
 * coding noise an exact match never passes: a window is lossy when of
 * its pixels that change by at most PNMF_SPRITE_NOISE_DIFF gray levels
 * from one frame to the next, more than PNMF_SPRITE_NOISE_SHARE change. */
#define PNMF_SPRITE_TOL_LOSSY 12
#define PNMF_SPRITE_NOISE_DIFF 3
#define PNMF_SPRITE_NOISE_SHARE 0.05
/* The pose search's budget (pixels tested per blob pixel) on a lossy
 * window: matches within a tolerance fail late, and a noisy window's blobs
 * are many (pingus_pan: 12 s of search at the default budget, 4 s of all
 * else). */
#define PNMF_SPRITE_BUDGET_LOSSY 64
/* ... and at -q 0 on exact sources (a larger budget's extra poses seldom pay for its time on the devset) */
#define PNMF_SPRITE_BUDGET_LOSSLESS 16
/* A lossy window of at least PNMF_SPRITE_REPEAT_BLOBS blobs of min_match pixels or more, fewer than
 * this share equal another blob or a known pose is not sprite animation: no pose search ... */
#define PNMF_SPRITE_MIN_REPEAT 0.25
/* ... (fewer blobs are too little evidence to skip it on) */
#define PNMF_SPRITE_REPEAT_BLOBS 32
/* The repeat gate's near recurrences, in lossy windows: values within this many levels (or the search's tolerance, if smaller) ... */
#define PNMF_SPRITE_NEAR_TOL 4
/* ... in all but 1/this of the pixels compared (coding noise stays within it, a rendered edge elsewhere does not) ... */
#define PNMF_SPRITE_NEAR_MISS 32
/* ... for a blob whose steps above the search's tolerance reach 1/this of its pixels (a smooth blob matches any smooth one) ... */
#define PNMF_SPRITE_NEAR_EDGE 8
/* ... with at most this many candidates verified per blob. */
#define PNMF_SPRITE_NEAR_TRIES 32
/* From this -q on, in screen-like windows, poses of fewer than PNMF_SPRITE_TINY_PIXELS pixels are not placed (they cost more than they remove) ... */
#define PNMF_SPRITE_TINY_Q 50
/* ... that is, poses of at most 8 pixels (x11_fishtank's bubbles). */
#define PNMF_SPRITE_TINY_PIXELS 9
/* A sprite layer whose cost at the pick's first step (the model's step
 * without a pick) is under this many times that of the residual layer alone
 * goes on to the step pick, which weighs the two at each step. */
#define PNMF_SPRITE_MARGIN 1.1
/* Share of a layer's new poses' bytes credited to it against the residual layer alone where its key period goes on */
#ifndef PNMF_SPRITE_DICT_CREDIT
#define PNMF_SPRITE_DICT_CREDIT 1.0
#endif
/* ... of the poses placed at most this many times in the window (those placed more are weighed by the window itself) */
/* A window where this many poses come round (shown in one frame, and in an earlier window past the references) sends them (enc_sprite.c) */
#ifndef PNMF_SPRITE_RECUR_MIN
#define PNMF_SPRITE_RECUR_MIN 8
#endif
#ifndef PNMF_SPRITE_CREDIT_PLACES
#define PNMF_SPRITE_CREDIT_PLACES 2
#endif
/* A window's pose sets are weighed on its first 1 / this of frames, and
 * only the set kept is coded on to the last frame (enc_sprite.c) ... */
#define PNMF_SPRITE_PREFIX_DIV 2
/* ... when that is at least this many frames (else on all of them) ... */
#define PNMF_SPRITE_PREFIX_MIN 20
/* ... unless two sets' costs there are this close (a share of the lower) */
#define PNMF_SPRITE_PREFIX_TIE 0.01
/* Two sets are weighed on the first half of those frames first, one ahead by this share of the lower kept there ... */
#define PNMF_SPRITE_STAGE_CLEAR 0.03
/* ... where that half is at least this many frames */
#define PNMF_SPRITE_STAGE_MIN 10
/* At -q 16 and 0 a layer under this many times the residual layer alone's cost on the first half is kept (enc_sprite.c) */
#define PNMF_SPRITE_CLEAR 0.97
/* At -q 16 a layer within this share of the residual layer alone's cost on the first half is kept, the other not coded on (enc_sprite.c) */
#define PNMF_SPRITE_FAMILY_TIE 0.01
/* From -q PNMF_PICK_NO_FLOOR_Q up, off screens, a layer within this share of the residual layer alone's cost on a window's first quarter: the lower family alone coded on (enc_sprite.c) */
#define PNMF_SPRITE_EARLY_TIE 0.05
/* ... unless those frames hold under this share of the layer's placements per frame (enc_sprite.c) */
#define PNMF_SPRITE_EARLY_PLACES 0.5
/* The placements stream's writer weighs the references within this many of the expected one (sprite.c) */
#define PNMF_PLACE_REF_SPAN 128
/* 1: lossy windows of sub-pixel motion try the intra directions (window flags bit 10; natural_vtest -1.90 % BD-rate); 0: never. */
#ifndef PNMF_INTRA_ENCODE
#define PNMF_INTRA_ENCODE 1
#endif
/* The intra directions of least SAD a block tries with the transforms (3: natural_vtest -1.19 %, natural_cup -1.09 % against 2). */
#define PNMF_INTRA_TRY 3
/* Guessed bits of a block's direction (none; one) without the levels
 * stream's contexts to price it. */
#define PNMF_INTRA_NODIR_BITS 0.2
#define PNMF_INTRA_DIR_BITS   4.0
/* Whether the encoder tries the 8x8 transform (format 9) on transform
 * blocks: 0 builds an encoder whose output has no 8x8 block. */
#ifndef PNMF_TX8_ENCODE
#define PNMF_TX8_ENCODE 1
#endif

/* A prediction's transform trials are skipped where its SATD is over this many times the least prediction's ... */
#ifndef PNMF_TX_TRIAL_RATIO
#define PNMF_TX_TRIAL_RATIO 2.0
#endif
/* ... plus this (a block's SATDs near zero are all close calls). */
#ifndef PNMF_TX_TRIAL_SLACK
#define PNMF_TX_TRIAL_SLACK 256
#endif

/* ... at steps up to -q this (coarser, natural_cup loses 1.1 % BD-rate for a tenth of its encoding time). */
#define PNMF_TX_TRIAL_Q 35

/* Whether the encoder tries palette blocks (window flags bit 13,
 * palette.h) where enc_residual.c says: 0 builds an
 * encoder whose output has none. Readers read them either way. */
#ifndef PNMF_PAL_ENCODE
#define PNMF_PAL_ENCODE 1
#endif
/* Palette blocks in every frame of a screen window continuing a range-coded one, at steps up to -q this. */
#define PNMF_PAL_LATER_Q 44
/* Share of a key frame's blocks of <= 8 levels from which palettes are tried (X11 captures 0.89-0.98, others <= 0.76). */
#define PNMF_PAL_SCREEN_SHARE 0.85
/* In lossy windows with sub-pixel motion the blocks' lambda is this share of the step's (natural_cup: -2 % BD-rate against x264 from 1 to 0.65). */
#define PNMF_SUBPEL_LAMBDA 0.65
/* ... and this share at steps coarser than -q PNMF_SUBPEL_COARSE_Q's, where modes and vectors are most of the bytes (povray_spline -3 % BD-rate from 0.65). */
#ifndef PNMF_SUBPEL_LAMBDA_COARSE
#define PNMF_SUBPEL_LAMBDA_COARSE 1.0
#endif
/* The -q whose step ends the finer lambda above. */
#ifndef PNMF_SUBPEL_COARSE_Q
#define PNMF_SUBPEL_COARSE_Q 40
#endif
/* Whether a shifted block in a smooth lossy window also weighs each vector it can copy by a merge index whole (natural_cup -4.6 % BD-rate). */
#ifndef PNMF_MERGE_TRIALS
#define PNMF_MERGE_TRIALS 1
#endif
/* Whether merge trials run in the other lossy windows (screen content, sprites): off, as the sprite gate then drops layers that paid (docs/measurements.md, "Merge trials in screen windows"). */
#ifndef PNMF_MERGE_SCREEN
#define PNMF_MERGE_SCREEN 0
#endif
/* ... where its SAD + lam * bits is at most this times the searched vector's (CPU; 1.5 or no bound code alike, within the ladders' noise). */
#ifndef PNMF_MERGE_GO
#define PNMF_MERGE_GO 1.2
#endif
/* Whether every transform trial also lowers its last levels of 1 where the contexts' price says so (the chosen block's levels always are): natural_cup -q 35 -0.8 % bytes at equal PSNR-Y for 5 % more CPU, so off. */
#ifndef PNMF_RDOQ_TRIALS
#define PNMF_RDOQ_TRIALS 0
#endif
/* An 8x8 transform block whose quantization error (in the transform's
 * domain) exceeds this many times what it may cost is given up unpriced. */
#define PNMF_TX8_PRUNE 1.5

/* Memory blocks of this many bytes or more are asked for as transparent huge pages (mem.c). */
#define PNMF_HUGE_MIN ((size_t)2 << 20)

/* pnmf-enc (glibc): blocks under this many bytes come from the heap, not each its own mapping. */
#define PNMF_CLI_MMAP_MAX (32 << 20)

/* pnmf-enc (glibc): the heap's free top is given back to the kernel past this many bytes. */
#define PNMF_CLI_TRIM_MIN (1 << 30)

/* Compound prediction (window flags bit 17) is tried in the smooth windows: sub-pixel motion or a cartoon's (1), or nowhere (0). */
#ifndef PNMF_BI_ENCODE
#define PNMF_BI_ENCODE 1
#endif
/* The references (the first hypothesis's among them with PNMF_BI_SAME) whose best vectors start a second hypothesis's search (smooth clips' BD-rate: 3 with the two below -5.65 % summed, 2 without them -3.62 %). */
#ifndef PNMF_BI_REFS
#define PNMF_BI_REFS 3
#endif
/* Whether the first hypothesis's reference may be the second's too (1) or not (0). */
#ifndef PNMF_BI_SAME
#define PNMF_BI_SAME 1
#endif
/* A second hypothesis goes to the trials when its SAD + lam * bits is under this share of the first's alone (1.0: -6.07 % summed, but povray_spline +0.42 %). */
#ifndef PNMF_BI_GO
#define PNMF_BI_GO 1.15
#endif
/* In lossy windows with sub-pixel motion at steps coarser than -q this one's, a block whose source equals the previous frame's is searched on its candidates alone. */
#ifndef PNMF_SRC_STILL_Q
#define PNMF_SRC_STILL_Q 16
#endif
/* In cartoons (whole-sample motion, second hypotheses tried) the same up to this -q's step: coarser, the cut search loses (pingus_pan's -q 54 and 64). */
#ifndef PNMF_SRC_STILL_DRAWN_Q
#define PNMF_SRC_STILL_DRAWN_Q 48
#endif

/* Temporal filter of the source (enc_tf.c, encode.c filter_first) */

/* Frames after a key window's first frame that its source is filtered with (0: no filter; natural_vtest -11 % BD-rate at 8). */
#ifndef PNMF_TF_FRAMES
#define PNMF_TF_FRAMES 8
#endif
/* ... and the strength: a neighbour's pixel weighs 1/2 where its match error is this many times two noisy copies' of one frame. */
#ifndef PNMF_TF_DECAY
#define PNMF_TF_DECAY 8.0
#endif
/* Frames after a continuing window's first frame that its source is filtered with (0: none) ... */
#ifndef PNMF_TF_CONT_FRAMES
#define PNMF_TF_CONT_FRAMES 3
#endif
/* ... and the strength there (its step is the window's: a lighter filter). */
#ifndef PNMF_TF_CONT_DECAY
#define PNMF_TF_CONT_DECAY 2.0
#endif
/* The filter runs where the first frame's noise variance (squared gray levels) is at least this: not on rendered frames. */
#ifndef PNMF_TF_NOISE_MIN
#define PNMF_TF_NOISE_MIN 0.1
#endif
/* The block match searches this many samples around the vector found in the previous neighbour. */
#define PNMF_TF_RANGE 6
/* 1: the filter aligns each block to the half sample around its whole-sample match (natural_cup -2.2 % BD-rate); 0: whole samples. */
#ifndef PNMF_TF_HALF
#define PNMF_TF_HALF 1
#endif
/* The noise is measured on the 8x8 block at this quantile (1/this) of the first frame's matches in a neighbour. */
#define PNMF_TF_NOISE_QUANT 2
/* 1: lossy windows' frames may have a gain and offset on their references (window flags bit 18); 0: never. */
#ifndef PNMF_WP_ENCODE
#define PNMF_WP_ENCODE 1
#endif
/* A frame keeps its weights where its weighted reference's SAD is under this fraction of the reference's (the faded natural_vtest against 0.9: 0.97 -1.13 % BD-rate, 1.0 -0.52 %). */
#ifndef PNMF_WP_KEEP
#define PNMF_WP_KEEP 0.97
#endif
/* The weights' SAD compares the sums of runs of this many samples (1: the samples themselves). */
#ifndef PNMF_WP_RUN
#define PNMF_WP_RUN 16
#endif
/* A frame whose samples are over 1/this equal to its reference's keeps weights ... */
#define PNMF_WP_EXACT_DIV 4
/* ... only where they make 1/this of the others equal (not a capture whose sprites move the mean: 0.6 %; natural_cup's exposure 15 to 23 %). */
#define PNMF_WP_EXACT_GAIN 16
/* A frame whose source copies over this share of the source frame before it takes no weights (captures 0.93 to 0.97; natural_vtest, natural_cup up to 0.86). */
#define PNMF_WP_SRC_COPY 0.9
/* The weights' refinement around the estimate from means and deviations: at most this many steps. */
#define PNMF_WP_STEPS 16

/* 1: lossy windows of sub-pixel motion take the key frame as reference 15 (window flags bit 21); 0: never. */
#ifndef PNMF_LTERM_ENCODE
#define PNMF_LTERM_ENCODE 1
#endif

/* 1: lossy windows of smooth content fit the restoration filter and set window flags bit 22 where it pays; 0: never. */
#ifndef PNMF_PF_ENCODE
#define PNMF_PF_ENCODE 1
#endif

/* A class of the restoration filter must remove this share of its blocks' squared error: below it the decoder's pass buys next to nothing. */
#ifndef PNMF_PF_MIN_GAIN
#define PNMF_PF_MIN_GAIN 0.01
#endif

/* Coding order (window flags bit 19, enc_order.c) */

/* 1: lossy windows of a rigid whole-sample pan are coded out of order; 0: never. */
#ifndef PNMF_ORDER_ENCODE
#define PNMF_ORDER_ENCODE 1
#endif
/* Frames a group: its last is coded first (synfig_kid with anchors 6 quantizers finer: 4 -16.1 %, 8 -13.5 %, 2 -6.2 % BD-rate). */
#ifndef PNMF_ORDER_GROUP
#define PNMF_ORDER_GROUP 4
#endif
/* A group's anchor is this many transform quantizers finer than the window (synfig_kid 9 -17.7 %, 6 -16.1 %, 4 -13.6 %; a photograph panned 9 +1.7 %, 6 -2.6 %, 4 -5.4 %). */
#ifndef PNMF_ORDER_QP
#define PNMF_ORDER_QP 4
#endif
/* The pan's probe: displacements within +-this many samples ... */
#define PNMF_ORDER_PAN_RANGE 8
/* ... on a grid of every this many rows and columns ... */
#define PNMF_ORDER_PAN_GRID 4
/* ... of every this many pairs of consecutive frames ... */
#define PNMF_ORDER_PROBE_STEP 4
/* ... a pair pans where one displacement matches this share of the grid exactly ... */
#define PNMF_ORDER_PAN_EXACT 0.5
/* ... and the window where this share of the pairs pans. */
#define PNMF_ORDER_PAN_SHARE 0.75
/* ... over a first frame whose mean |horizontal| + |vertical| difference of neighbours is at least this (synfig_kid's parchment 7.6 to 9.2: -17.7 % BD-rate; pingus_pan's snow and sky 4.1 to 5.6: +11.9 %). */
#define PNMF_ORDER_MIN_ACTIVITY 6.5

/* Window flags bit 23 (format 20): 1, the encoder fits each frame's warp in lossy windows of sub-pixel motion. */
#ifndef PNMF_WARP_ENCODE
#define PNMF_WARP_ENCODE 1
#endif
/* The warp's block search: whole samples within +-this many of the global vector. */
#define PNMF_WARP_RANGE 4
/* A block joins the fit when its sums of |horizontal| and of |vertical| differences of neighbours each reach this. */
#define PNMF_WARP_MIN_TEXTURE 96
/* The fit needs this many blocks on its planes. */
#define PNMF_WARP_MIN_BLOCKS 12
/* Rounds of the fit, each leaving out the blocks off the planes by over PNMF_WARP_OUTLIER times the median. */
#define PNMF_WARP_ITERS 4
#define PNMF_WARP_OUTLIER 2.5
/* A window's warp trial codes this many first frames both ways ... */
#define PNMF_WARP_TRIAL_FRAMES 4
/* ... and keeps the warp where it costs under this share of none's (Megamind's windows 0.993 to 0.999, a zoom 0.90 to 0.94). */
#ifndef PNMF_WARP_TRIAL_GO
#define PNMF_WARP_TRIAL_GO 0.98
#endif
/* A window tries the warp where one fitted to a pair of its source frames lowers their SAD by this share (zooms and turns 0.32 to 0.77, a hand before a still camera 0.23 to 0.35, film 0.07 to 0.32). */
#define PNMF_WARP_PROBE_GAIN 0.4
/* A frame keeps its fitted warp where it lowers the previous prediction's SAD by this share. */
#ifndef PNMF_WARP_GAIN
#define PNMF_WARP_GAIN 0.05
#endif

#endif /* PNMF_TUNING_H */
