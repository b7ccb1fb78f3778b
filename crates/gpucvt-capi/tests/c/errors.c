/* Every error path of the C API, and the values the documentation promises: run by the test
 * `programs::errors`. Exits non-zero at the first check that fails. */
#include "gpucvt.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;
#define CHECK(cond) do { if (!(cond)) { fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond); failures++; } } while (0)
#define EQ(a, b) do { long long a_ = (long long)(a), b_ = (long long)(b); if (a_ != b_) { fprintf(stderr, "%s:%d: %s = %lld, expected %lld\n", __FILE__, __LINE__, #a, a_, b_); failures++; } } while (0)

static gpucvt_status parse(const char *text, const gpucvt_options *o, gpucvt_form **f, gpucvt_diag **d) {
    return gpucvt_form_parse(text, strlen(text), o, f, d);
}

static void versions(void) {
    EQ(gpucvt_abi_version(), GPUCVT_ABI_VERSION);
    CHECK(strchr(gpucvt_version(), '.') != NULL);
    CHECK(strcmp(gpucvt_status_str(GPUCVT_OK), "ok") == 0);
    for (int s = GPUCVT_E_NULL; s <= GPUCVT_E_ARGUMENT; s++) CHECK(strcmp(gpucvt_status_str(s), "unknown status") != 0);
    CHECK(strcmp(gpucvt_status_str(-1), "unknown status") == 0);
    CHECK(strcmp(gpucvt_status_str(GPUCVT_E_ARGUMENT + 1), "unknown status") == 0);
}

static void nulls(void) {
    gpucvt_form *f = (gpucvt_form *)1;
    gpucvt_diag *d = (gpucvt_diag *)1;
    EQ(gpucvt_form_parse("cvt.rn.f16.f32", 14, NULL, NULL, NULL), GPUCVT_E_NULL);
    EQ(gpucvt_form_parse(NULL, 0, NULL, &f, &d), GPUCVT_E_NULL);
    CHECK(f == NULL);
    EQ(gpucvt_diag_status(d), GPUCVT_E_NULL);
    gpucvt_diag_free(d);
    /* Accessors given NULL: zeros and empty strings, never a crash. */
    EQ(gpucvt_form_operand_count(NULL), 0);
    EQ(gpucvt_form_operand_bits(NULL, 0), 0);
    EQ(gpucvt_form_result_bits(NULL), 0);
    EQ(gpucvt_form_result_elements(NULL), 0);
    EQ(gpucvt_form_dialect(NULL), 0);
    EQ(gpucvt_diag_status(NULL), GPUCVT_E_NULL);
    CHECK(strcmp(gpucvt_diag_rule(NULL), "") == 0);
    CHECK(strcmp(gpucvt_diag_message(NULL), "") == 0);
    EQ(gpucvt_diag_line(NULL), 0);
    EQ(gpucvt_diag_column(NULL), 0);
    gpucvt_form_free(NULL);
    gpucvt_diag_free(NULL);

    EQ(parse("cvt.rn.f16.f32", NULL, &f, NULL), GPUCVT_OK);
    uint64_t ops[1] = {0x3f800000};
    gpucvt_u128 out;
    uint32_t flags;
    EQ(gpucvt_form_eval(NULL, ops, 1, &out, &flags), GPUCVT_E_NULL);
    EQ(gpucvt_form_eval(f, NULL, 1, &out, &flags), GPUCVT_E_NULL);
    EQ(gpucvt_form_eval(f, ops, 1, NULL, &flags), GPUCVT_E_NULL);
    EQ(gpucvt_form_eval(f, ops, 1, &out, NULL), GPUCVT_OK); /* flags may be NULL */
    EQ(out.lo, 0x3c00);
    uint64_t w[2];
    EQ(gpucvt_form_eval_wide(NULL, ops, 1, w, 2, NULL), GPUCVT_E_NULL);
    EQ(gpucvt_form_eval_wide(f, NULL, 1, w, 2, NULL), GPUCVT_E_NULL);
    EQ(gpucvt_form_eval_wide(f, ops, 1, NULL, 2, NULL), GPUCVT_E_NULL);
    EQ(gpucvt_form_eval_lanes(NULL, 1, 1, ops, 1, &out, NULL, NULL), GPUCVT_E_NULL);
    EQ(gpucvt_form_eval_lanes(f, 1, 1, NULL, 1, &out, NULL, NULL), GPUCVT_E_NULL);
    EQ(gpucvt_form_eval_lanes(f, 1, 1, ops, 1, NULL, NULL, NULL), GPUCVT_E_NULL);
    EQ(gpucvt_form_spelling(NULL, NULL, 0, NULL), GPUCVT_E_NULL);
    size_t len = 0;
    EQ(gpucvt_form_spelling(f, NULL, 100, &len), GPUCVT_E_NULL);
    gpucvt_form_free(f);

    gpucvt_format fmt;
    EQ(gpucvt_format_by_name(NULL, &fmt, NULL), GPUCVT_E_NULL);
    EQ(gpucvt_format_by_name("f32", NULL, NULL), GPUCVT_E_NULL);
    EQ(gpucvt_format_by_name("f32", &fmt, NULL), GPUCVT_OK);
    EQ(gpucvt_convert(fmt, fmt, NULL, 0, 0, NULL, NULL), GPUCVT_E_NULL);
}

