/* gpucvt_form_eval_slice against gpucvt_form_eval, instruction by instruction, and its
 * errors: run by the test `programs::slices`. */
#include "gpucvt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { N = 3000 };

static int failures;
#define EQ(a, b) do { long long a_ = (long long)(a), b_ = (long long)(b); if (a_ != b_) { fprintf(stderr, "%s:%d: %s = %lld, expected %lld\n", __FILE__, __LINE__, #a, a_, b_); failures++; } } while (0)

static uint64_t next(uint64_t *s) {
    uint64_t z = (*s += 0x9e3779b97f4a7c15);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9;
    z = (z ^ (z >> 27)) * 0x94d049bb133111eb;
    return z ^ (z >> 31);
}

static size_t word_bytes(unsigned bits) { return bits <= 8 ? 1 : bits <= 16 ? 2 : bits <= 32 ? 4 : 8; }

static uint64_t get(const void *p, size_t bytes, size_t i) {
    switch (bytes) {
    case 1: return ((const uint8_t *)p)[i];
    case 2: return ((const uint16_t *)p)[i];
    case 4: return ((const uint32_t *)p)[i];
    default: return ((const uint64_t *)p)[i];
    }
}

static void put(void *p, size_t bytes, size_t i, uint64_t v) {
    switch (bytes) {
    case 1: ((uint8_t *)p)[i] = (uint8_t)v; break;
    case 2: ((uint16_t *)p)[i] = (uint16_t)v; break;
    case 4: ((uint32_t *)p)[i] = (uint32_t)v; break;
    default: ((uint64_t *)p)[i] = v; break;
    }
}

/* The form over N instructions, with 1 and 2 threads, equal to one evaluation each. */
static void check_form(const char *text) {
    gpucvt_form *f = NULL;
    if (gpucvt_form_parse(text, strlen(text), NULL, &f, NULL)) { fprintf(stderr, "%s\n", text); failures++; return; }
    unsigned n_ops = gpucvt_form_operand_count(f), rs = strstr(text, ".rs.") != NULL;
    unsigned pack = strncmp(text, "cvt.pack", 8) == 0;
    unsigned sources = n_ops - rs - pack; /* operands before rbits; cvt.pack's c is 0 */
    /* A packed source type is one word per instruction, of the packed width. */
    size_t sb = word_bytes(gpucvt_form_operand_bits(f, 0)), db = word_bytes(gpucvt_form_result_bits(f));
    void *src = calloc(N * sources, sb), *dst = calloc(N, db), *dst2 = calloc(N, db);
    uint32_t *rbits = calloc(N, sizeof *rbits);
    uint64_t s = 7, mask = gpucvt_form_operand_bits(f, 0) >= 64 ? ~UINT64_C(0) : (UINT64_C(1) << gpucvt_form_operand_bits(f, 0)) - 1;
    for (size_t i = 0; i < N * sources; i++) put(src, sb, i, next(&s) & mask);
    for (size_t i = 0; i < N; i++) rbits[i] = (uint32_t)next(&s);
    EQ(gpucvt_form_eval_slice(f, src, N * sources, dst, N, rs ? rbits : NULL, 1), GPUCVT_OK);
    EQ(gpucvt_form_eval_slice(f, src, N * sources, dst2, N, rs ? rbits : NULL, 2), GPUCVT_OK);
    for (size_t i = 0; i < N; i++) {
        uint64_t ops[6];
        for (unsigned k = 0; k < sources; k++) ops[k] = get(src, sb, i * sources + k);
        if (rs) ops[sources] = rbits[i];
        if (pack) ops[sources] = 0;
        gpucvt_u128 one;
        EQ(gpucvt_form_eval(f, ops, n_ops, &one, NULL), GPUCVT_OK);
        if (get(dst, db, i) != one.lo || get(dst2, db, i) != one.lo) {
            fprintf(stderr, "%s: instruction %zu: slice %llx, threads %llx, eval %llx\n", text, i,
                    (unsigned long long)get(dst, db, i), (unsigned long long)get(dst2, db, i), (unsigned long long)one.lo);
            failures++;
            break;
        }
    }
    /* Lengths that do not fit, rbits missing or not wanted. */
    EQ(gpucvt_form_eval_slice(f, src, N * sources - 1, dst, N, rs ? rbits : NULL, 1), GPUCVT_E_OPERANDS);
    EQ(gpucvt_form_eval_slice(f, src, N * sources, dst, N, rs ? NULL : rbits, 1), GPUCVT_E_OPERANDS);
    EQ(gpucvt_form_eval_slice(f, NULL, 0, dst, 0, NULL, 1), GPUCVT_E_NULL);
    EQ(gpucvt_form_eval_slice(f, src, 0, NULL, 0, NULL, 1), GPUCVT_E_NULL);
    free(src), free(dst), free(dst2), free(rbits);
    gpucvt_form_free(f);
}

int main(void) {
    const char *forms[] = {"cvt.rn.f16.f32", "cvt.rn.satfinite.e4m3x2.f32", "cvt.rzi.s32.f32",
                           "cvt.rs.satfinite.e2m1x4.f32", "cvt.rn.f16x2.e4m3x2", "cvt.rn.bf16.f16",
                           "cvt.rs.satfinite.bf16x2.f32", "cvt.rni.s64.f64", "cvt.u8.s32.sat", "cvt.pack.sat.u8.s32.b32"};
    for (size_t k = 0; k < sizeof forms / sizeof forms[0]; k++) check_form(forms[k]);
    /* No slice kernels for vISA and Tile IR; a source wider than its type; NULL form. */
    gpucvt_form *v = NULL;
    EQ(gpucvt_form_parse("mov hf <- f", 11, NULL, &v, NULL), GPUCVT_OK);
    uint32_t x[1] = {0x3f800000};
    uint16_t y[1];
    EQ(gpucvt_form_eval_slice(v, x, 1, y, 1, NULL, 1), GPUCVT_E_ILLEGAL);
    gpucvt_form_free(v);
    EQ(gpucvt_form_parse("cvt.rn.f16.e4m3x2", 17, NULL, &v, NULL), GPUCVT_E_ILLEGAL);
    EQ(gpucvt_form_parse("cvt.rn.f16x2.e4m3x2", 19, NULL, &v, NULL), GPUCVT_OK);
    uint16_t wide[1] = {0xffff};
    uint32_t out[1];
    EQ(gpucvt_form_eval_slice(v, wide, 1, out, 1, NULL, 1), GPUCVT_OK);
    gpucvt_form_free(v);
    EQ(gpucvt_form_eval_slice(NULL, x, 1, y, 1, NULL, 1), GPUCVT_E_NULL);
    if (failures) {
        fprintf(stderr, "%d check(s) failed\n", failures);
        return 1;
    }
    puts("slices: every check passed");
    return 0;
}
