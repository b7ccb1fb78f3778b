/* gpucvt_form_eval and gpucvt_form_eval_lanes against the C compiler's own (_Float16)x on
 * the same data, one thread, in one run (scripts/bench-c builds and runs it). Prints one
 * line per measurement: the form, ns per evaluation, millions per second, and the ratio to
 * (_Float16)x. */
#define _POSIX_C_SOURCE 199309L /* clock_gettime */
#include "gpucvt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { N = 1 << 16, REPEAT = 7 };

static uint64_t ops[N * 5];
static float floats[N];
static uint64_t sink;

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static uint64_t next(uint64_t *s) {
    uint64_t z = (*s += 0x9e3779b97f4a7c15);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9;
    z = (z ^ (z >> 27)) * 0x94d049bb133111eb;
    return z ^ (z >> 31);
}

/* Best of REPEAT runs over the N operand sets, in ns per evaluation. */
static double time_half(void) {
    double best = 1e9;
    for (int r = 0; r < REPEAT; r++) {
        double t0 = now();
        uint64_t acc = 0;
        for (int i = 0; i < N; i++) {
            _Float16 h = (_Float16)floats[i];
            uint16_t b;
            memcpy(&b, &h, sizeof b);
            acc += b;
        }
        double t = (now() - t0) / N * 1e9;
        sink += acc;
        if (t < best) best = t;
    }
    return best;
}

static double time_eval(const gpucvt_form *f, size_t n_ops) {
    double best = 1e9;
    for (int r = 0; r < REPEAT; r++) {
        double t0 = now();
        uint64_t acc = 0;
        for (int i = 0; i < N; i++) {
            gpucvt_u128 out;
            uint32_t flags;
            if (gpucvt_form_eval(f, &ops[i * n_ops], n_ops, &out, &flags) != GPUCVT_OK) abort();
            acc += out.lo + flags;
        }
        double t = (now() - t0) / N * 1e9;
        sink += acc;
        if (t < best) best = t;
    }
    return best;
}

static double time_lanes(const gpucvt_form *f, size_t n_ops) {
    double best = 1e9;
    static gpucvt_u128 out[32];
    static uint32_t flags[32];
    for (int r = 0; r < REPEAT; r++) {
        double t0 = now();
        for (int i = 0; i + 32 <= N; i += 32) {
            if (gpucvt_form_eval_lanes(f, 32, 0xffffffffu, &ops[i * n_ops], n_ops, out, flags, NULL) != GPUCVT_OK)
                abort();
            sink += out[0].lo;
        }
        double t = (now() - t0) / N * 1e9;
        if (t < best) best = t;
    }
    return best;
}

/* gpucvt_form_eval_slice over the N instructions (sources in instruction order, f32 words),
 * one thread, in ns per instruction. */
static double time_slice(const gpucvt_form *f, size_t n_ops, int rs) {
    static uint32_t src[N * 4], rbits[N];
    static uint64_t dst[N];
    size_t n_src_per = n_ops - (size_t)rs;
    for (size_t i = 0; i < N; i++) {
        for (size_t j = 0; j < n_src_per; j++) src[i * n_src_per + j] = (uint32_t)ops[i * n_ops + j];
        rbits[i] = (uint32_t)ops[i * n_ops + n_ops - 1];
    }
    double best = 1e9;
    for (int r = 0; r < REPEAT; r++) {
        double t0 = now();
        if (gpucvt_form_eval_slice(f, src, N * n_src_per, dst, N, rs ? rbits : NULL, 1) != GPUCVT_OK) abort();
        double t = (now() - t0) / N * 1e9;
        sink += dst[1];
        if (t < best) best = t;
    }
    return best;
}

int main(void) {
    uint64_t s = 1;
    for (int i = 0; i < N; i++) {
        /* Finite f32 values of every magnitude an f16 or fp8 result cares about. */
        uint32_t u = (uint32_t)next(&s);
        u = (u & 0x807fffffu) | ((uint32_t)(100 + (u >> 23) % 56) << 23);
        memcpy(&floats[i], &u, sizeof u);
    }
    double half = time_half();
    printf("%-32s %7.2f ns  %7.1f M/s  ratio 1.00\n", "(_Float16)x, the C compiler's", half, 1e3 / half);
    const char *forms[] = {"cvt.rn.f16.f32", "cvt.rn.satfinite.e4m3x2.f32", "cvt.rzi.s32.f32",
                           "cvt.rs.satfinite.e2m1x4.f32"};
    for (size_t k = 0; k < sizeof forms / sizeof forms[0]; k++) {
        gpucvt_form *f = NULL;
        if (gpucvt_form_parse(forms[k], strlen(forms[k]), NULL, &f, NULL) != GPUCVT_OK) return 1;
        size_t n = gpucvt_form_operand_count(f);
        for (int i = 0; i < N; i++)
            for (size_t j = 0; j < n; j++) {
                uint32_t u;
                memcpy(&u, &floats[(i * n + j) % N], sizeof u);
                /* rbits: random words. */
                ops[i * n + j] = (j == 4) ? (next(&s) & 0xffffffffu) : u;
            }
        double t = time_eval(f, n);
        printf("%-32s %7.2f ns  %7.1f M/s  ratio %.2f\n", forms[k], t, 1e3 / t, t / half);
        double l = time_lanes(f, n);
        printf("%-32s %7.2f ns  %7.1f M/s  ratio %.2f  (eval_lanes, 32 lanes, per lane)\n", forms[k], l, 1e3 / l,
               l / half);
        double sl = time_slice(f, n, n == 5);
        printf("%-32s %7.2f ns  %7.1f M/s  ratio %.2f  (eval_slice, per instruction)\n", forms[k], sl, 1e3 / sl,
               sl / half);
        gpucvt_form_free(f);
    }
    return sink == 42; /* keeps the results alive */
}