static void illegal_forms(void) {
    gpucvt_form *f = (gpucvt_form *)1;
    gpucvt_diag *d = NULL;
    gpucvt_options o;
    memset(&o, 0, sizeof o);
    o.size = sizeof o;
    o.target = "sm_80";
    /* The checker's rule and column: .rn is not a rounding an f16 -> f32 widening takes. */
    EQ(parse("cvt.rn.f32.f16", &o, &f, &d), GPUCVT_E_ILLEGAL);
    CHECK(f == NULL);
    EQ(gpucvt_diag_status(d), GPUCVT_E_ILLEGAL);
    CHECK(strcmp(gpucvt_diag_rule(d), "ptx.rounding-illegal") == 0);
    EQ(gpucvt_diag_line(d), 1);
    EQ(gpucvt_diag_column(d), 4);
    CHECK(strstr(gpucvt_diag_message(d), ".rn") != NULL);
    gpucvt_diag_free(d);
    /* Legal on newer targets only. */
    EQ(parse("cvt.rn.satfinite.e2m1x2.f32", &o, &f, &d), GPUCVT_E_ILLEGAL);
    CHECK(strstr(gpucvt_diag_message(d), "sm_80") != NULL || strlen(gpucvt_diag_message(d)) > 0);
    CHECK(strlen(gpucvt_diag_rule(d)) > 0);
    gpucvt_diag_free(d);
    /* Not an instruction gpucvt models; a malformed vISA move; a vISA pair with no mov. */
    EQ(parse("add.f32", NULL, &f, &d), GPUCVT_E_PARSE);
    CHECK(strstr(gpucvt_diag_message(d), "unknown instruction") != NULL);
    gpucvt_diag_free(d);
    EQ(parse("cvt.rn.f16.f32 %r1, %r2, %r3;", NULL, &f, &d), GPUCVT_E_ILLEGAL);
    CHECK(strcmp(gpucvt_diag_rule(d), "ptx.operand-count") == 0);
    EQ(gpucvt_diag_column(d), 16);
    gpucvt_diag_free(d);
    EQ(parse("mov hf <- zz", NULL, &f, &d), GPUCVT_E_PARSE);
    gpucvt_diag_free(d);
    EQ(parse("mov bool <- hf", NULL, &f, NULL), GPUCVT_E_ILLEGAL); /* diag may be NULL */
    /* Not UTF-8; a NUL inside the text (len counts it) is echoed as \0. */
    EQ(gpucvt_form_parse("cvt.rn.\xff", 8, NULL, &f, &d), GPUCVT_E_PARSE);
    gpucvt_diag_free(d);
    EQ(gpucvt_form_parse("cvt.rn\0.f16.f32", 15, NULL, &f, &d), GPUCVT_E_ILLEGAL);
    CHECK(strstr(gpucvt_diag_message(d), "\\0") != NULL);
    gpucvt_diag_free(d);
    /* Text as pointer and length: only the first len bytes are read. */
    EQ(gpucvt_form_parse("cvt.rn.f16.f32XXXX", 14, NULL, &f, &d), GPUCVT_OK);
    CHECK(d == NULL);
    gpucvt_form_free(f);
    /* A Tile IR op the spec version does not have yet: its reader refuses the keyword. */
    o.target = NULL;
    o.tile_version = "13.3";
    EQ(parse("ftoi %x signed saturating : tile<f32> -> tile<i32>", &o, &f, &d), GPUCVT_E_PARSE);
    CHECK(strcmp(gpucvt_diag_rule(d), "tile.syntax") == 0);
    EQ(gpucvt_diag_column(d), 16);
    CHECK(strstr(gpucvt_diag_message(d), "13.3") != NULL);
    gpucvt_diag_free(d);
}

