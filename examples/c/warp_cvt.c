/* A simulator's handler for cvt.rs.satfinite.e4m3x4.f32 d, a, b, e, f, rbits on a 32-lane
 * warp: the form is read once (when the simulator decodes the instruction), then every
 * execution evaluates the active lanes from the lanes' registers.
 *
 *   cc -std=c11 warp_cvt.c $(pkg-config --cflags --libs gpucvt) && ./a.out
 */
#include <gpucvt.h>

#include <stdio.h>
#include <string.h>

enum { WARP = 32, OPS = 5 }; /* a, b, e, f, rbits */

/* The warp's registers: per lane, the four f32 sources, the random bits, the destination. */
struct warp {
    uint32_t a[WARP], b[WARP], e[WARP], f[WARP], rbits[WARP];
    uint32_t d[WARP];
};

static uint32_t f32_bits(float x) {
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

/* What the simulator runs each time the warp executes the instruction. */
static int execute(const gpucvt_form *form, struct warp *w, uint32_t active) {
    uint64_t ops[WARP * OPS]; /* lane-major: lane i's operands at ops[i * OPS] */
    gpucvt_u128 out[WARP];
    uint32_t flags[WARP];
    uint64_t failed = 0;
    for (int i = 0; i < WARP; i++) {
        uint64_t *o = &ops[i * OPS];
        o[0] = w->a[i], o[1] = w->b[i], o[2] = w->e[i], o[3] = w->f[i], o[4] = w->rbits[i];
    }
    gpucvt_status s = gpucvt_form_eval_lanes(form, WARP, active, ops, OPS, out, flags, &failed);
    if (s != GPUCVT_OK) {
        fprintf(stderr, "cvt failed on lanes %#llx: %s\n", (unsigned long long)failed, gpucvt_status_str(s));
        return 1;
    }
    for (int i = 0; i < WARP; i++)
        if (active >> i & 1) w->d[i] = (uint32_t)out[i].lo; /* inactive lanes keep their d */
    return 0;
}

int main(void) {
    const char *text = "cvt.rs.satfinite.e4m3x4.f32";
    gpucvt_options opts;
    memset(&opts, 0, sizeof opts);
    opts.size = sizeof opts;
    opts.target = "sm_100a"; /* .rs needs sm_100a or later */
    gpucvt_form *form = NULL;
    gpucvt_diag *diag = NULL;
    if (gpucvt_form_parse(text, strlen(text), &opts, &form, &diag) != GPUCVT_OK) {
        fprintf(stderr, "%s: %s\n", text, gpucvt_diag_message(diag));
        gpucvt_diag_free(diag);
        return 1;
    }

    struct warp w;
    for (int i = 0; i < WARP; i++) {
        w.a[i] = f32_bits(1.0f + i / 64.0f); /* between e4m3 neighbours: rbits decide */
        w.b[i] = f32_bits(-0.3f * i);
        w.e[i] = f32_bits(1000.0f);          /* beyond 448: satfinite */
        w.f[i] = f32_bits(i / 512.0f);       /* e4m3 subnormals */
        w.rbits[i] = 0x9e3779b9u * (uint32_t)(i + 1);
        w.d[i] = 0xdeadbeef;
    }
    uint32_t active = 0x0000ffffu & ~0x10u; /* lanes 0-15 except lane 4 */
    if (execute(form, &w, active)) return 1;
    for (int i = 0; i < 8; i++) printf("lane %d: d = %08x\n", i, (unsigned)w.d[i]);
    printf("lane 16: d = %08x (inactive)\n", (unsigned)w.d[16]);
    gpucvt_form_free(form);
    return 0;
}
