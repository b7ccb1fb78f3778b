/* Evaluates rows of instructions through libgpucvt, for the test `c::` to compare with
 * `gpucvt eval --batch` on the same rows.
 *
 * Each input line: target, PTX version, cr0 (hex), Tile IR semantics (0 or 1), the
 * instruction text, the operands (0x hex, separated by spaces), separated by tabs; "-" is
 * NULL. Each output line: the result as the batch evaluator writes it (0x hex padded to the
 * result's width; Tile IR: each element padded to its width, separated by spaces), or
 * `error: MESSAGE` for a text that does not parse, `error: undefined` and `error: status N`
 * for evaluations that fail; then a tab and the flags in decimal.
 *
 * Every row is also evaluated through gpucvt_form_eval (when the result fits 128 bits) and
 * gpucvt_form_eval_lanes (three lanes, the middle one inactive), which must agree with
 * gpucvt_form_eval_wide; a disagreement aborts. */
#include "gpucvt.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DIE(...) do { fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); exit(2); } while (0)

static uint64_t bits_at(const uint64_t *w, size_t words, unsigned shift, unsigned width) {
    unsigned i = shift / 64, b = shift % 64;
    uint64_t v = i < words ? w[i] >> b : 0;
    if (b && i + 1 < words) v |= w[i + 1] << (64 - b);
    return width >= 64 ? v : v & ((UINT64_C(1) << width) - 1);
}

static void put_hex(const uint64_t *w, size_t words, unsigned shift, unsigned bits) {
    unsigned digits = bits ? (bits + 3) / 4 : 1;
    fputs("0x", stdout);
    for (unsigned d = digits; d-- > 0;) {
        unsigned nibble = (unsigned)bits_at(w, words, shift + 4 * d, 4);
        if (4 * d + 4 > bits && bits % 4) nibble &= (1u << (bits % 4)) - 1;
        fputc("0123456789abcdef"[nibble], stdout);
    }
}

static void or_bits(uint64_t *w, size_t words, unsigned shift, uint64_t v) {
    unsigned i = shift / 64, b = shift % 64;
    if (i < words) w[i] |= v << b;
    if (b && i + 1 < words) w[i + 1] |= v >> (64 - b);
}

/* gpucvt_form_eval_elements must give the result's elements, side by side equal to the
 * whole result, with flags whose union is the evaluation's. */
static void check_elements(const gpucvt_form *f, const uint64_t *ops, size_t n, gpucvt_status s, const uint64_t *wide,
                           size_t words, uint32_t flags, const char *text) {
    unsigned k = gpucvt_form_result_elements(f), rbits = gpucvt_form_result_bits(f), w = k ? rbits / k : 0;
    uint64_t *eb = calloc(k + 1, sizeof *eb), *back = calloc(words + 1, sizeof *back);
    uint32_t *ef = calloc(k + 1, sizeof *ef);
    eb[k] = 0x5a5a;
    gpucvt_status se = gpucvt_form_eval_elements(f, ops, n, eb, ef, k + 1);
    if (se != s) DIE("eval_elements %d, eval_wide %d: %s", se, s, text);
    if (k > 0 && gpucvt_form_eval_elements(f, ops, n, eb, ef, k - 1) != GPUCVT_E_TOO_SMALL)
        DIE("eval_elements took too small arrays: %s", text);
    if (s == GPUCVT_OK) {
        uint32_t all = 0;
        for (unsigned i = 0; i < k; i++) {
            or_bits(back, words, i * w, eb[i]);
            all |= ef[i];
        }
        if (eb[k] != 0x5a5a) DIE("eval_elements wrote past the elements: %s", text);
        if (memcmp(back, wide, words * sizeof *back) != 0 || all != flags) DIE("eval_elements differ: %s", text);
    }
    free(eb), free(ef), free(back);
}

static const char *field(char **rest) {
    char *s = *rest, *tab = strchr(s, '\t');
    if (tab) { *tab = 0; *rest = tab + 1; } else { *rest = s + strlen(s); }
    return strcmp(s, "-") == 0 ? NULL : s;
}

