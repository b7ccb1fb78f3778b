// tile-version: 13.3
// trunci overflow flags, i4, the omitted dialect prefix, literal forms (tile-ir.md §4,
// `ops.mlir`, `syntax_omit_dialect_prefix.mlir`, `dense_attr.mlir`).

module @ops {
  testing$func @trunc(%arg0: tile<i16>, %arg1: tile<8xi8>) -> tile<i8> {
    // CHECK: %0 = trunci %arg0 overflow<no_signed_wrap> : tile<i16> -> tile<i8>
    %0 = trunci %arg0 overflow<no_signed_wrap> : tile<i16> -> tile<i8>
    // CHECK: %1 = trunci %arg0 overflow<no_unsigned_wrap> : tile<i16> -> tile<i8>
    %1 = trunci %arg0 overflow<no_unsigned_wrap> : tile<i16> -> tile<i8>
    // CHECK: %2 = trunci %arg0 overflow<no_wrap> : tile<i16> -> tile<i8>
    %2 = trunci %arg0 overflow<no_wrap> : tile<i16> -> tile<i8>
    // CHECK: %3 = trunci %arg0 : tile<i16> -> tile<i8>
    %3 = trunci %arg0 overflow<none> : tile<i16> -> tile<i8>
    // CHECK: %4 = trunci %arg1 : tile<8xi8> -> tile<8xi4>
    %4 = trunci %arg1 : tile<8xi8> -> tile<8xi4>
    %5 = exti %4 signed : tile<8xi4> -> tile<8xi16>
    %6 = exti %4 unsigned : tile<8xi4> -> tile<8xi32>
    %7 = trunci %arg0 {some_attr} : tile<i16> -> tile<i8>
    return %3 : tile<i8>
  }
  entry @literals() optimization_hints=<default = {}> {
    %nan = constant <f32: 0x7FC00000> : tile<f32>
    %inf = constant <f32: 0x7F800000> : tile<4xf32>
    %nz = constant <f32: -0.0> : tile<f32>
    %big = constant <f16: 70000.0> : tile<f16>
    %h = constant <i16: 0xFFFF> : tile<i16>
    %bools = constant <i1: [true, false, true, false]> : tile<4xi1>
    %ints = constant <i8: [[-128, 255], [0, 1]]> : tile<2x2xi8>
    %e = constant <f64: 1.0e3> : tile<f64>
    %g = cuda_tile.get_global @x : tile<ptr<f32>>
    %l, %tok = load_ptr_tko weak %g : tile<ptr<f32>> -> tile<f32>, token
    %k = ftof %nan : tile<f32> -> tile<f16>
  }
}
