/* PCG32 against the reference outputs in tests/vectors/pcg32.txt (a copy of
 * shared/vectors/pcg32.txt), plus the derived draws' ranges and moments. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../engine/pcg.h"
#include "check.h"

static void check_vectors(const char *path)
{
    FILE *f = fopen(path, "r");
    CHECK(f != NULL, "cannot open %s", path);
    if (!f)
        return;
    char line[1024];
    int cases = 0;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#' || line[0] == '\n')
            continue;
        uint64_t seed, stream;
        char *p = line;
        int used = 0;
        if (sscanf(p, "%" SCNu64 " %" SCNu64 " |%n", &seed, &stream, &used) != 2) {
            CHECK(0, "%s: unparsable line: %s", path, line);
            continue;
        }
        p += used;
        pcg32 r;
        pcg32_seed(&r, seed, stream);
        int ok = 1;
        for (int i = 0; i < 10; i++) {
            unsigned int want;
            if (sscanf(p, "%x%n", &want, &used) != 1) {
                ok = 0;
                break;
            }
            p += used;
            uint32_t got = pcg32_next(&r);
            if (got != want) {
                fprintf(stderr, "seed %" PRIu64 " stream %" PRIu64 " output %d: got %08x want %08x\n",
                        seed, stream, i, got, want);
                ok = 0;
            }
        }
        CHECK(ok, "next() vectors for seed %" PRIu64 " stream %" PRIu64, seed, stream);
        p = strchr(p, '|');
        CHECK(p != NULL, "no bounded draws on line for seed %" PRIu64, seed);
        if (!p)
            continue;
        p++;
        pcg32_seed(&r, seed, stream);
        ok = 1;
        for (int i = 0; i < 10; i++) {
            unsigned int want;
            if (sscanf(p, "%u%n", &want, &used) != 1) {
                ok = 0;
                break;
            }
            p += used;
            if (pcg32_bounded(&r, 6) != want)
                ok = 0;
        }
        CHECK(ok, "bounded(6) vectors for seed %" PRIu64 " stream %" PRIu64, seed, stream);
        cases++;
    }
    fclose(f);
    CHECK(cases >= 3, "only %d vector cases read from %s", cases, path);
}

static void check_derived(void)
{
    pcg32 r;
    pcg32_seed(&r, 7, 3);
    const int n = 200000;
    double su = 0, sn = 0, sn2 = 0;
    float umin = 1, umax = 0;
    int hist[7] = {0};
    for (int i = 0; i < n; i++) {
        float u = pcg32_uniform(&r);
        su += u;
        if (u < umin) umin = u;
        if (u > umax) umax = u;
        double z = pcg32_normal(&r);
        sn += z;
        sn2 += z * z;
        hist[pcg32_bounded(&r, 7)]++;
    }
    CHECK(umin >= 0.0f && umax < 1.0f, "uniform outside [0,1): min %g max %g", umin, umax);
    CHECK(fabs(su / n - 0.5) < 0.005, "uniform mean %g", su / n);
    /* 5 standard errors of the mean and of the variance estimate */
    CHECK(fabs(sn / n) < 5.0 / sqrt(n), "normal mean %g", sn / n);
    CHECK(fabs(sn2 / n - 1.0) < 5.0 * sqrt(2.0 / n), "normal variance %g", sn2 / n);
    int hok = 1;
    for (int k = 0; k < 7; k++)
        if (fabs(hist[k] - n / 7.0) > 5.0 * sqrt(n / 7.0))
            hok = 0;
    CHECK(hok, "bounded(7) histogram far from uniform");

    /* purposes give disjoint streams; same (seed, purpose, index) the same stream */
    pcg32 a, b, c;
    pcg32_stream(&a, 5, PCG_PURPOSE_DATA, 0);
    pcg32_stream(&b, 5, PCG_PURPOSE_DROPOUT, 0);
    pcg32_stream(&c, 5, PCG_PURPOSE_DATA, 0);
    uint32_t xa = pcg32_next(&a), xb = pcg32_next(&b), xc = pcg32_next(&c);
    CHECK(xa != xb && xa == xc, "streams: data %08x dropout %08x data again %08x", xa, xb, xc);
    pcg32_seed(&a, 1, 0);
    CHECK(pcg32_bounded(&a, 1) == 0, "bounded(1) must be 0");
}

int main(int argc, char **argv)
{
    check_vectors(argc > 1 ? argv[1] : "tests/vectors/pcg32.txt");
    check_derived();
    return check_done("test_pcg");
}
