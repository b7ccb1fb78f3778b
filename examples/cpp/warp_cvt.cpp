// The warp handler of examples/c/warp_cvt.c with the C++ wrapper: cvt.rs.satfinite.e4m3x4.f32
// on a 32-lane warp with an active mask, per-lane operands and random bits.
//
//   c++ -std=c++17 warp_cvt.cpp $(pkg-config --cflags --libs gpucvt) && ./a.out
#include <gpucvt.hpp>

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstring>

constexpr int kWarp = 32;

struct Warp {
    std::array<uint32_t, kWarp> a, b, e, f, rbits, d;
};

static uint32_t f32_bits(float x) {
    uint32_t u;
    std::memcpy(&u, &x, sizeof u);
    return u;
}

// What the simulator runs each time the warp executes the instruction.
static void execute(const gpucvt::Form &form, Warp &w, uint32_t active) {
    std::array<uint64_t, kWarp * 5> ops;  // lane-major: a, b, e, f, rbits per lane
    for (int i = 0; i < kWarp; i++) {
        uint64_t *o = &ops[i * 5];
        o[0] = w.a[i], o[1] = w.b[i], o[2] = w.e[i], o[3] = w.f[i], o[4] = w.rbits[i];
    }
    std::array<gpucvt_u128, kWarp> out{};
    uint64_t failed = form.eval_lanes(kWarp, active, ops, out.data());
    if (failed != 0) throw gpucvt::Error(GPUCVT_E_OPERANDS, "some lanes failed");
    for (int i = 0; i < kWarp; i++)
        if (active >> i & 1) w.d[i] = static_cast<uint32_t>(out[i].lo);  // inactive lanes keep d
}

int main() {
    try {
        gpucvt::Options opts;
        opts.target = "sm_100a";
        const gpucvt::Form form("cvt.rs.satfinite.e4m3x4.f32", opts);
        Warp w;
        for (int i = 0; i < kWarp; i++) {
            w.a[i] = f32_bits(1.0f + i / 64.0f);
            w.b[i] = f32_bits(-0.3f * i);
            w.e[i] = f32_bits(1000.0f);
            w.f[i] = f32_bits(i / 512.0f);
            w.rbits[i] = 0x9e3779b9u * static_cast<uint32_t>(i + 1);
            w.d[i] = 0xdeadbeef;
        }
        execute(form, w, 0x0000ffffu & ~0x10u);
        for (int i = 0; i < 8; i++) std::printf("lane %d: d = %08x\n", i, static_cast<unsigned>(w.d[i]));
        std::printf("lane 16: d = %08x (inactive)\n", static_cast<unsigned>(w.d[16]));
    } catch (const gpucvt::Error &e) {
        std::fprintf(stderr, "gpucvt: %s (status %d, rule %s)\n", e.what(), e.status(), e.rule().c_str());
        return 1;
    }
    return 0;
}
