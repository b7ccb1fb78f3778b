// tile-version: 13.3
// The conversion cases of cuda-tile `invalid.mlir`, `arith_invalid.mlir` and
// `dense_attr_invalid.mlir` (tile-ir.md §4), and the extra cases found with tileiras.

cuda_tile.module @bitcast_width {
  entry @f(%a: tile<i32>) {
    // expected-error @below:5{{op types must be equal width}}
    %0 = cuda_tile.bitcast %a : !cuda_tile.tile<i32> -> !cuda_tile.tile<i16>
  }
}

// -----

cuda_tile.module @bitcast_shape {
  entry @f(%a: tile<4xi16>) {
    // expected-error @below{{op failed to verify that all of {source, result} have same shape}}
    %0 = bitcast %a : tile<4xi16> -> tile<2xi32>
  }
}

// -----

cuda_tile.module @ptr_to_int_i32 {
  entry @f(%a: tile<ptr<f32>>) {
    // expected-error @below{{result #0 must be tile of i64 values, but got '!cuda_tile.tile<i32>'}}
    %0 = ptr_to_int %a : tile<ptr<f32>> -> tile<i32>
  }
}

// -----

cuda_tile.module @itof_rounding_foo {
  entry @f(%arg0: tile<i32>) {
    // expected-error @below:39{{expected rounding mode to be one of: 'nearest_even', 'zero', 'negative_inf', 'positive_inf', got: 'foo'}}
    %0 = itof %arg0 unsigned rounding<foo> : tile<i32> -> tile<f32>
  }
}

// -----

cuda_tile.module @itof_rounding_int_mode {
  entry @f(%arg0: tile<i32>) {
    // expected-error @below{{expected rounding mode to be one of: 'nearest_even', 'zero', 'negative_inf', 'positive_inf', got: 'nearest_int_to_positive_inf'}}
    %0 = itof %arg0 signed rounding<nearest_int_to_positive_inf> : tile<i32> -> tile<f32>
  }
}

// -----

cuda_tile.module @ftoi_rounding_foo {
  entry @f(%arg0: tile<f32>) {
    // expected-error @below:37{{expected rounding mode to be one of: 'nearest_int_to_zero', got: 'foo'}}
    %0 = ftoi %arg0 signed rounding<foo> : tile<f32> -> tile<i32>
  }
}

// -----

cuda_tile.module @ftoi_rounding_nearest_even {
  entry @f(%arg0: tile<f32>) {
    // expected-error @below{{expected rounding mode to be one of: 'nearest_int_to_zero', got: 'nearest_even'}}
    %0 = ftoi %arg0 signed rounding<nearest_even> : tile<f32> -> tile<i32>
  }
}

// -----

cuda_tile.module @itof_negative_inf {
  entry @f(%arg0: tile<i32>) {
    // expected-error @below:5{{'cuda_tile.itof' op invalid rounding mode specified. Only 'nearest_even' is supported}}
    %0 = itof %arg0 signed rounding<negative_inf> : tile<i32> -> tile<f32>
  }
}

// -----

cuda_tile.module @ftof_widening_negative_inf {
  entry @f(%arg0: tile<f32>) {
    // expected-error @below{{invalid rounding mode specified. Only 'nearest_even' is supported}}
    %0 = ftof %arg0 rounding<negative_inf> : tile<f32> -> tile<f64>
  }
}

// -----

cuda_tile.module @ftof_e8m0_nearest_even {
  entry @f(%arg0: tile<f32>) {
    // expected-error @below{{invalid rounding mode specified for conversion to f8E8M0FNU. Only 'zero' and 'positive_inf' are supported}}
    %0 = ftof %arg0 rounding<nearest_even> : tile<f32> -> tile<f8E8M0FNU>
  }
}

// -----

cuda_tile.module @f4_odd_elements {
  entry @f() {
    // expected-error @below:37{{F4E2M1FN tiles must have an even number of elements}}
    %c = constant <f4E2M1FN: 0x2> : tile<3x3x3xf4E2M1FN>
  }
}

// -----

cuda_tile.module @f4_scalar {
  entry @f() {
    // expected-error @below{{F4E2M1FN tiles must have an even number of elements}}
    %c = constant <f4E2M1FN: 0x2> : tile<f4E2M1FN>
  }
}

// -----

