/*
 * gpucvt for C++17: a header-only wrapper over gpucvt.h.
 *
 *   gpucvt::Form f("cvt.rn.satfinite.e4m3x2.f32");           // read and checked once
 *   gpucvt::Result r = f.eval({0x3f800000, 0x43960000});     // r.lo() == 0x3879
 *
 * Forms are RAII handles (movable, not copyable), immutable after construction and safe to
 * share between threads. Failures throw gpucvt::Error, carrying the status and, for a text
 * that does not parse or is not legal, the diagnostic's rule, line, column and message.
 * Operands are passed as gpucvt::Operands, a read-only view of contiguous uint64_t (a
 * std::vector, a std::array, a C array, or a pointer and a count), or to eval as a braced
 * list. check() runs the whole-file checker over a PTX module, vISA assembly or Tile IR
 * text and returns its diagnostics.
 */
#ifndef GPUCVT_HPP
#define GPUCVT_HPP

#include "gpucvt.h"

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gpucvt {

/* A failed call: the status, and the diagnostic when the library gave one. */
class Error : public std::runtime_error {
public:
    Error(gpucvt_status status, const std::string &message, std::string rule = {}, uint32_t line = 0,
          uint32_t column = 0)
        : std::runtime_error(message), status_(status), rule_(std::move(rule)), line_(line), column_(column) {}

    gpucvt_status status() const noexcept { return status_; }
    /* The checker's rule id (empty when the error comes from no rule). */
    const std::string &rule() const noexcept { return rule_; }
    /* 1-based position in the text; 0 when there is none. */
    uint32_t line() const noexcept { return line_; }
    uint32_t column() const noexcept { return column_; }

private:
    gpucvt_status status_;
    std::string rule_;
    uint32_t line_, column_;
};

namespace detail {
/* Throws for a failed status; takes ownership of (and frees) the diagnostic. Call it after
 * the call that fills `diag` (not with that call as an argument: the order in which function
 * arguments are evaluated is unspecified). */
inline void check(gpucvt_status status, gpucvt_diag *diag = nullptr) {
    if (status == GPUCVT_OK) {
        gpucvt_diag_free(diag);
        return;
    }
    if (diag == nullptr) throw Error(status, gpucvt_status_str(status));
    Error e(status, gpucvt_diag_message(diag), gpucvt_diag_rule(diag), gpucvt_diag_line(diag),
            gpucvt_diag_column(diag));
    gpucvt_diag_free(diag);
    throw e;
}
}  // namespace detail

/* A read-only view of contiguous operand words (what C++20 calls std::span<const uint64_t>). */
class Operands {
public:
    constexpr Operands(const uint64_t *data, size_t size) noexcept : data_(data), size_(size) {}
    template <size_t N>
    constexpr Operands(const uint64_t (&array)[N]) noexcept : data_(array), size_(N) {}
    /* Any contiguous container of uint64_t: std::vector, std::array, … */
    template <class C, class = decltype(std::declval<const C &>().data()),
              class = decltype(std::declval<const C &>().size())>
    constexpr Operands(const C &c) noexcept : data_(c.data()), size_(c.size()) {}

    constexpr const uint64_t *data() const noexcept { return data_; }
    constexpr size_t size() const noexcept { return size_; }

private:
    const uint64_t *data_;
    size_t size_;
};

/* One evaluation's result (up to 128 bits, element 0 lowest) and its GPUCVT_FLAG_* bits. */
struct Result {
    gpucvt_u128 bits{0, 0};
    uint32_t flags = 0;

    uint64_t lo() const noexcept { return bits.lo; }
    uint64_t hi() const noexcept { return bits.hi; }
    bool has(uint32_t flag) const noexcept { return (flags & flag) != 0; }
};

/* What a form is read and checked for; empty strings mean the defaults. */
struct Options {
    std::string target;       /* "sm_90a"; empty: every form legal on some target */
    std::string ptx_version;  /* "9.5"; empty: the newest */
    uint32_t cr0 = 0;         /* vISA's control register */
    bool tile_spec = false;   /* Tile IR: the specification's semantics instead of tileiras' */
    std::string tile_version; /* "13.4"; empty: the newest */
    std::string amd_target;   /* "gfx950": needed for AMD instructions */
    uint32_t amd_mode = 0;    /* AMD's MODE register (FP16_OVFL is bit 23) */
    uint64_t amd_old = 0;     /* AMD: the destination's old value, kept by partial writes */
};

/* An instruction read and checked once: a PTX cvt / cvt.pack form, a vISA mov or a Tile IR
 * conversion op. */
namespace detail {
/* The C options of `opts` (its strings must outlive the result). */
inline gpucvt_options c_options(const Options &opts) noexcept {
    gpucvt_options o{};
    o.size = sizeof o;
    o.target = opts.target.empty() ? nullptr : opts.target.c_str();
    o.ptx_version = opts.ptx_version.empty() ? nullptr : opts.ptx_version.c_str();
    o.cr0 = opts.cr0;
    o.tile_semantics = opts.tile_spec ? GPUCVT_TILE_SPEC : GPUCVT_TILE_TILEIRAS;
    o.tile_version = opts.tile_version.empty() ? nullptr : opts.tile_version.c_str();
    o.amd_target = opts.amd_target.empty() ? nullptr : opts.amd_target.c_str();
    o.amd_mode = opts.amd_mode;
    o.amd_old = opts.amd_old;
    return o;
}
}  // namespace detail

class Form {
public:
    explicit Form(std::string_view text, const Options &opts = {}) {
        gpucvt_options o = detail::c_options(opts);
        gpucvt_diag *diag = nullptr;
        gpucvt_status s = gpucvt_form_parse(text.data(), text.size(), &o, &form_, &diag);
        detail::check(s, diag);
    }
    Form(Form &&other) noexcept : form_(std::exchange(other.form_, nullptr)) {}
    Form &operator=(Form &&other) noexcept {
        if (this != &other) {
            gpucvt_form_free(form_);
            form_ = std::exchange(other.form_, nullptr);
        }
        return *this;
    }
    Form(const Form &) = delete;
    Form &operator=(const Form &) = delete;
    ~Form() { gpucvt_form_free(form_); }

    /* GPUCVT_DIALECT_PTX, _VISA, _TILE or _AMD. */
    uint32_t dialect() const noexcept { return gpucvt_form_dialect(form_); }
    uint32_t operand_count() const noexcept { return gpucvt_form_operand_count(form_); }
    uint32_t operand_bits(uint32_t i) const noexcept { return gpucvt_form_operand_bits(form_, i); }
    uint32_t result_bits() const noexcept { return gpucvt_form_result_bits(form_); }
    uint32_t result_elements() const noexcept { return gpucvt_form_result_elements(form_); }

    /* The canonical spelling (cvt.rn.f16.f32, mov.sat hf <- f). */
    std::string spelling() const {
        size_t len = 0;
        gpucvt_status s = gpucvt_form_spelling(form_, nullptr, 0, &len);
        if (s != GPUCVT_E_TOO_SMALL) detail::check(s);
        std::string out(len + 1, '\0');
        detail::check(gpucvt_form_spelling(form_, &out[0], out.size(), nullptr));
        out.resize(len);
        return out;
    }

    /* One lane; throws Error (GPUCVT_E_OPERANDS, GPUCVT_E_UNDEFINED, …). */
    Result eval(Operands ops) const {
        Result r;
        detail::check(gpucvt_form_eval(form_, ops.data(), ops.size(), &r.bits, &r.flags));
        return r;
    }

    Result eval(std::initializer_list<uint64_t> ops) const { return eval(Operands(ops.begin(), ops.size())); }

    /* One lane, without exceptions: the status, and *out only on success. */
    gpucvt_status try_eval(Operands ops, Result &out) const noexcept {
        return gpucvt_form_eval(form_, ops.data(), ops.size(), &out.bits, &out.flags);
    }
    gpucvt_status try_eval(std::initializer_list<uint64_t> ops, Result &out) const noexcept {
        return try_eval(Operands(ops.begin(), ops.size()), out);
    }

    /* A warp: lane i of active_mask takes operand_count() words from ops at i *
     * operand_count() and writes out[i] and (when flags is not null) flags[i]; inactive and
     * failing lanes are left untouched. Returns the mask of the lanes that failed (their
     * results undefined, operands too wide); throws for arguments that fit no lane. */
    uint64_t eval_lanes(uint32_t n_lanes, uint64_t active_mask, Operands ops, gpucvt_u128 *out,
                        uint32_t *flags = nullptr) const {
        if (ops.size() < size_t(n_lanes) * operand_count())
            throw Error(GPUCVT_E_TOO_SMALL, "fewer operand words than n_lanes * operand_count()");
        uint64_t failed = 0;
        gpucvt_status s =
            gpucvt_form_eval_lanes(form_, n_lanes, active_mask, ops.data(), operand_count(), out, flags, &failed);
        if (s != GPUCVT_OK && failed == 0) detail::check(s);
        return failed;
    }

    const gpucvt_form *get() const noexcept { return form_; }

private:
    gpucvt_form *form_ = nullptr;
};

/* One diagnostic of check(): 1-based position, error or warning, the rule and the message. */
struct Diagnostic {
    uint32_t line = 0, column = 0;
    bool error = true;
    std::string rule, message;
};

/* A whole source text checked as `gpucvt check` checks it (gpucvt_check_text): dialect
 * GPUCVT_DIALECT_PTX (a module), _VISA (assembly) or _TILE (a .mlir file); for PTX, an empty
 * target or version means the module's own. Returns every diagnostic, errors and warnings,
 * in order; throws Error only when the text could not be checked (not UTF-8, an unknown
 * dialect or name). */
inline std::vector<Diagnostic> check(std::string_view text, uint32_t dialect, const Options &opts = {}) {
    gpucvt_options o = detail::c_options(opts);
    gpucvt_diag_list *list = nullptr;
    gpucvt_diag *diag = nullptr;
    gpucvt_status s = gpucvt_check_text(text.data(), text.size(), dialect, &o, &list, &diag);
    if (list == nullptr) detail::check(s == GPUCVT_OK ? GPUCVT_E_PANIC : s, diag);
    std::vector<Diagnostic> out;
    out.reserve(gpucvt_diag_list_len(list));
    for (size_t i = 0; i < gpucvt_diag_list_len(list); i++) {
        const gpucvt_diag *d = gpucvt_diag_list_get(list, i);
        out.push_back({gpucvt_diag_line(d), gpucvt_diag_column(d), gpucvt_diag_severity(d) == GPUCVT_SEVERITY_ERROR,
                       gpucvt_diag_rule(d), gpucvt_diag_message(d)});
    }
    gpucvt_diag_list_free(list);
    return out;
}

/* A number format, by any name gpucvt accepts (Float8E4M3FN, float8_e4m3fn, f8E4M3FN, .e4m3). */
class Format {
public:
    explicit Format(std::string_view name) {
        std::string n(name);
        gpucvt_diag *diag = nullptr;
        gpucvt_status s = gpucvt_format_by_name(n.c_str(), &format_, &diag);
        detail::check(s, diag);
    }
    uint32_t bits() const noexcept { return gpucvt_format_bits(format_); }
    std::string name() const {
        char buf[64];
        detail::check(gpucvt_format_name(format_, buf, sizeof buf, nullptr));
        return buf;
    }
    gpucvt_format raw() const noexcept { return format_; }

private:
    gpucvt_format format_{0};
};

/* A gpucvt_policy with its size set: rounding GPUCVT_ROUND_*, options GPUCVT_POLICY_* bits. */
inline gpucvt_policy policy(uint32_t rounding = GPUCVT_ROUND_RN, uint32_t options = 0, uint32_t rbits_width = 0,
                            int32_t scale = 0) noexcept {
    gpucvt_policy p{};
    p.size = sizeof p;
    p.rounding = rounding;
    p.rbits_width = rbits_width;
    p.options = options;
    p.scale = scale;
    return p;
}

/* One encoding converted (gpucvt_convert): the result in lo(), its flags. */
inline Result convert(const Format &src, const Format &dst, uint64_t bits, const gpucvt_policy &p = policy(),
                      uint64_t rbits = 0) {
    Result r;
    detail::check(gpucvt_convert(src.raw(), dst.raw(), &p, bits, rbits, &r.bits.lo, &r.flags));
    return r;
}

}  // namespace gpucvt

#endif /* GPUCVT_HPP */
