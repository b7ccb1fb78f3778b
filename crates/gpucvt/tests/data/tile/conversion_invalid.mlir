// tile-version: 13.3
// The invalid cases of tile-ir.md §4 (cuda-tile `conversion_invalid.mlir`), one module per
// case. `// expected-error @below:COL{{text}}`: a diagnostic on the next code line (COL, if
// given, is its column) whose message contains `text`.

cuda_tile.module @bitcast_different_shape {
  entry @f(%a: tile<4xi16>) {
    // expected-error @below:5{{op failed to verify that all of {source, result} have same shape}}
    %0 = bitcast %a : tile<4xi16> -> tile<2xi32>
  }
}

// -----

cuda_tile.module @bitcast_different_width {
  entry @f(%a: tile<i32>) {
    // expected-error @below:5{{'cuda_tile.bitcast' op types must be equal width}}
    %0 = bitcast %a : tile<i32> -> tile<i16>
  }
}

// -----

cuda_tile.module @bitcast_int_to_pointer_invalid {
  entry @f(%a: tile<i32>) {
    // expected-error @below:5{{operand #0 must be tile of i64 values, but got '!cuda_tile.tile<i32>'}}
    %0 = int_to_ptr %a : tile<i32> -> tile<ptr<i8>>
  }
}

// -----

cuda_tile.module @bitcast_pointer_to_int_invalid {
  entry @f(%a: tile<ptr<i8>>) {
    // expected-error @below:5{{result #0 must be tile of i64 values, but got '!cuda_tile.tile<i32>'}}
    %0 = ptr_to_int %a : tile<ptr<i8>> -> tile<i32>
  }
}

// -----

cuda_tile.module @exti_invalid_noop {
  cuda_tile.entry @f() {
    %c = constant <i8: 1> : tile<i8>
    // expected-error @below:5{{'cuda_tile.exti' op extending to smaller or identical integer}}
    %0 = exti %c signed : tile<i8> -> tile<i8>
  }
}

// -----

cuda_tile.module @exti_invalid_truncate {
  entry @f() {
    %c = constant <i16: [1, 2]> : tile<2xi16>
    // expected-error @below:5{{extending to smaller or identical integer}}
    %0 = exti %c unsigned : tile<2xi16> -> tile<2xi8>
  }
}

// -----

cuda_tile.module @exti_mismatched_shape {
  entry @f() {
    %c = constant <i8: 1> : tile<2xi8>
    // expected-error @below:5{{failed to verify that all of {from, to} have same shape}}
    %0 = exti %c signed : tile<2xi8> -> tile<i16>
  }
}

// -----

cuda_tile.module @exti_no_signedness {
  entry @f() {
    %c = constant <i8: 1> : tile<2xi8>
    // expected-error @below:18{{expected valid keyword}}
    // expected-error @below:18{{expected signedness to be one of: {'signed', 'unsigned'}}}
    %0 = exti %c : tile<2xi8> -> tile<2xi16>
  }
}

// -----

cuda_tile.module @ftof_mismatched_shape {
  entry @f() {
    %c = constant <f16: 1.0> : tile<2xf16>
    // expected-error @below:5{{failed to verify that all of {from, to} have same shape}}
    %0 = ftof %c : tile<2xf16> -> tile<f32>
  }
}

// -----

cuda_tile.module @ftof_no_op {
  entry @f() {
    %c = constant <f16: 1.0> : tile<2xf16>
    // expected-error @below:5{{'cuda_tile.ftof' op converting tiles must not be a no-op}}
    %0 = ftof %c : tile<2xf16> -> tile<2xf16>
  }
}

// -----

cuda_tile.module @ftof_non_float_result {
  entry @f() {
    %c = constant <f16: 1.0> : tile<2xf16>
    // expected-error @below:5{{op result #0 must be tile of f16 or bf16 or f32 or f64 or tf32 or f8E4M3FN or f8E5M2 or f8E8M0FNU or f4E2M1FN values, but got '!cuda_tile.tile<2xi32>'}}
    %0 = ftof %c : tile<2xf16> -> tile<2xi32>
  }
}

