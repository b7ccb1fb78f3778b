// tile-version: 13.4
// 13.4 additions: saturating ftoi, nearest_away, directed ftof modes, fnv8E5M3FNU.

cuda_tile.module @v13_4 {
  entry @conv(%arg0: tile<16xf32>, %arg1: tile<16xf64>, %arg2: tile<16xf16>) optimization_hints=<default = {}> {
    // CHECK: %0 = ftoi %arg0 signed saturating : tile<16xf32> -> tile<16xi32>
    %0 = ftoi %arg0 signed  saturating : tile<16xf32> -> tile<16xi32>
    %1 = ftoi %arg0 unsigned rounding<nearest_int_to_zero> saturating : tile<16xf32> -> tile<16xi8>
    // CHECK: %2 = ftof %arg0 rounding<nearest_away> : tile<16xf32> -> tile<16xtf32>
    %2 = ftof %arg0 rounding<nearest_away> : tile<16xf32> -> tile<16xtf32>
    %3 = ftof %arg0 rounding<zero> : tile<16xf32> -> tile<16xf16>
    %4 = ftof %arg1 rounding<negative_inf> : tile<16xf64> -> tile<16xf32>
    %5 = ftof %arg2 rounding<nearest_away> : tile<16xf16> -> tile<16xf32>
    %6 = ftof %arg1 rounding<positive_inf> : tile<16xf64> -> tile<16xf8E8M0FNU>
    %7 = ftof %arg0 : tile<16xf32> -> tile<16xfnv8E5M3FNU>
    %8 = ftof %7 : tile<16xfnv8E5M3FNU> -> tile<16xf32>
    %9 = ftof %arg0 rounding<zero> : tile<16xf32> -> tile<16xbf16>
  }
}
