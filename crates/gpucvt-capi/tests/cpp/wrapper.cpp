// include/gpucvt.hpp: RAII forms, operand views, exceptions with the diagnostic, one form
// shared by four threads. Run by the test `programs::cpp_wrapper`.
#include "gpucvt.hpp"

#include <array>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

static int failures;
#define CHECK(cond)                                                                  \
    do {                                                                             \
        if (!(cond)) {                                                               \
            std::fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond); \
            failures++;                                                              \
        }                                                                            \
    } while (0)

template <class F>
static bool throws(gpucvt_status want, F f, const char *rule = nullptr, uint32_t column = 0) {
    try {
        f();
    } catch (const gpucvt::Error &e) {
        bool ok = e.status() == want && (!rule || e.rule() == rule) && (!column || e.column() == column);
        if (!ok) std::fprintf(stderr, "got status %d rule %s column %u: %s\n", e.status(), e.rule().c_str(), e.column(), e.what());
        return ok;
    }
    return false;
}

int main() {
    // Operand views from a braced list, a std::array, a std::vector, a C array.
    const gpucvt::Form f("cvt.rn.satfinite.e4m3x2.f32");
    CHECK(f.eval({0x3f800000, 0x43960000}).lo() == 0x3879);
    std::array<uint64_t, 2> arr{0x3f800000, 0x43960000};
    std::vector<uint64_t> vec(arr.begin(), arr.end());
    uint64_t c_array[2] = {0x3f800000, 0x43960000};
    CHECK(f.eval(arr).lo() == 0x3879 && f.eval(vec).lo() == 0x3879 && f.eval(c_array).lo() == 0x3879);
    CHECK(f.eval(gpucvt::Operands(vec.data(), 2)).has(GPUCVT_FLAG_INEXACT));
    CHECK(f.spelling() == "cvt.rn.satfinite.e4m3x2.f32");
    CHECK(f.operand_count() == 2 && f.operand_bits(0) == 32 && f.result_bits() == 16);
    CHECK(f.dialect() == GPUCVT_DIALECT_PTX);

    // Moves keep one owner.
    gpucvt::Form g("mov.sat ub <- f");
    gpucvt::Form h(std::move(g));
    CHECK(g.get() == nullptr && h.eval({0x43960000}).lo() == 0xff);
    g = std::move(h);
    CHECK(g.eval({0x43960000}).has(GPUCVT_FLAG_SATURATED));

    // Exceptions carry the status and the diagnostic.
    gpucvt::Options sm80;
    sm80.target = "sm_80";
    CHECK(throws(GPUCVT_E_ILLEGAL, [&] { gpucvt::Form("cvt.rn.f32.f16", sm80); }, "ptx.rounding-illegal", 4));
    CHECK(throws(GPUCVT_E_PARSE, [] { gpucvt::Form("add.f32"); }));
    CHECK(throws(GPUCVT_E_UNKNOWN_NAME, [] {
        gpucvt::Options o;
        o.target = "sm_xyz";
        gpucvt::Form("cvt.rn.f16.f32", o);
    }));
    CHECK(throws(GPUCVT_E_OPERANDS, [&] { f.eval({0x3f800000}); }));
    gpucvt::Options spec;
    spec.tile_spec = true;
    const gpucvt::Form t("ftoi signed : tile<f32> -> tile<i8>", spec);
    CHECK(throws(GPUCVT_E_UNDEFINED, [&] { t.eval({0x7fc00000}); }));
    gpucvt::Result r;
    CHECK(t.try_eval({0x7fc00000}, r) == GPUCVT_E_UNDEFINED);
    CHECK(t.try_eval({0x42f60000}, r) == GPUCVT_OK && r.lo() == 123);
    // A string_view that is not NUL-terminated.
    std::string_view text("cvt.rn.f16.f32 and more", 14);
    CHECK(gpucvt::Form(text).eval({0x3f800000}).lo() == 0x3c00);

    // Lanes: the failed mask, inactive lanes untouched, a too-short operand view refused.
    std::array<uint64_t, 3> lane_ops{0x3f800000, 0x40000000, uint64_t(1) << 40};
    const gpucvt::Form half("cvt.rn.f16.f32");
    std::array<gpucvt_u128, 3> out{{{7, 7}, {7, 7}, {7, 7}}};
    CHECK(half.eval_lanes(3, 0b101, lane_ops, out.data()) == 0b100);
    CHECK(out[0].lo == 0x3c00 && out[1].lo == 7 && out[2].lo == 7);
    CHECK(throws(GPUCVT_E_TOO_SMALL, [&] { half.eval_lanes(4, 1, lane_ops, out.data()); }));
    CHECK(throws(GPUCVT_E_ARGUMENT, [&] { half.eval_lanes(2, 0b100, lane_ops, out.data()); }));

    // Formats and the stateless conversion.
    gpucvt::Format e4m3("Float8E4M3FN"), f32(".f32");
    CHECK(e4m3.name() == "e4m3" && e4m3.bits() == 8);
    CHECK(gpucvt::convert(f32, e4m3, 0x43960000).lo() == 0x79);
    CHECK(gpucvt::convert(f32, e4m3, 0x7f800000, gpucvt::policy(GPUCVT_ROUND_RN, GPUCVT_POLICY_SATFINITE)).lo() == 0x7e);
    CHECK(throws(GPUCVT_E_UNKNOWN_NAME, [] { gpucvt::Format("e4m3f"); }));

    // Four threads share one form.
    const gpucvt::Form x4("cvt.rs.satfinite.e2m1x4.f32");
    std::vector<std::array<uint64_t, 5>> rows(4096);
    uint64_t s = 1;
    for (auto &row : rows)
        for (auto &w : row) w = (s = s * 6364136223846793005u + 1442695040888963407u) >> 32;
    std::vector<uint64_t> alone;
    for (auto &row : rows) alone.push_back(x4.eval(row).lo());
    std::vector<std::vector<uint64_t>> got(4);
    std::vector<std::thread> threads;
    for (int k = 0; k < 4; k++)
        threads.emplace_back([&, k] {
            for (auto &row : rows) got[k].push_back(x4.eval(row).lo());
        });
    for (auto &th : threads) th.join();
    for (auto &g2 : got) CHECK(g2 == alone);

    // A whole module checked: the missing rounding at line 6, and a warning-free clean one.
    const char *bad = ".version 8.0\n.target sm_80\n.entry k() {\n  .reg .f32 %f;\n  .reg .b16 %h;\n"
                      "  cvt.f16.f32 %h, %f;\n}\n";
    std::vector<gpucvt::Diagnostic> ds = gpucvt::check(bad, GPUCVT_DIALECT_PTX);
    CHECK(ds.size() == 1 && ds[0].line == 6 && ds[0].column == 3 && ds[0].error);
    CHECK(ds.size() == 1 && ds[0].rule == "ptx.rounding-required" && !ds[0].message.empty());
    std::string clean(bad);
    clean.replace(clean.find("cvt.f16"), 7, "cvt.rn.f16");
    CHECK(gpucvt::check(clean, GPUCVT_DIALECT_PTX).empty());
    CHECK(throws(GPUCVT_E_ARGUMENT, [&] { gpucvt::check(clean, 9); }));
    CHECK(throws(GPUCVT_E_UNKNOWN_NAME, [&] {
        gpucvt::Options o;
        o.target = "sm_xyz";
        gpucvt::check(clean, GPUCVT_DIALECT_PTX, o);
    }));

    if (failures) {
        std::fprintf(stderr, "%d check(s) failed\n", failures);
        return 1;
    }
    std::puts("cpp wrapper: every check passed");
    return 0;
}