// -----

cuda_tile.module @ftoi_mismatched_shape {
  entry @f() {
    %c = constant <f16: 1.0> : tile<2xf16>
    // expected-error @below:5{{failed to verify that all of {from, to} have same shape}}
    %0 = ftoi %c signed : tile<2xf16> -> tile<i32>
  }
}

// -----

cuda_tile.module @ftoi_non_float_operand {
  entry @f() {
    %c = constant <i16: 1> : tile<2xi16>
    // expected-error @below:5{{op operand #0 must be tile of f16 or bf16 or f32 or f64 or tf32 or f8E4M3FN or f8E5M2 or f8E8M0FNU or f4E2M1FN values, but got '!cuda_tile.tile<2xi16>'}}
    %0 = ftoi %c signed : tile<2xi16> -> tile<2xi32>
  }
}

// -----

cuda_tile.module @ftoi_no_signedness {
  entry @f() {
    %c = constant <f16: 1.0> : tile<2xf16>
    // expected-error @below{{expected valid keyword}}
    // expected-error @below{{expected signedness to be one of: {'signed', 'unsigned'}}}
    %0 = ftoi %c : tile<2xf16> -> tile<2xi32>
  }
}

// -----

cuda_tile.module @itof_mismatched_shape {
  entry @f() {
    %c = constant <i16: 1> : tile<2xi16>
    // expected-error @below{{failed to verify that all of {from, to} have same shape}}
    %0 = itof %c signed : tile<2xi16> -> tile<f32>
  }
}

// -----

cuda_tile.module @itof_non_integer_operand {
  entry @f() {
    %c = constant <f16: 1.0> : tile<2xf16>
    // expected-error @below{{operand #0 must be tile of i1 or i8 or i16 or i32 or i64 values, but got '!cuda_tile.tile<2xf16>'}}
    %0 = itof %c signed : tile<2xf16> -> tile<2xf32>
  }
}

// -----

cuda_tile.module @itof_no_signedness {
  entry @f() {
    %c = constant <i16: 1> : tile<2xi16>
    // expected-error @below{{expected valid keyword}}
    // expected-error @below{{expected signedness to be one of: {'signed', 'unsigned'}}}
    %0 = itof %c : tile<2xi16> -> tile<2xf32>
  }
}

// -----

cuda_tile.module @itof_f8e8m0fnu {
  entry @f() {
    %c = constant <i8: 1> : tile<2xi8>
    // expected-error @below{{op integer to f8E8M0FNU conversion is not supported, please first convert to another float type}}
    %0 = itof %c signed : tile<2xi8> -> tile<2xf8E8M0FNU>
  }
}

// -----

cuda_tile.module @trunci_invalid_extend {
  entry @f() {
    %c = constant <i8: 1> : tile<2xi8>
    // expected-error @below{{truncating to larger or identical integer}}
    %0 = trunci %c : tile<2xi8> -> tile<2xi16>
  }
}

// -----

cuda_tile.module @trunci_invalid_noop {
  entry @f() {
    %c = constant <i8: 1> : tile<i8>
    // expected-error @below{{'cuda_tile.trunci' op truncating to larger or identical integer}}
    %0 = trunci %c : tile<i8> -> tile<i8>
  }
}

// -----

cuda_tile.module @trunci_mismatched_shape {
  entry @f() {
    %c = constant <i8: 1> : tile<2xi8>
    // expected-error @below{{failed to verify that all of {from, to} have same shape}}
    %0 = trunci %c : tile<2xi8> -> tile<i8>
  }
}

// -----

// The dialect's test file runs with -allow-unregistered-dialect: unknown ops are tolerated.
cuda_tile.module @unknown_ops_are_skipped {
  cuda_tile.testing$func @f(%arg0: tile<2xf16>) {
    %u = "test.op"(%arg0) : (tile<2xf16>) -> tile<2xf16>
    %w = cuda_tile.addf %arg0, %arg0 : tile<2xf16>
    // expected-error @below{{converting tiles must not be a no-op}}
    %0 = ftof %arg0 : tile<2xf16> -> tile<2xf16>
  }
}
