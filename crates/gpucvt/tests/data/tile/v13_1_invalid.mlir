// tile-version: 13.1
// 13.1: rounding only nearest_even, no i4 / f8E8M0FNU / f4E2M1FN, older wording.

cuda_tile.module @itof_rounding_13_1 {
  entry @f(%a: tile<i32>) {
    // expected-error @below{{'cuda_tile.itof' op invalid rounding error specified. Only 'nearest_even' is supported}}
    %0 = itof %a signed rounding<zero> : tile<i32> -> tile<f32>
  }
}

// -----

cuda_tile.module @ftof_rounding_13_1 {
  entry @f(%a: tile<f32>) {
    // expected-error @below{{invalid rounding mode specified for ftof. Only 'nearest_even' is supported}}
    %0 = ftof %a rounding<zero> : tile<f32> -> tile<f8E4M3FN>
  }
}

// -----

cuda_tile.module @exti_i4_13_1 {
  // expected-error @below{{element type 'i4' is not available in Tile IR 13.1}}
  entry @f(%a: tile<8xi4>) {
    // expected-error @below{{'cuda_tile.exti' op operand #0 must be tile of i1 or i8 or i16 or i32 or i64 values, but got '!cuda_tile.tile<8xi4>'}}
    %0 = exti %a signed : tile<8xi4> -> tile<8xi8>
  }
}

// -----

cuda_tile.module @ftof_e8m0_13_1 {
  entry @f(%a: tile<f32>) {
    // expected-error @below{{op result #0 must be tile of f16 or bf16 or f32 or f64 or tf32 or f8E4M3FN or f8E5M2 values, but got '!cuda_tile.tile<f8E8M0FNU>'}}
    %0 = ftof %a rounding<zero> : tile<f32> -> tile<f8E8M0FNU>
  }
}
