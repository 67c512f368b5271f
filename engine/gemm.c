#include "gemm.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <omp.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "config.h"
#include "isa.h"
#include "kern_ops.h"
#include "kernels.h"

/* The blocking (KC deep, MC_ROWS rows of A per block) can be set at build time (-DKC=...)
 * for blocking experiments: any values give the same bits (the determinism rule). */
#ifndef KC
#define KC 256
#endif
/* The most floats of packed op(B) each thread packs for itself (gemm_parallel's long-K
 * row split; 8 MB); a larger B is packed once and shared. */
#define OWN_B_FLOATS ((size_t)2 << 20)
/* At most this many floats of packed op(B) (256 KB), every thread packs all of it for
 * itself whatever K (the forward and input-gradient products of the default model, whose
 * B is a weight matrix): measured at 2 threads, bench_gemm, 3 interleaved rounds on an
 * idle Zen 5: +3 to +18 % GFLOP/s on every forward and input-gradient shape in every
 * round against packing it once, shared, behind a barrier. */
#ifndef SMALL_B_FLOATS
#define SMALL_B_FLOATS ((size_t)64 << 10)
#endif
#ifndef MC_ROWS
#define MC_ROWS 96 /* rows of A per packed block (rounded up to the micro-tile's MR) */
#endif

/* Per-thread buffers, grown on demand and kept between calls (allocating per call costs
 * page faults); kernels_release frees them. */
#define MAX_THREADS CONFIG_MAX_THREADS /* the most a run may use */
#define N_SLOTS 6 /* 0..3 for callers (attention), 4 packed A, 5 packed B */
static struct {
    float *p;
    size_t n;
} scratch[MAX_THREADS][N_SLOTS];
static int failed;

#define HUGE_PAGE ((size_t)2 << 20)