static void options(void) {
    gpucvt_form *f = NULL;
    gpucvt_diag *d = NULL;
    gpucvt_options o;
    memset(&o, 0, sizeof o);
    /* size 0, a smaller struct, a garbage size. */
    EQ(parse("cvt.rn.f16.f32", &o, &f, &d), GPUCVT_E_ARGUMENT);
    gpucvt_diag_free(d);
    o.size = sizeof o - 1;
    EQ(parse("cvt.rn.f16.f32", &o, &f, NULL), GPUCVT_E_ARGUMENT);
    o.size = (size_t)1 << 40;
    EQ(parse("cvt.rn.f16.f32", &o, &f, NULL), GPUCVT_E_ARGUMENT);
    /* A newer caller's larger struct: accepted when the fields this library lacks are 0. */
    struct { gpucvt_options o; uint64_t later; } big;
    memset(&big, 0, sizeof big);
    big.o.size = sizeof big;
    EQ(parse("cvt.rn.f16.f32", &big.o, &f, NULL), GPUCVT_OK);
    gpucvt_form_free(f);
    big.later = 1;
    EQ(parse("cvt.rn.f16.f32", &big.o, &f, NULL), GPUCVT_E_ARGUMENT);
    /* The first version's struct (without the AMD fields) is read with them zero. */
    o.size = offsetof(gpucvt_options, amd_target);
    EQ(parse("cvt.rn.f16.f32", &o, &f, NULL), GPUCVT_OK);
    gpucvt_form_free(f);
    o.size = offsetof(gpucvt_options, amd_target) + 4;
    EQ(parse("cvt.rn.f16.f32", &o, &f, NULL), GPUCVT_E_ARGUMENT);
    /* AMD: an instruction needs its target; on it, it evaluates (2.0 into FNUZ and OCP
     * fp8, byte 0 of the destination). */
    o.size = sizeof o;
    EQ(parse("v_cvt_pk_fp8_f32 v1, v2, v3", &o, &f, &d), GPUCVT_E_ILLEGAL);
    CHECK(strstr(gpucvt_diag_message(d), "target") != NULL);
    gpucvt_diag_free(d);
    o.amd_target = "gfx9000";
    EQ(parse("v_cvt_pk_fp8_f32 v1, v2, v3", &o, &f, &d), GPUCVT_E_UNKNOWN_NAME);
    CHECK(strstr(gpucvt_diag_message(d), "gfx9000") != NULL);
    gpucvt_diag_free(d);
    uint64_t two[2] = {0x40000000, 0};
    gpucvt_u128 r;
    o.amd_target = "gfx942";
    EQ(parse("v_cvt_pk_fp8_f32 v1, v2, v3", &o, &f, NULL), GPUCVT_OK);
    EQ(gpucvt_form_dialect(f), GPUCVT_DIALECT_AMD);
    EQ(gpucvt_form_eval(f, two, 2, &r, NULL), GPUCVT_OK);
    EQ(r.lo & 0xff, 0x48); /* FNUZ: bias 8 */
    gpucvt_form_free(f);
    o.amd_target = "gfx950";
    EQ(parse("v_cvt_pk_fp8_f32 v1, v2, v3", &o, &f, NULL), GPUCVT_OK);
    EQ(gpucvt_form_eval(f, two, 2, &r, NULL), GPUCVT_OK);
    EQ(r.lo & 0xff, 0x40); /* OCP e4m3: bias 7 */
    gpucvt_form_free(f);
    o.amd_target = NULL;
    /* Unknown names. */
    o.size = sizeof o;
    o.target = "sm_xyz";
    EQ(parse("cvt.rn.f16.f32", &o, &f, &d), GPUCVT_E_UNKNOWN_NAME);
    CHECK(strstr(gpucvt_diag_message(d), "sm_xyz") != NULL);
    gpucvt_diag_free(d);
    o.target = "sm_90";
    o.ptx_version = "9.9";
    EQ(parse("cvt.rn.f16.f32", &o, &f, NULL), GPUCVT_E_UNKNOWN_NAME);
    o.ptx_version = NULL;
    o.tile_version = "12.0";
    EQ(parse("cvt.rn.f16.f32", &o, &f, NULL), GPUCVT_E_UNKNOWN_NAME);
    o.tile_version = NULL;
    o.tile_semantics = 7;
    EQ(parse("cvt.rn.f16.f32", &o, &f, NULL), GPUCVT_E_ARGUMENT);
    o.tile_semantics = GPUCVT_TILE_SPEC;
    /* Spec semantics: ftoi of a NaN is undefined, and nothing is written. */
    EQ(parse("ftoi signed : tile<f32> -> tile<i8>", &o, &f, NULL), GPUCVT_OK);
    uint64_t nan = 0x7fc00000;
    gpucvt_u128 out = {7, 7};
    uint32_t flags = 9;
    EQ(gpucvt_form_eval(f, &nan, 1, &out, &flags), GPUCVT_E_UNDEFINED);
    CHECK(out.lo == 7 && out.hi == 7 && flags == 9);
    gpucvt_form_free(f);
    /* cr0: the rounding mode field (bits 5:4) = 11, RTZ, changes a vISA move's result:
     * 1 + 3/4 of an f16 ulp rounds up to nearest and down toward zero. */
    o.tile_semantics = 0;
    uint64_t x = 0x3f801800;
    EQ(parse("mov hf <- f", &o, &f, NULL), GPUCVT_OK);
    EQ(gpucvt_form_eval(f, &x, 1, &out, &flags), GPUCVT_OK);
    EQ(out.lo, 0x3c01);
    EQ(flags, GPUCVT_FLAG_INEXACT);
    gpucvt_form_free(f);
    o.cr0 = 3u << 4;
    EQ(parse("mov hf <- f", &o, &f, NULL), GPUCVT_OK);
    EQ(gpucvt_form_eval(f, &x, 1, &out, &flags), GPUCVT_OK);
    EQ(out.lo, 0x3c00);
    gpucvt_form_free(f);
}

