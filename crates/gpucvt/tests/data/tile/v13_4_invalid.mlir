// tile-version: 13.4
// The 13.4 rules: the ftof rounding table, nearest_away, saturating.

cuda_tile.module @ftof_narrowing_negative_inf {
  entry @f(%a: tile<f32>) {
    // expected-error @below:5{{'cuda_tile.ftof' op invalid rounding mode specified. Only 'nearest_even' and 'zero' are supported}}
    %0 = ftof %a rounding<negative_inf> : tile<f32> -> tile<f16>
  }
}

// -----

cuda_tile.module @ftof_f64_f32_away {
  entry @f(%a: tile<f64>) {
    // expected-error @below{{invalid rounding mode specified}}
    %0 = ftof %a rounding<nearest_away> : tile<f64> -> tile<f32>
  }
}

// -----

cuda_tile.module @ftof_fp8_zero {
  entry @f(%a: tile<f32>) {
    // expected-error @below{{invalid rounding mode specified. Only 'nearest_even' is supported}}
    %0 = ftof %a rounding<zero> : tile<f32> -> tile<f8E4M3FN>
  }
}

// -----

cuda_tile.module @ftof_f4_zero {
  entry @f(%a: tile<2xf32>) {
    // expected-error @below{{invalid rounding mode specified. Only 'nearest_even' is supported}}
    %0 = ftof %a rounding<zero> : tile<2xf32> -> tile<2xf4E2M1FN>
  }
}

// -----

cuda_tile.module @ftof_e8m0_away {
  entry @f(%a: tile<f32>) {
    // expected-error @below{{invalid rounding mode specified for conversion to f8E8M0FNU. Only 'zero' and 'positive_inf' are supported}}
    %0 = ftof %a rounding<nearest_away> : tile<f32> -> tile<f8E8M0FNU>
  }
}

// -----

cuda_tile.module @ftof_unknown_word {
  entry @f(%a: tile<f32>) {
    // expected-error @below{{expected rounding mode to be one of: 'nearest_even', 'zero', 'negative_inf', 'positive_inf', 'nearest_away', got: 'approx'}}
    %0 = ftof %a rounding<approx> : tile<f32> -> tile<f16>
  }
}

// -----

cuda_tile.module @itof_away {
  entry @f(%a: tile<i32>) {
    // expected-error @below{{'cuda_tile.itof' op invalid rounding mode specified. Only 'nearest_even' is supported}}
    %0 = itof %a signed rounding<nearest_away> : tile<i32> -> tile<f32>
  }
}

// -----

cuda_tile.module @trunci_overflow_word {
  entry @f(%a: tile<i32>) {
    // expected-error @below{{expected overflow to be one of}}
    %0 = trunci %a overflow<wrap> : tile<i32> -> tile<i8>
  }
}