int main(void) {
    static char line[1 << 16];
    while (fgets(line, sizeof line, stdin)) {
        line[strcspn(line, "\n")] = 0;
        char *rest = line;
        gpucvt_options o;
        memset(&o, 0, sizeof o);
        o.size = sizeof o;
        o.target = field(&rest);
        o.ptx_version = field(&rest);
        const char *cr0 = field(&rest), *sem = field(&rest);
        o.cr0 = cr0 ? (uint32_t)strtoul(cr0, NULL, 16) : 0;
        /* An AMD row: its gfx target in the target column, MODE in cr0's. */
        if (o.target && strncmp(o.target, "gfx", 3) == 0) {
            o.amd_target = o.target, o.target = NULL;
            o.amd_mode = o.cr0, o.cr0 = 0;
        }
        o.tile_semantics = sem ? (uint32_t)atoi(sem) : 0;
        const char *text = field(&rest);
        if (!text) DIE("no instruction in a row");
        char *opstext = rest;

        gpucvt_form *f = NULL;
        gpucvt_diag *d = NULL;
        gpucvt_status s = gpucvt_form_parse(text, strlen(text), &o, &f, &d);
        if (s != GPUCVT_OK) {
            if (f || !d || gpucvt_diag_status(d) != s) DIE("parse failure without its diagnostic: %s", text);
            printf("error: %s\t0\n", gpucvt_diag_message(d));
            gpucvt_diag_free(d);
            continue;
        }
        if (d) DIE("a diagnostic on success: %s", text);

        size_t n = 0, cap = 8;
        uint64_t *ops = malloc(cap * sizeof *ops);
        for (char *tok = strtok(opstext, " "); tok; tok = strtok(NULL, " ")) {
            if (n == cap) ops = realloc(ops, (cap *= 2) * sizeof *ops);
            ops[n++] = strtoull(tok, NULL, 16);
        }
        unsigned rbits = gpucvt_form_result_bits(f);
        size_t words = (rbits + 63) / 64;
        uint64_t *wide = calloc(words + 1, sizeof *wide);
        uint32_t flags = 0;
        s = gpucvt_form_eval_wide(f, ops, n, wide, words + 1, &flags);

        check_elements(f, ops, n, s, wide, words, flags, text);
        if (rbits <= 128) {
            gpucvt_u128 one = {0xdead, 0xbeef};
            uint32_t one_flags = 0xdead;
            gpucvt_status s1 = gpucvt_form_eval(f, ops, n, &one, &one_flags);
            if (s1 != s) DIE("eval %d, eval_wide %d: %s", s1, s, text);
            if (s == GPUCVT_OK && (one.lo != wide[0] || (words > 1 && one.hi != wide[1]) || one_flags != flags))
                DIE("eval and eval_wide differ: %s", text);
            /* Three lanes with the same operands, the middle one inactive. */
            uint64_t *lane_ops = malloc((3 * n + 1) * sizeof *lane_ops);
            for (int l = 0; l < 3; l++) memcpy(lane_ops + l * n, ops, n * sizeof *ops);
            gpucvt_u128 lanes[3] = {{1, 1}, {2, 2}, {3, 3}};
            uint32_t lane_flags[3] = {7, 7, 7};
            uint64_t failed = 42;
            gpucvt_status sl = gpucvt_form_eval_lanes(f, 3, 5, lane_ops, n, lanes, lane_flags, &failed);
            if (sl != s && !(s != GPUCVT_OK && sl == GPUCVT_E_OPERANDS)) DIE("eval_lanes %d, eval %d: %s", sl, s, text);
            if (lanes[1].lo != 2 || lanes[1].hi != 2 || lane_flags[1] != 7) DIE("an inactive lane was written: %s", text);
            if (s == GPUCVT_OK) {
                if (failed != 0) DIE("failed lanes on success: %s", text);
                for (int l = 0; l < 3; l += 2)
                    if (lanes[l].lo != one.lo || lanes[l].hi != one.hi || lane_flags[l] != flags)
                        DIE("lane %d differs from eval: %s", l, text);
            } else if (sl != GPUCVT_E_OPERANDS && (failed != 5 || lanes[0].lo != 1 || lane_flags[2] != 7)) {
                DIE("failed lanes not left untouched: %s", text);
            }
            free(lane_ops);
        }

        if (s == GPUCVT_OK) {
            if (wide[words] != 0) DIE("eval_wide wrote past the result: %s", text);
            if (gpucvt_form_dialect(f) == GPUCVT_DIALECT_TILE) {
                unsigned k = gpucvt_form_result_elements(f), w = k ? rbits / k : 0;
                for (unsigned i = 0; i < k; i++) {
                    if (i) fputc(' ', stdout);
                    put_hex(wide, words, i * w, w);
                }
            } else {
                put_hex(wide, words, 0, rbits);
            }
            printf("\t%" PRIu32 "\n", flags);
        } else if (s == GPUCVT_E_UNDEFINED) {
            printf("error: undefined\t0\n");
        } else {
            printf("error: status %d\t0\n", (int)s);
        }
        free(ops);
        free(wide);
        gpucvt_form_free(f);
    }
    return 0;
}
