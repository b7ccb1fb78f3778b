// Locations: `loc(…)` on ops, values and blocks, and `#loc = loc(…)` aliases.
#loc = loc("k.py":1:1)
#loc1 = loc("k.py":2:5)
#di_file = #cuda_tile.di_file<"k.py" in "/src">
cuda_tile.module @locs {
  entry @k(%a: tile<f32> loc("k.py":1:10)) {
    %h = ftof %a rounding<zero> : tile<f32> -> tile<f16> loc(#loc1)
    %c = constant <f16: 1.0> : tile<f16> loc(unknown)
    %s = addf %h, %c : tile<f16> loc(#loc1)
    %i = ftoi %s signed : tile<f16> -> tile<i16>
      loc(fused[#loc, #loc1])
    return loc(#loc)
  } loc(#loc)
} loc(#loc)
#loc2 = loc("k.py":3:1)