void *kernels_alloc(size_t bytes)
{
    if (bytes < HUGE_PAGE) /* a whole number of 64-byte lines, at least one */
        return aligned_alloc(64, bytes ? (bytes + 63) / 64 * 64 : 64);
    size_t n = (bytes + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
    void *p = aligned_alloc(HUGE_PAGE, n);
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (p)
        madvise(p, n, MADV_HUGEPAGE); /* advice only: a refusal changes nothing */
#endif
    return p;
}

static float *grow(int slot, size_t want)
{
    int t = omp_get_thread_num();
    if (t >= MAX_THREADS) {
#pragma omp atomic write
        failed = 1;
        return NULL;
    }
    if (scratch[t][slot].n < want) {
        free(scratch[t][slot].p);
        scratch[t][slot].p = kernels_alloc(want * sizeof(float));
        scratch[t][slot].n = scratch[t][slot].p ? want : 0;
        if (!scratch[t][slot].p) {
#pragma omp atomic write
            failed = 1;
            return NULL;
        }
    }
    return scratch[t][slot].p;
}

float *kernels_scratch(int slot, size_t n)
{
    return slot >= 0 && slot < 4 ? grow(slot, n) : NULL;
}

int kernels_failed(void)
{
    int f;
#pragma omp atomic read
    f = failed;
    return f;
}

static float *shared_b;
static size_t shared_b_n;

void kernels_release(void)
{
    free(shared_b);
    shared_b = NULL;
    shared_b_n = 0;
    for (int t = 0; t < MAX_THREADS; t++)
        for (int s = 0; s < N_SLOTS; s++) {
            free(scratch[t][s].p);
            scratch[t][s].p = NULL;
            scratch[t][s].n = 0;
        }
    failed = 0;
}

/* The MR-row tile of op(A) at rows i0.., k p0.. (kc wide) as the micro-kernel reads it:
 * in place when all MR rows exist, else packed zero-padded into tile (rs 1, ks MR). */
static inline const float *a_tile(const float *A, int lda, int ta, int i0, int p0, int mr,
                                  int MR, int kc, float *tile, long *rs, long *ks)
{
    if (mr == MR) {
        if (ta) {
            *rs = 1;
            *ks = lda;
            return A + (size_t)p0 * lda + i0;
        }
        *rs = lda;
        *ks = 1;
        return A + (size_t)i0 * lda + p0;
    }
    for (int k = 0; k < kc; k++) {
        float *dst = tile + (size_t)k * MR;
        if (ta)
            memcpy(dst, A + (size_t)(p0 + k) * lda + i0, (size_t)mr * sizeof(float));
        else
            for (int i = 0; i < mr; i++)
                dst[i] = A[(size_t)(i0 + i) * lda + p0 + k];
        for (int i = mr; i < MR; i++)
            dst[i] = 0.0f;
    }
    *rs = 1;
    *ks = MR;
    return tile;
}

/* op(B) block (kc, n) at row p0 into NR-column panels: panel[k*NR + j], zero-padded. */
static void pack_B(int kc, int n, const float *B, int ldb, int tb, int p0, int NR, float *Bp)
{
    if (!tb) {
        /* row by row: B's rows are read once each, in order (a stream the prefetcher
         * follows), each row's NR-column pieces going to their panels */
        for (int k = 0; k < kc; k++) {
            const float *src = B + (size_t)(p0 + k) * ldb;
            float *dst = Bp + (size_t)k * NR;
            for (int jr = 0; jr < n; jr += NR, dst += (size_t)NR * kc) {
                int nr = n - jr < NR ? n - jr : NR;
                if (nr == NR && NR % 8 == 0) { /* whole pieces: 32-byte copies, not floats */
                    for (int j = 0; j < NR; j += 8)
                        memcpy(dst + j, src + jr + j, 8 * sizeof(float));
                    continue;
                }
                for (int j = 0; j < nr; j++)
                    dst[j] = src[jr + j];
                for (int j = nr; j < NR; j++)
                    dst[j] = 0.0f;
            }
        }
        return;
    }
    for (int jr = 0; jr < n; jr += NR, Bp += (size_t)NR * kc) {
        int nr = n - jr < NR ? n - jr : NR;
        int k16 = 0; /* rows k < k16 of a full panel go by 16x16 transposes */
        if (nr == NR && NR % 16 == 0 && kern->transpose16) {
            k16 = kc / 16 * 16;
            for (int k = 0; k < k16; k += 16)
                for (int j = 0; j < NR; j += 16)
                    kern->transpose16(B + (size_t)(jr + j) * ldb + p0 + k, ldb,
                                      Bp + (size_t)k * NR + j, NR);
        }
        for (int j = 0; j < NR; j++) {
            if (j < nr) {
                const float *src = B + (size_t)(jr + j) * ldb + p0;
                for (int k = k16; k < kc; k++)
                    Bp[(size_t)k * NR + j] = src[k];
            } else {
                for (int k = 0; k < kc; k++)
                    Bp[(size_t)k * NR + j] = 0.0f;
            }
        }
    }
}

/* The micro-tile with the fewest padded columns (wide on ties). */
static const gemm_micro *choose(int N)
{
    isa_name(); /* selects the default path on first use */
    const gemm_micro *w = &kern->wide, *n = &kern->narrow;
    int pw = (N + w->nr - 1) / w->nr * w->nr, pn = (N + n->nr - 1) / n->nr * n->nr;
    return pn < pw ? n : w;
}

/* Rows of A per block: MC_ROWS rounded up to the micro-tile's MR */
static int block_rows(int MR)
{
    return (MC_ROWS + MR - 1) / MR * MR;
}

/* An elementwise pass over finished rows of C, run by the thread that computed them while
 * they are still in its cache (after the last K block of each row block): GELU of C into
 * y (C keeps the pre-activation), or C = GELU'(x)·C.  Elementwise: the same bits as a
 * separate pass. */
enum { EPI_GELU = 1, EPI_GELU_BWD = 2 };
typedef struct {
    int kind;
    const float *x;
    int ldx;
    float *y;
    int ldy;
} gemm_epi;

static void epilogue(const gemm_epi *e, float *C, int ldc, int r0, int r1, int N)
{
    for (int r = r0; r < r1; r++) {
        float *c = C + (size_t)r * ldc;
        if (e->kind == EPI_GELU)
            kern->gelu_fwd(e->y + (size_t)r * e->ldy, c, (size_t)N);
        else
            kern->gelu_bwd(c, e->x + (size_t)r * e->ldx, c, (size_t)N);
    }
}

/* The epilogue of columns c0.. and rows r0.. of C (for a part of the product) */
static gemm_epi epi_at(const gemm_epi *e, int r0, int c0)
{
    gemm_epi o = *e;
    if (o.x)
        o.x += (size_t)r0 * o.ldx + c0;
    if (o.y)
        o.y += (size_t)r0 * o.ldy + c0;
    return o;
}

/* Memory a product will read next, asked for while it computes (placement only, never a
 * value): operands that come from memory, not cache, in the backward pass (the forward's
 * activations: the rows of B a weight gradient packs in its next K block, the
 * pre-activations of GELU's backward in the next row block) would otherwise be fetched
 * with the micro-kernels waiting.  `rows` rows of `lines` 64-byte lines, `stride` bytes
 * apart. */
typedef struct {
    const char *p;
    size_t stride;
    long rows, lines;
} gemm_ahead;

#define AHEAD_BYTES (256L << 10) /* at most this much ahead: the rest of L2 is in use */

/* `rows` rows of `floats` floats from p (the first ones, up to AHEAD_BYTES) */
static gemm_ahead ahead_rows(const float *p, size_t stride_floats, long rows, long floats)
{
    long lines = (floats * (long)sizeof(float) + 63) / 64 + 1;
    gemm_ahead a = {(const char *)p, stride_floats * sizeof(float),
                    rows * lines * 64 > AHEAD_BYTES ? AHEAD_BYTES / (lines * 64) : rows, lines};
    return a;
}

/* Part s of n of a's lines (s = 0 .. n-1 over a product's tiles) */
static inline void ahead_part(const gemm_ahead *a, long s, long n)
{
    long total = a->rows * a->lines, l0 = total * s / n, l1 = total * (s + 1) / n;
    for (long l = l0; l < l1; l++)
        __builtin_prefetch(a->p + (size_t)(l / a->lines) * a->stride + (size_t)(l % a->lines) * 64,
                           0, 2);
}

/* C(M, N) (+)= op(A)(M, kc at p0) · packed panels (panel stride pstride floats, row stride
 * bs floats: NR, or ldb for a row-major B of one panel read in place); then the epilogue
 * (when not NULL) on each finished row block.  `ahead` (may be NULL) is asked for over the
 * tiles of the whole call, and with GELU's backward the next row block's pre-activations
 * over the tiles of the current block. */
static int multiply(const gemm_micro *mk, int M, int N, int kc, const float *A, int lda, int ta,
                    int p0, const float *Bp, size_t pstride, long bs, float *C, int ldc,
                    const float *bias, int load_c, const gemm_epi *epi, const gemm_ahead *ahead)
{
    const int MR = mk->mr, NR = mk->nr, MC = block_rows(MR);
    float *tile = NULL;
    if (M % MR && !(tile = grow(4, (size_t)MR * kc)))
        return -1;
    const long col_tiles = (N + NR - 1) / NR, all_tiles = (M + MR - 1) / MR * col_tiles;
    long done = 0;
    for (int i0 = 0; i0 < M; i0 += MC) {
        int mc = M - i0 < MC ? M - i0 : MC;
        gemm_ahead next_x = {0};
        const long blk_tiles = (mc + MR - 1) / MR * col_tiles;
        long blk_done = 0;
        if (epi && epi->kind == EPI_GELU_BWD && i0 + MC < M)
            next_x = ahead_rows(epi->x + (size_t)(i0 + MC) * epi->ldx, (size_t)epi->ldx,
                                M - i0 - MC < MC ? M - i0 - MC : MC, N);
        /* the block's last, partial tile is packed once here, not once per column panel */
        long trs = 0, tks = 0;
        int ipart = mc / MR * MR;
        const float *part = ipart < mc ? a_tile(A, lda, ta, i0 + ipart, p0, mc - ipart, MR, kc,
                                                tile, &trs, &tks)
                                       : NULL;
        for (int jr = 0; jr < N; jr += NR)
            for (int ir = 0; ir < mc; ir += MR) {
                int mr = mc - ir < MR ? mc - ir : MR;
                long rs = trs, ks = tks;
                const float *a = ir == ipart ? part
                                             : a_tile(A, lda, ta, i0 + ir, p0, mr, MR, kc, NULL,
                                                      &rs, &ks);
                if (ahead)
                    ahead_part(ahead, done++, all_tiles);
                if (next_x.p)
                    ahead_part(&next_x, blk_done++, blk_tiles);
                mk->fn(kc, a, rs, ks, Bp + (size_t)(jr / NR) * pstride, bs,
                       C + (size_t)(i0 + ir) * ldc + jr, ldc, bias ? bias + jr : NULL, load_c, mr,
                       N - jr < NR ? N - jr : NR);
            }
        if (epi)
            epilogue(epi, C, ldc, i0, i0 + mc, N);
    }
    return 0;
}

/* All of op(B) as the micro-kernels read it, K block by K block (KC rows each) as NR-column
 * panels: packed (ld 0: block p0 at p + p0·npad, its panels kc·NR floats apart, rows NR
 * apart), or read where it lies (a row-major B of whole panels with 64-byte aligned rows:
 * block p0 at p + p0·ld, panel j the NR columns at j·NR, rows ld apart; the same values
 * read, so the same bits, without copying them). */
typedef struct {
    const float *p;
    long ld;
    int npad;
} gemm_b;

static int b_in_place(int N, int NR, const float *B, int ldb, int tb)
{
    return !tb && N % NR == 0 && ldb % 16 == 0 && (uintptr_t)B % 64 == 0;
}

/* Packs all of op(B) into Bp, block by block, and points b at it. */
static void pack_all(gemm_b *b, float *Bp, int K, int N, const float *B, int ldb, int tb, int NR)
{
    for (int p0 = 0; p0 < K; p0 += KC) {
        int kc = K - p0 < KC ? K - p0 : KC;
        pack_B(kc, N, B, ldb, tb, p0, NR, Bp + (size_t)p0 * b->npad);
    }
    b->p = Bp;
    b->ld = 0;
}

/* Rows [r0, r1) of C against all of op(B), in row blocks of MC rows, each through every K
 * block and then its epilogue while it is in cache. */
static int row_blocks(const gemm_micro *mk, int r0, int r1, int N, int K, const float *A,
                      int lda, int ta, const gemm_b *b, const float *bias, float *C, int ldc,
                      int accumulate, const gemm_epi *epi)
{
    const int NR = mk->nr, MC = block_rows(mk->mr);
    int rc = 0;
    for (int m0 = r0; m0 < r1; m0 += MC) {
        int m1 = m0 + MC < r1 ? m0 + MC : r1;
        gemm_epi e = epi ? epi_at(epi, m0, 0) : (gemm_epi){0};
        /* GELU's backward: the next block's pre-activations, asked for during this one */
        int mn = r1 - m1 < MC ? r1 - m1 : MC;
        gemm_ahead next = epi && epi->kind == EPI_GELU_BWD && mn > 0
                              ? ahead_rows(epi->x + (size_t)m1 * epi->ldx, (size_t)epi->ldx, mn, N)
                              : (gemm_ahead){0};
        for (int p0 = 0; p0 < K; p0 += KC) {
            int kc = K - p0 < KC ? K - p0 : KC;
            const float *As = ta ? A + m0 : A + (size_t)m0 * lda;
            const float *Bk = b->ld ? b->p + (size_t)p0 * b->ld : b->p + (size_t)p0 * b->npad;
            rc |= multiply(mk, m1 - m0, N, kc, As, lda, ta, p0, Bk,
                           b->ld ? (size_t)NR : (size_t)kc * NR, b->ld ? b->ld : NR,
                           C + (size_t)m0 * ldc, ldc, p0 == 0 ? bias : NULL,
                           accumulate || p0 > 0, epi && p0 + kc >= K ? &e : NULL,
                           next.p && p0 + kc >= K ? &next : NULL);
        }
    }
    return rc;
}

/* The calling thread's rows of C (gemm_rows) through row_blocks.  Every thread keeps the
 * same rows from one kernel to the next, so it reads back the rows it wrote (an earlier
 * version handed row blocks out dynamically: a thread then read about half of its rows
 * from the other core's cache). */
static int own_rows(const gemm_micro *mk, int M, int N, int K, const float *A, int lda, int ta,
                    const gemm_b *b, const float *bias, float *C, int ldc, int accumulate,
                    const gemm_epi *epi)
{
    int r0, r1;
    gemm_rows(M, omp_get_thread_num(), omp_get_num_threads(), &r0, &r1);
    return row_blocks(mk, r0, r1, N, K, A, lda, ta, b, bias, C, ldc, accumulate, epi);
}

static int gemm_core(int M, int N, int K, const float *A, int lda, int ta, const float *B, int ldb,
                     int tb, const float *bias, float *C, int ldc, int accumulate,
                     const gemm_epi *epi)
{
    if (M <= 0 || N <= 0)
        return 0;
    if (K <= 0) {
        for (int i = 0; i < M; i++) {
            if (bias)
                memcpy(C + (size_t)i * ldc, bias, (size_t)N * sizeof(float));
            else if (!accumulate)
                memset(C + (size_t)i * ldc, 0, (size_t)N * sizeof(float));
        }
        if (epi)
            epilogue(epi, C, ldc, 0, M, N);
        return 0;
    }
    const gemm_micro *mk = choose(N);
    const int NR = mk->nr;
    const int npad = (N + NR - 1) / NR * NR, in_place = b_in_place(N, NR, B, ldb, tb);
    if (K > KC && (size_t)K * npad <= SMALL_B_FLOATS) {
        /* K over more than one block and a small op(B) (a weight matrix over K = 3C or 4C):
           all of op(B) at once, then each block of rows through every K block while its
           rows of C are in cache (K block by K block, all of C went through the cache once
           per block) */
        gemm_b b = {B, ldb, npad};
        if (!in_place) {
            float *Bp = grow(5, (size_t)K * npad);
            if (!Bp)
                return -1;
            pack_all(&b, Bp, K, N, B, ldb, tb, NR);
        }
        return row_blocks(mk, 0, M, N, K, A, lda, ta, &b, bias, C, ldc, accumulate, epi);
    }
    const int kcmax = K < KC ? K : KC;
    float *Bp = in_place ? NULL : grow(5, (size_t)kcmax * npad);
    if (!in_place && !Bp)
        return -1;
    for (int p0 = 0; p0 < K; p0 += KC) {
        int kc = K - p0 < KC ? K - p0 : KC;
        /* the next K block's part of B, asked for while this one is multiplied */
        int kn = K - p0 - kc < KC ? K - p0 - kc : KC;
        gemm_ahead next = tb ? ahead_rows(B + p0 + kc, (size_t)ldb, N, kn)
                             : ahead_rows(B + (size_t)(p0 + kc) * ldb, (size_t)ldb, kn, N);
        if (!in_place)
            pack_B(kc, N, B, ldb, tb, p0, NR, Bp);
        if (multiply(mk, M, N, kc, A, lda, ta, p0, in_place ? B + (size_t)p0 * ldb : Bp,
                     in_place ? (size_t)NR : (size_t)kc * NR, in_place ? ldb : NR, C, ldc,
                     p0 == 0 ? bias : NULL, accumulate || p0 > 0, p0 + kc >= K ? epi : NULL,
                     kn > 0 ? &next : NULL))
            return -1;
    }
    return 0;
}

int gemm_serial(int M, int N, int K, const float *A, int lda, int ta, const float *B, int ldb,
                int tb, float *C, int ldc, int accumulate)
{
    return gemm_core(M, N, K, A, lda, ta, B, ldb, tb, NULL, C, ldc, accumulate, NULL);
}

/* op(B) packed once for all threads (blocks of KC rows, each as NR-column panels), kept
 * between calls in shared_b; freed by kernels_release. */
static int gemm_parallel(int M, int N, int K, const float *A, int lda, int ta, const float *B,
                         int ldb, int tb, const float *bias, float *C, int ldc, int accumulate,
                         const gemm_epi *epi)
{
    int nt = omp_get_max_threads();
    const gemm_micro *mk = choose(N);
    const int MR = mk->mr, NR = mk->nr;
    if (nt <= 1 || K <= 0 || N <= 0)
        return gemm_core(M, N, K, A, lda, ta, B, ldb, tb, bias, C, ldc, accumulate, epi);
    int npad = (N + NR - 1) / NR * NR, np = npad / NR;
    int rc = 0;
    if (K > M && N >= M && np >= nt) {
        /* Long K and no more rows than columns (weight gradients): each thread packs and
         * multiplies its own column panels, so no packed B crosses between cores and no
         * barrier waits for the packing. */
#pragma omp parallel reduction(| : rc)
        {
            int t = omp_get_thread_num(), n = omp_get_num_threads();
            int per = (np + n - 1) / n, c0 = t * per * NR;
            int c1 = c0 + per * NR < N ? c0 + per * NR : N;
            gemm_epi e = epi ? epi_at(epi, 0, c0) : (gemm_epi){0};
            if (c0 < c1)
                rc |= gemm_core(M, c1 - c0, K, A, lda, ta, tb ? B + (size_t)c0 * ldb : B + c0,
                                ldb, tb, bias ? bias + c0 : NULL, C + c0, ldc, accumulate,
                                epi ? &e : NULL) != 0;
        }
        return rc ? -1 : 0;
    }
    if (M < 2 * MR)
        return gemm_core(M, N, K, A, lda, ta, B, ldb, tb, bias, C, ldc, accumulate, epi);
    const int MC = block_rows(MR), nblk = (M + MC - 1) / MC;
    const size_t nb_floats = (size_t)K * npad;
    if ((K > M || nb_floats <= SMALL_B_FLOATS) && nblk >= nt && nb_floats <= OWN_B_FLOATS) {
        /* Long K, more rows than columns (the qkv and fc weight gradients), or a small
         * op(B) (SMALL_B_FLOATS): every thread packs all of op(B) into its own buffer
         * (no packed line crosses between cores, no barrier after the packing), then
         * takes row blocks as below.  Measured at 2
         * threads on the qkv and fc weight-gradient shapes of the default model: about
         * +25 % GFLOP/s against the shared packing (which stays for larger B). */
#pragma omp parallel reduction(| : rc)
        {
            const int in_place = b_in_place(N, NR, B, ldb, tb);
            gemm_b b = {B, in_place ? ldb : 0, npad};
            float *Bp = in_place ? NULL : grow(5, (size_t)K * npad);
            if (Bp)
                pack_all(&b, Bp, K, N, B, ldb, tb, NR);
            if (in_place || Bp)
                rc |= own_rows(mk, M, N, K, A, lda, ta, &b, bias, C, ldc, accumulate, epi) != 0;
            else
                rc = 1;
        }
        return rc ? -1 : 0;
    }
    if (b_in_place(N, NR, B, ldb, tb)) { /* nothing to pack */
        gemm_b b = {B, ldb, npad};
#pragma omp parallel reduction(| : rc)
        rc |= own_rows(mk, M, N, K, A, lda, ta, &b, bias, C, ldc, accumulate, epi) != 0;
        return rc ? -1 : 0;
    }
    size_t need = (size_t)K * npad;
    if (shared_b_n < need) {
        free(shared_b);
        shared_b = kernels_alloc(need * sizeof(float));
        shared_b_n = shared_b ? need : 0;
        if (!shared_b) {
#pragma omp atomic write
            failed = 1;
            return -1;
        }
    }
    float *Bp = shared_b;
#pragma omp parallel reduction(| : rc)
    {
        int nb = (K + KC - 1) / KC;
#pragma omp for schedule(static) collapse(2)
        for (int b = 0; b < nb; b++)
            for (int j = 0; j < np; j++) {
                int p0 = b * KC, kc = K - p0 < KC ? K - p0 : KC;
                int n = N - j * NR < NR ? N - j * NR : NR;
                pack_B(kc, n, tb ? B + (size_t)j * NR * ldb : B + j * NR, ldb, tb, p0, NR,
                       Bp + (size_t)p0 * npad + (size_t)j * NR * kc);
            }
        gemm_b b = {Bp, 0, npad};
        rc |= own_rows(mk, M, N, K, A, lda, ta, &b, bias, C, ldc, accumulate, epi) != 0;
    }
    return rc ? -1 : 0;
}

int gemm(int M, int N, int K, const float *A, int lda, int ta, const float *B, int ldb, int tb,
         float *C, int ldc, int accumulate)
{
    return gemm_parallel(M, N, K, A, lda, ta, B, ldb, tb, NULL, C, ldc, accumulate, NULL);
}

int gemm_bias(int M, int N, int K, const float *A, int lda, int ta, const float *B, int ldb,
              int tb, const float *bias, float *C, int ldc)
{
    return gemm_parallel(M, N, K, A, lda, ta, B, ldb, tb, bias, C, ldc, 0, NULL);
}

int gemm_bias_gelu(int M, int N, int K, const float *A, int lda, int ta, const float *B, int ldb,
                   int tb, const float *bias, float *C, int ldc, float *G, int ldg)
{
    gemm_epi e = {EPI_GELU, NULL, 0, G, ldg};
    return gemm_parallel(M, N, K, A, lda, ta, B, ldb, tb, bias, C, ldc, 0, &e);
}

int gemm_gelu_bwd(int M, int N, int K, const float *A, int lda, int ta, const float *B, int ldb,
                  int tb, float *C, int ldc, const float *X, int ldx)
{
    gemm_epi e = {EPI_GELU_BWD, X, ldx, NULL, 0};
    return gemm_parallel(M, N, K, A, lda, ta, B, ldb, tb, NULL, C, ldc, 0, &e);
}

int gemm_gelu_bwd_serial(int M, int N, int K, const float *A, int lda, int ta, const float *B,
                         int ldb, int tb, float *C, int ldc, const float *X, int ldx)
{
    gemm_epi e = {EPI_GELU_BWD, X, ldx, NULL, 0};
    return gemm_core(M, N, K, A, lda, ta, B, ldb, tb, NULL, C, ldc, 0, &e);
}

size_t gemm_packed_floats(int K, int N)
{
    int NR = choose(N)->nr;
    return (size_t)K * ((N + NR - 1) / NR * NR);
}

void gemm_pack(gemm_packed *pb, float *buf, int K, int N, const float *B, int ldb, int tb)
{
    const gemm_micro *mk = choose(N);
    pb->micro = mk;
    pb->K = K;
    pb->N = N;
    if (!tb && N == mk->nr && (uintptr_t)B % 64 == 0 && ldb % 16 == 0) {
        /* one panel whose rows already are B's rows, 64-byte aligned (attention's V, Q, K
         * and dO at head size 16): read in place, nothing copied */
        pb->Bp = B;
        pb->ld = ldb;
        return;
    }
    pack_B(K, N, B, ldb, tb, 0, mk->nr, buf);
    pb->Bp = buf;
    pb->ld = mk->nr;
}

int gemm_packed_mul(int M, int n, int k0, int k, const float *A, int lda, int ta,
                    const gemm_packed *pb, float *C, int ldc, int accumulate)
{
    const gemm_micro *mk = pb->micro;
    if (M <= 0 || n <= 0)
        return 0;
    if (k <= 0) {
        if (!accumulate)
            for (int i = 0; i < M; i++)
                memset(C + (size_t)i * ldc, 0, (size_t)n * sizeof(float));
        return 0;
    }
    const float *Bp = pb->Bp + (size_t)k0 * pb->ld;
    const size_t pstride = (size_t)pb->K * mk->nr;
    const int MR = mk->mr, NR = mk->nr;
    if (M <= MC_ROWS && M % MR == 0) {
        /* whole tiles of A read in place, one row block (attention's blocks of rows, many
         * small products per head): straight to the micro-kernel, the calls multiply
         * would make without its blocking arithmetic */
        const long rs = ta ? 1 : lda, ks = ta ? lda : 1;
        for (int jr = 0; jr < n; jr += NR, Bp += pstride)
            for (int ir = 0; ir < M; ir += MR)
                mk->fn(k, ta ? A + ir : A + (size_t)ir * lda, rs, ks, Bp, pb->ld,
                       C + (size_t)ir * ldc + jr, ldc, NULL, accumulate, MR,
                       n - jr < NR ? n - jr : NR);
        return 0;
    }
    return multiply(mk, M, n, k, A, lda, ta, 0, Bp, pstride, pb->ld, C, ldc, NULL, accumulate,
                    NULL, NULL);
}