static void operands_and_buffers(void) {
    gpucvt_form *f = NULL;
    EQ(parse("cvt.rs.satfinite.e4m3x4.f32", NULL, &f, NULL), GPUCVT_OK);
    EQ(gpucvt_form_dialect(f), GPUCVT_DIALECT_PTX);
    EQ(gpucvt_form_operand_count(f), 5);
    for (uint32_t i = 0; i < 5; i++) EQ(gpucvt_form_operand_bits(f, i), 32);
    EQ(gpucvt_form_operand_bits(f, 5), 0);
    EQ(gpucvt_form_result_bits(f), 32);
    EQ(gpucvt_form_result_elements(f), 4);
    uint64_t ops[6] = {0x3f800000, 0x43960000, 0xc0000000, 0x7f800000, 0, 0};
    gpucvt_u128 out = {1, 1};
    uint32_t flags = 0;
    /* Wrong counts, an operand wider than 32 bits: nothing written. */
    EQ(gpucvt_form_eval(f, ops, 4, &out, &flags), GPUCVT_E_OPERANDS);
    EQ(gpucvt_form_eval(f, ops, 6, &out, &flags), GPUCVT_E_OPERANDS);
    ops[4] = UINT64_C(1) << 32;
    EQ(gpucvt_form_eval(f, ops, 5, &out, &flags), GPUCVT_E_OPERANDS);
    CHECK(out.lo == 1 && out.hi == 1);
    ops[4] = 0;
    EQ(gpucvt_form_eval(f, ops, 5, &out, &flags), GPUCVT_OK);
    /* a = 1.0 high byte, 300 -> 288, -2.0, +inf -> 448 (satfinite). */
    EQ(out.lo, 0x3879c07e);
    EQ(out.hi, 0);
    CHECK(flags & GPUCVT_FLAG_SATURATED);
    CHECK(flags & GPUCVT_FLAG_INEXACT);
    /* Per element: element 0 is the lowest byte, f = +inf saturated to 448; a = 1.0 exact. */
    uint64_t eb[4] = {0};
    uint32_t ef[4] = {0};
    EQ(gpucvt_form_eval_elements(f, ops, 5, eb, ef, 4), GPUCVT_OK);
    EQ(eb[0], 0x7e);
    EQ(eb[3], 0x38);
    EQ(ef[0] & GPUCVT_FLAG_SATURATED, GPUCVT_FLAG_SATURATED);
    EQ(ef[3], 0);
    EQ(ef[2], GPUCVT_FLAG_INEXACT); /* 300 -> 288 */
    EQ(gpucvt_form_eval_elements(f, ops, 5, eb, NULL, 4), GPUCVT_OK);
    EQ(gpucvt_form_eval_elements(f, ops, 5, eb, ef, 3), GPUCVT_E_TOO_SMALL);
    EQ(gpucvt_form_eval_elements(f, ops, 5, NULL, ef, 4), GPUCVT_E_NULL);
    EQ(gpucvt_form_eval_elements(f, NULL, 5, eb, ef, 4), GPUCVT_E_NULL);
    EQ(gpucvt_form_eval_elements(NULL, ops, 5, eb, ef, 4), GPUCVT_E_NULL);
    EQ(gpucvt_form_eval_elements(f, ops, 4, eb, ef, 4), GPUCVT_E_OPERANDS);
    /* Lanes: too many, mask beyond the lanes, a wrong operand count. */
    EQ(gpucvt_form_eval_lanes(f, 65, 1, ops, 5, &out, NULL, NULL), GPUCVT_E_ARGUMENT);
    EQ(gpucvt_form_eval_lanes(f, 1, 2, ops, 5, &out, NULL, NULL), GPUCVT_E_ARGUMENT);
    EQ(gpucvt_form_eval_lanes(f, 1, 1, ops, 4, &out, NULL, NULL), GPUCVT_E_OPERANDS);
    EQ(gpucvt_form_eval_lanes(f, 0, 0, ops, 5, &out, NULL, NULL), GPUCVT_OK);
    /* One failing lane among good ones: its status, its bit, the others evaluated. */
    uint64_t lane_ops[10] = {0x3f800000, 0x43960000, 0xc0000000, 0x7f800000, 0,
                             0x3f800000, 0x43960000, 0xc0000000, 0x7f800000, UINT64_C(1) << 40};
    gpucvt_u128 lanes[2] = {{5, 5}, {6, 6}};
    uint64_t failed = 0;
    EQ(gpucvt_form_eval_lanes(f, 2, 3, lane_ops, 5, lanes, NULL, &failed), GPUCVT_E_OPERANDS);
    EQ(failed, 2);
    EQ(lanes[0].lo, 0x3879c07e);
    CHECK(lanes[1].lo == 6 && lanes[1].hi == 6);
    /* Spelling: a size query, too small, exact. */
    size_t len = 0;
    char buf[64];
    EQ(gpucvt_form_spelling(f, NULL, 0, &len), GPUCVT_E_TOO_SMALL);
    EQ(len, strlen("cvt.rs.satfinite.e4m3x4.f32"));
    memset(buf, 'x', sizeof buf);
    EQ(gpucvt_form_spelling(f, buf, len, &len), GPUCVT_E_TOO_SMALL);
    EQ(buf[0], 'x');
    EQ(gpucvt_form_spelling(f, buf, len + 1, NULL), GPUCVT_OK);
    CHECK(strcmp(buf, "cvt.rs.satfinite.e4m3x4.f32") == 0);
    gpucvt_form_free(f);

    /* A result wider than 128 bits: eval refuses, eval_wide needs 8 words. */
    EQ(parse("mov df <- vf", NULL, &f, NULL), GPUCVT_OK);
    EQ(gpucvt_form_dialect(f), GPUCVT_DIALECT_VISA);
    EQ(gpucvt_form_result_bits(f), 256);
    EQ(gpucvt_form_result_elements(f), 4);
    uint64_t vf = 0x38303030; /* 1.0, 1.0, 1.0, 1.5 */
    EQ(gpucvt_form_eval(f, &vf, 1, &out, NULL), GPUCVT_E_TOO_SMALL);
    EQ(gpucvt_form_eval_lanes(f, 1, 1, &vf, 1, &out, NULL, NULL), GPUCVT_E_TOO_SMALL);
    uint64_t w[5] = {9, 9, 9, 9, 9};
    EQ(gpucvt_form_eval_wide(f, &vf, 1, w, 3, NULL), GPUCVT_E_TOO_SMALL);
    EQ(w[0], 9);
    EQ(gpucvt_form_eval_wide(f, &vf, 1, w, 5, NULL), GPUCVT_OK);
    EQ(w[0], 0x3ff0000000000000);
    EQ(w[3], 0x3ff8000000000000);
    EQ(w[4], 0);
    gpucvt_form_free(f);

    /* A Tile IR tile: one operand per element. */
    EQ(parse("ftof : tile<2x2xf32> -> tile<2x2xf16>", NULL, &f, NULL), GPUCVT_OK);
    EQ(gpucvt_form_dialect(f), GPUCVT_DIALECT_TILE);
    EQ(gpucvt_form_operand_count(f), 4);
    EQ(gpucvt_form_result_elements(f), 4);
    uint64_t t[4] = {0x3f800000, 0x40000000, 0xbf800000, 0};
    EQ(gpucvt_form_eval(f, t, 3, &out, NULL), GPUCVT_E_OPERANDS);
    EQ(gpucvt_form_eval(f, t, 4, &out, NULL), GPUCVT_OK);
    EQ(out.lo, 0x0000bc0040003c00);
    gpucvt_form_free(f);
}

