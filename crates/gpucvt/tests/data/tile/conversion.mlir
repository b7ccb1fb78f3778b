// tile-version: 13.3
// Valid conversions (after tile-ir.md §4, cuda-tile `conversion.mlir`): every file must
// read and verify without diagnostics, print, and read back to the same ops. `// CHECK:`
// lines must appear, in order, in the printed conversion ops.

cuda_tile.module @kernels {
  cuda_tile.entry @bitcast() {
    %c_i8 = constant <i8: [1, 2, 3, 4]> : tile<4xi8>
    %c_i16 = constant <i16: 0xFFFF> : !cuda_tile.tile<2x2xi16>
    %c_i32 = constant <i32: 42> : tile<i32>
    %c_i64 = constant <i64: -1> : tile<4xi64>
    // CHECK: %b0 = bitcast %c_i8 : tile<4xi8> -> tile<4xi8>
    %b0 = bitcast %c_i8 : tile<4xi8> -> tile<4xi8>
    // CHECK: %b1 = bitcast %c_i8 : tile<4xi8> -> tile<4xf8E4M3FN>
    %b1 = cuda_tile.bitcast %c_i8 : !cuda_tile.tile<4xi8> -> !cuda_tile.tile<4xf8E4M3FN>
    %b2 = bitcast %c_i8 : tile<4xi8> -> tile<4xf8E5M2>
    %b3 = bitcast %c_i8 : tile<4xi8> -> tile<4xf8E8M0FNU>
    %b4 = bitcast %c_i16 : tile<2x2xi16> -> tile<2x2xf16>
    %b5 = bitcast %c_i16 : tile<2x2xi16> -> tile<2x2xbf16>
    %b6 = bitcast %b4 : tile<2x2xf16> -> tile<2x2xbf16>
    %b7 = bitcast %c_i32 : tile<i32> -> tile<f32>
    %b8 = bitcast %c_i64 : tile<4xi64> -> tile<4xf64>
    // CHECK: %p0 = int_to_ptr %c_i64 : tile<4xi64> -> tile<4xptr<i8>>
    %p0 = int_to_ptr %c_i64 : tile<4xi64> -> tile<4xptr<i8>>
    %p1 = ptr_to_ptr %p0 : tile<4xptr<i8>> -> tile<4xptr<f64>>
    %p2 = ptr_to_int %p1 : !cuda_tile.tile<4x!cuda_tile.ptr<f64>> -> tile<4xi64>
    %p3 = ptr_to_ptr %p0 : tile<4xptr<i8>> -> tile<4xptr<i8>>
    return
  }

  entry @ftof() {
    %c_f16 = constant <f16: 5.0> : tile<f16>
    %c_t = constant <f32: [[1.0, 2.0], [3.0, 4.0]]> : tile<2x2xf32>
    %c_f4 = constant <f4E2M1FN: [0x2, 0x4]> : tile<2xf4E2M1FN>
    %c_f64 = constant <f64: 2.7182818284590451> : tile<f64>
    // CHECK: %f0 = ftof %c_f16 : tile<f16> -> tile<f32>
    %f0 = ftof %c_f16 : tile<f16> -> tile<f32>
    %f1 = ftof %f0 : tile<f32> -> tile<f64>
    %f2 = ftof %c_f64 : tile<f64> -> tile<bf16>
    %f3 = ftof %c_t : tile<2x2xf32> -> tile<2x2xf8E4M3FN>
    %f4 = ftof %f3 : tile<2x2xf8E4M3FN> -> tile<2x2xf8E5M2>
    %f5 = ftof %c_f4 : tile<2xf4E2M1FN> -> tile<2xf16>
    %f6 = ftof %c_t : tile<2x2xf32> -> tile<2x2xtf32>
    // CHECK: %f7 = ftof %c_t rounding<zero> : tile<2x2xf32> -> tile<2x2xf8E8M0FNU>
    %f7 = ftof %c_t rounding<zero> : tile<2x2xf32> -> tile<2x2xf8E8M0FNU>
    %f8 = ftof %c_t rounding<positive_inf> : tile<2x2xf32> -> tile<2x2xf8E8M0FNU>
    // The default mode prints as nothing.
    // CHECK: %f9 = ftof %c_f16 : tile<f16> -> tile<bf16>
    %f9 = ftof %c_f16 rounding<nearest_even> : tile<f16> -> tile<bf16>
    %f10 = ftof %f7 : tile<2x2xf8E8M0FNU> -> tile<2x2xf32>
    %f11 = ftof %c_t  : tile<2x2xf32> -> tile<2x2xf4E2M1FN>
  }

  entry @ftoi() {
    %c5_f16 = constant <f16: 5.0> : !cuda_tile.tile<f16>
    %c_tensor_f32 = constant <f32: [[1.0, 2.0], [3.0, 4.0]]> : !cuda_tile.tile<2x2xf32>
    %c_e4 = constant <f8E4M3FN: 0x38> : tile<f8E4M3FN>
    %c_tf = constant <tf32: 1.5> : tile<tf32>
    // CHECK: %ftoi_f16_i8_s = ftoi %c5_f16 signed : tile<f16> -> tile<i8>
    %ftoi_f16_i8_s = ftoi %c5_f16 signed : tile<f16> -> tile<i8>
    %ftoi_f16_i1_u = ftoi %c5_f16 unsigned : tile<f16> -> tile<i1>
    %ftoi_f16_i16 = ftoi %c5_f16 signed : tile<f16> -> tile<i16>
    %ftoi_f16_i32 = ftoi %c5_f16 unsigned : tile<f16> -> tile<i32>
    %ftoi_f16_i64 = ftoi %c5_f16 signed : tile<f16> -> tile<i64>
    // CHECK: %ftoi_f32_i64_u_explicit_rnd = ftoi %c_tensor_f32 unsigned : tile<2x2xf32> -> tile<2x2xi64>
    %ftoi_f32_i64_u_explicit_rnd = ftoi %c_tensor_f32 unsigned rounding<nearest_int_to_zero> : tile<2x2xf32> -> tile<2x2xi64>
    %ftoi_e4_i16 = ftoi %c_e4 signed : tile<f8E4M3FN> -> tile<i16>
    %ftoi_tf_i32 = ftoi %c_tf signed : tile<tf32> -> tile<i32>
  }

  entry @itof(%a: tile<8xi32>, %b: tile<8xi1>) {
    // CHECK: %i0 = itof %a signed : tile<8xi32> -> tile<8xf32>
    %i0 = itof %a signed : tile<8xi32> -> tile<8xf32>
    %i1 = itof %a unsigned rounding<nearest_even> : tile<8xi32> -> tile<8xf16>
    %i2 = itof %b unsigned : tile<8xi1> -> tile<8xbf16>
    %i3 = itof %a signed : tile<8xi32> -> tile<8xf8E5M2>
    %i4 = itof %a signed : tile<8xi32> -> tile<8xtf32>
  }

  entry @trunci_exti(%a: tile<4x4xi64>) {
    // CHECK: %t0 = trunci %a : tile<4x4xi64> -> tile<4x4xi32>
    %t0 = trunci %a : tile<4x4xi64> -> tile<4x4xi32>
    %t1 = trunci %t0 : tile<4x4xi32> -> tile<4x4xi1>
    // CHECK: %e0 = exti %t1 signed : tile<4x4xi1> -> tile<4x4xi16>
    %e0 = exti %t1 signed : tile<4x4xi1> -> tile<4x4xi16>
    %e1 = exti %t0 unsigned : tile<4x4xi32> -> tile<4x4xi64>
  }
}