cuda_tile.module @dims_zero {
  entry @f() {
    // expected-error @below{{all dimensions must be positive constants, got 1, 0, 2}}
    %c = constant <f32: 1.0> : tile<1x0x2xf32>
  }
}

// -----

cuda_tile.module @dims_not_power_of_two {
  entry @f() {
    // expected-error @below{{all dimensions must be powers of two, got 3, 5, 9}}
    %c = constant <f32: 1.0> : tile<3x5x9xf32>
  }
}

// -----

cuda_tile.module @too_many_elements {
  // expected-error @below{{tile would exceed the maximum of 16777216 elements}}
  entry @f(%a: tile<8192x4096xf32>) {
    %0 = ftof %a : tile<8192x4096xf32> -> tile<8192x4096xf16>
  }
}

// -----

cuda_tile.module @ftoi_to_i4 {
  entry @f(%a: tile<8xf32>) {
    // expected-error @below{{'cuda_tile.ftoi' op result #0 must be tile of i1 or i8 or i16 or i32 or i64 values}}
    %0 = ftoi %a signed : tile<8xf32> -> tile<8xi4>
  }
}

// -----

cuda_tile.module @itof_from_i4 {
  entry @f(%a: tile<8xi4>) {
    // expected-error @below{{'cuda_tile.itof' op operand #0 must be tile of i1 or i8 or i16 or i32 or i64 values}}
    %0 = itof %a signed : tile<8xi4> -> tile<8xf32>
  }
}

// -----

cuda_tile.module @constant_shape {
  entry @f() {
    // expected-error @below{{inferred shape of elements literal ([2, 2]) does not match type ([4, 2])}}
    %c = constant <f32: [[1.0, 2.0], [3.0, 4.0]]> : tile<4x2xf32>
  }
}

// -----

cuda_tile.module @constant_bool_for_int {
  entry @f() {
    // expected-error @below{{expected integer value}}
    %c = constant <i32: true> : tile<i32>
  }
}

// -----

cuda_tile.module @constant_range {
  entry @f() {
    // expected-error @below{{integer constant out of range for type}}
    %c = constant <i8: 256> : tile<4xi8>
    // expected-error @below{{integer constant out of range for type}}
    %d = constant <i8: -129> : tile<4xi8>
  }
}

// -----

cuda_tile.module @constant_element_type {
  entry @f() {
    // expected-error @below{{mismatch between the element type: 'f16' and the tile element type 'f32'}}
    %c = constant <f16: 1.0> : tile<f32>
  }
}

// -----

cuda_tile.module @constant_float_literals {
  entry @f() {
    // expected-error @below{{unexpected decimal integer literal for a floating point value}}
    %c = constant <f32: 1> : tile<f32>
    // expected-error @below{{float constant out of range for type}}
    %d = constant <f16: 0x12345> : tile<f16>
  }
}

// -----

cuda_tile.module @bitcast_tf32_i32 {
  entry @f(%a: tile<16xtf32>) {
    // expected-error @below{{'cuda_tile.bitcast' op types must be equal width, cannot convert '!cuda_tile.tile<16xtf32>' of width 19 to type '!cuda_tile.tile<16xi32>' of width 32}}
    %0 = bitcast %a : tile<16xtf32> -> tile<16xi32>
  }
}

// -----

cuda_tile.module @bitcast_f32_tf32 {
  entry @f(%a: tile<16xf32>) {
    // expected-error @below{{op types must be equal width, cannot convert '!cuda_tile.tile<16xf32>' of width 32 to type '!cuda_tile.tile<16xtf32>' of width 19}}
    %0 = bitcast %a : tile<16xf32> -> tile<16xtf32>
  }
}

// -----

cuda_tile.module @saturating_before_13_4 {
  entry @f(%a: tile<16xf32>) {
    // expected-error @below:25{{expected ':'}}
    %0 = ftoi %a signed saturating : tile<16xf32> -> tile<16xi32>
  }
}

// -----

cuda_tile.module @bitcast_pointer {
  entry @f(%a: tile<ptr<f32>>) {
    // expected-error @below{{operand #0 must be tile of i1 or i8}}
    %0 = bitcast %a : tile<ptr<f32>> -> tile<i64>
  }
}

// -----

cuda_tile.module @use_type_mismatch {
  entry @f(%a: tile<4xf32>) {
    // expected-error @below:15{{use of value '%a' expects different type than prior uses}}
    %0 = ftof %a : tile<4xf16> -> tile<4xf32>
  }
}