static void formats_and_convert(void) {
    static const char *const names[][2] = {
        {"e4m3", "e4m3"}, {"float8_e4m3fn", "e4m3"}, {"f8E4M3FN", "e4m3"}, {"Float8E4M3FN", "e4m3"},
        {"F8_E4M3", "e4m3"}, {".e4m3", "e4m3"}, {"Float8E8M0FNU", "ue8m0"}, {"float8_e8m0fnu", "ue8m0"},
        {"Float4E2M1FN", "e2m1"}, {"float4_e2m1fn", "e2m1"}, {"Float8E5M2", "e5m2"}, {"Float8E4M3FNUZ", "e4m3fnuz"},
        {"Float8E5M2FNUZ", "e5m2fnuz"}, {"Float8E4M3B11FNUZ", "e4m3b11fnuz"}, {"Float8E3M4", "e3m4"},
        {"Float8E4M3", "e4m3ieee"}, {"Float6E2M3FN", "e2m3"}, {"Float6E3M2FN", "e3m2"}, {"IEEEhalf", "f16"},
        {"IEEEsingle", "f32"}, {"IEEEdouble", "f64"}, {"BFloat", "bf16"},
        {"bfloat16", "bf16"}, {".bf16", "bf16"}, {".u8", "u8"}, {".s32", "s32"}, {"int8", "s8"},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        gpucvt_format f = {0};
        gpucvt_diag *d = NULL;
        gpucvt_status s = gpucvt_format_by_name(names[i][0], &f, &d);
        if (s != GPUCVT_OK) fprintf(stderr, "%s: %s\n", names[i][0], gpucvt_diag_message(d));
        EQ(s, GPUCVT_OK);
        CHECK(d == NULL);
        char buf[32];
        EQ(gpucvt_format_name(f, buf, sizeof buf, NULL), GPUCVT_OK);
        if (strcmp(buf, names[i][1]) != 0) fprintf(stderr, "%s is %s, expected %s\n", names[i][0], buf, names[i][1]);
        CHECK(strcmp(buf, names[i][1]) == 0);
    }
    gpucvt_format f = {0};
    gpucvt_diag *d = NULL;
    EQ(gpucvt_format_by_name("e4m3f", &f, &d), GPUCVT_E_UNKNOWN_NAME);
    EQ(f.id, 0);
    CHECK(strstr(gpucvt_diag_message(d), "did you mean \"e4m3\"") != NULL);
    gpucvt_diag_free(d);
    EQ(gpucvt_format_by_name("float", &f, &d), GPUCVT_E_UNKNOWN_NAME);
    CHECK(strstr(gpucvt_diag_message(d), "ambiguous") != NULL);
    gpucvt_diag_free(d);
    EQ(gpucvt_format_by_name("complex64", &f, NULL), GPUCVT_E_UNKNOWN_NAME);
    /* LLVM's 19-bit TF32 is not gpucvt's 32-bit tf32: refused, not mapped to a lookalike. */
    EQ(gpucvt_format_by_name("FloatTF32", &f, &d), GPUCVT_E_UNKNOWN_NAME);
    CHECK(strstr(gpucvt_diag_message(d), "not supported") != NULL);
    gpucvt_diag_free(d);
    EQ(gpucvt_format_by_name("\xff", &f, NULL), GPUCVT_E_UNKNOWN_NAME);
    /* No format: the zero value. */
    gpucvt_format none = {0}, bad = {100000};
    char buf[8];
    size_t len = 0;
    EQ(gpucvt_format_name(none, buf, sizeof buf, &len), GPUCVT_E_ARGUMENT);
    EQ(gpucvt_format_bits(bad), 0);
    gpucvt_format f32, e4m3, s8, f16, bf16;
    EQ(gpucvt_format_by_name("f32", &f32, NULL), GPUCVT_OK);
    EQ(gpucvt_format_by_name("e4m3", &e4m3, NULL), GPUCVT_OK);
    EQ(gpucvt_format_by_name("s8", &s8, NULL), GPUCVT_OK);
    EQ(gpucvt_format_by_name("f16", &f16, NULL), GPUCVT_OK);
    EQ(gpucvt_format_by_name("bf16", &bf16, NULL), GPUCVT_OK);
    EQ(gpucvt_format_bits(e4m3), 8);
    EQ(gpucvt_format_name(e4m3, buf, 4, &len), GPUCVT_E_TOO_SMALL);
    EQ(len, 4);
    EQ(gpucvt_format_name(e4m3, buf, 5, NULL), GPUCVT_OK);
    CHECK(strcmp(buf, "e4m3") == 0);

    uint64_t out = 0;
    uint32_t flags = 0;
    /* Defaults: round to nearest even, IEEE overflow (e4m3 has no inf: NaN). */
    EQ(gpucvt_convert(f32, e4m3, NULL, 0x43960000, 0, &out, &flags), GPUCVT_OK);
    EQ(out, 0x79); /* 300 -> 288 */
    EQ(flags, GPUCVT_FLAG_INEXACT);
    gpucvt_policy p;
    memset(&p, 0, sizeof p);
    p.size = sizeof p;
    p.options = GPUCVT_POLICY_SATFINITE;
    EQ(gpucvt_convert(f32, e4m3, &p, 0x7f800000, 0, &out, &flags), GPUCVT_OK);
    EQ(out, 0x7e);
    CHECK(flags & GPUCVT_FLAG_SATURATED);
    /* NaN: the canonical NaN, flagged. */
    EQ(gpucvt_convert(f32, f16, NULL, 0xffc00001, 0, &out, &flags), GPUCVT_OK);
    EQ(out, 0x7fff);
    EQ(flags & GPUCVT_FLAG_NAN_CANONICAL, GPUCVT_FLAG_NAN_CANONICAL);
    p.options = GPUCVT_POLICY_NAN_PAYLOAD;
    EQ(gpucvt_convert(bf16, f32, &p, 0xffc1, 0, &out, &flags), GPUCVT_OK);
    EQ(out, 0xffc10000);
    EQ(flags & GPUCVT_FLAG_NAN_CANONICAL, 0);
    /* Float to integer: NaN -> 0 is invalid; rounding to integral. */
    p.options = 0;
    p.rounding = GPUCVT_ROUND_RZI;
    EQ(gpucvt_convert(f32, s8, &p, 0x7fc00000, 0, &out, &flags), GPUCVT_OK);
    EQ(out, 0);
    CHECK(flags & GPUCVT_FLAG_INVALID);
    EQ(gpucvt_convert(f32, s8, &p, 0xc3480000, 0, &out, &flags), GPUCVT_OK); /* -200 -> -128 */
    EQ(out, 0x80);
    /* Stochastic: 1 + 2^-9 is a quarter of the way to the next bf16; 16 random bits. */
    p.rounding = GPUCVT_ROUND_RS;
    EQ(gpucvt_convert(f32, bf16, &p, 0x3f804000, 0x0000, &out, NULL), GPUCVT_OK);
    EQ(out, 0x3f80);
    EQ(gpucvt_convert(f32, bf16, &p, 0x3f804000, 0xc000, &out, NULL), GPUCVT_OK);
    EQ(out, 0x3f81);
    EQ(gpucvt_convert(f32, bf16, &p, 0x3f804000, 0x10000, &out, NULL), GPUCVT_E_OPERANDS);
    p.rbits_width = 65;
    EQ(gpucvt_convert(f32, bf16, &p, 0x3f804000, 0, &out, NULL), GPUCVT_E_ARGUMENT);
    /* Errors: bits wider than the source, rbits without rs, unknown rounding or option. */
    p.rbits_width = 0;
    p.rounding = GPUCVT_ROUND_RN;
    EQ(gpucvt_convert(e4m3, f32, &p, 0x100, 0, &out, NULL), GPUCVT_E_OPERANDS);
    EQ(gpucvt_convert(f32, e4m3, &p, 0, 1, &out, NULL), GPUCVT_E_OPERANDS);
    p.rounding = 10;
    EQ(gpucvt_convert(f32, e4m3, &p, 0, 0, &out, NULL), GPUCVT_E_ARGUMENT);
    p.rounding = 0;
    p.options = 1u << 10;
    EQ(gpucvt_convert(f32, e4m3, &p, 0, 0, &out, NULL), GPUCVT_E_ARGUMENT);
    p.options = 0;
    p.size = 4;
    EQ(gpucvt_convert(f32, e4m3, &p, 0, 0, &out, NULL), GPUCVT_E_ARGUMENT);
    EQ(gpucvt_convert(none, e4m3, NULL, 0, 0, &out, NULL), GPUCVT_E_ARGUMENT);
}

