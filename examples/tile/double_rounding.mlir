// The double roundings of tile-ir.md §3.4, as constants: tileiras converts through an
// intermediate format (f16 or f32) and rounds twice where the specification rounds once.
//   gpucvt run examples/tile/double_rounding.mlir                      (tileiras, sm_100a)
//   gpucvt run examples/tile/double_rounding.mlir --semantics spec
cuda_tile.module @double_rounding {
  entry @vectors() {
    // 4609 = 2^12 + 2^9 + 1; 16785409 = 2^24 + 2^13 + 1
    %i = constant <i32: [4609, 16785409]> : tile<2xi32>
    %e = itof %i signed : tile<2xi32> -> tile<2xf8E5M2>
    %t = itof %i signed : tile<2xi32> -> tile<2xtf32>
    // 1.0625 + 2^-40, 1 + 2^-11 + 2^-40, 1 + 2^-8 + 2^-40, +inf
    %d = constant <f64: [0x3FF1000000001000, 0x3FF0020000001000, 0x3FF0100000001000, 0x7FF0000000000000]> : tile<4xf64>
    %q = ftof %d : tile<4xf64> -> tile<4xf8E4M3FN>
    %x = ftof %d : tile<4xf64> -> tile<4xtf32>
    %b = ftof %d : tile<4xf64> -> tile<4xbf16>
    %k = ftoi %d signed : tile<4xf64> -> tile<4xi32>
    return
  }
}
