// A small CUDA Tile IR kernel body: f32 activations to fp8 and back, with the conversion
// ops gpucvt models (ftof, ftoi, itof, exti, trunci, bitcast).
cuda_tile.module @quantize {
  entry @k(%x: tile<4xf32>, %n: tile<4xi32>) {
    %h = ftof %x rounding<nearest_even> : tile<4xf32> -> tile<4xf16>
    %q = ftof %x : tile<4xf32> -> tile<4xf8E4M3FN>
    %b = bitcast %q : tile<4xf8E4M3FN> -> tile<4xi8>
    %w = exti %b signed : tile<4xi8> -> tile<4xi32>
    %i = ftoi %x signed : tile<4xf32> -> tile<4xi32>
    %f = itof %n signed rounding<nearest_even> : tile<4xi32> -> tile<4xf32>
    %t = trunci %n : tile<4xi32> -> tile<4xi8>
    return
  }
}