static void check_text(void) {
    gpucvt_diag_list *l = (gpucvt_diag_list *)1;
    gpucvt_diag *d = (gpucvt_diag *)1;
    const char *ptx = ".version 8.0\n.target sm_80\n.entry k() {\n  .reg .f32 %f;\n  .reg .b16 %h;\n  cvt.f16.f32 %h, %f;\n}\n";
    EQ(gpucvt_check_text(ptx, strlen(ptx), GPUCVT_DIALECT_PTX, NULL, NULL, NULL), GPUCVT_E_NULL);
    EQ(gpucvt_check_text(NULL, 0, GPUCVT_DIALECT_PTX, NULL, &l, &d), GPUCVT_E_NULL);
    CHECK(l == NULL);
    EQ(gpucvt_diag_status(d), GPUCVT_E_NULL);
    gpucvt_diag_free(d);
    EQ(gpucvt_check_text(ptx, strlen(ptx), 7, NULL, &l, &d), GPUCVT_E_ARGUMENT);
    CHECK(l == NULL && strstr(gpucvt_diag_message(d), "dialect 7") != NULL);
    gpucvt_diag_free(d);
    EQ(gpucvt_check_text("\xff", 1, GPUCVT_DIALECT_VISA, NULL, &l, &d), GPUCVT_E_PARSE);
    gpucvt_diag_free(d);
    /* The missing rounding: one error, at line 6, column 3; the list is owned and freed. */
    EQ(gpucvt_check_text(ptx, strlen(ptx), GPUCVT_DIALECT_PTX, NULL, &l, &d), GPUCVT_E_ILLEGAL);
    CHECK(d == NULL);
    EQ(gpucvt_diag_list_len(l), 1);
    EQ(gpucvt_diag_list_errors(l), 1);
    const gpucvt_diag *e = gpucvt_diag_list_get(l, 0);
    EQ(gpucvt_diag_line(e), 6);
    EQ(gpucvt_diag_column(e), 3);
    EQ(gpucvt_diag_severity(e), GPUCVT_SEVERITY_ERROR);
    EQ(gpucvt_diag_status(e), GPUCVT_E_ILLEGAL);
    CHECK(strcmp(gpucvt_diag_rule(e), "ptx.rounding-required") == 0);
    CHECK(gpucvt_diag_list_get(l, 1) == NULL);
    gpucvt_diag_list_free(l);
    /* A clean module: GPUCVT_OK and an empty list. */
    const char *clean = ".version 8.0\n.target sm_80\n.entry k() {\n  .reg .f32 %f;\n  .reg .b16 %h;\n  cvt.rn.f16.f32 %h, %f;\n}\n";
    EQ(gpucvt_check_text(clean, strlen(clean), GPUCVT_DIALECT_PTX, NULL, &l, NULL), GPUCVT_OK);
    EQ(gpucvt_diag_list_len(l), 0);
    gpucvt_diag_list_free(l);
    /* NULL lists: zeros, NULL, ignored. */
    EQ(gpucvt_diag_list_len(NULL), 0);
    EQ(gpucvt_diag_list_errors(NULL), 0);
    CHECK(gpucvt_diag_list_get(NULL, 0) == NULL);
    EQ(gpucvt_diag_severity(NULL), 0);
    gpucvt_diag_list_free(NULL);
}

int main(void) {
    versions();
    nulls();
    illegal_forms();
    options();
    operands_and_buffers();
    formats_and_convert();
    check_text();
    if (failures) {
        fprintf(stderr, "%d check(s) failed\n", failures);
        return 1;
    }
    puts("errors: every check passed");
    return 0;
}
