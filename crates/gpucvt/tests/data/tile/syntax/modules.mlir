// `module attributes {…}` around Tile IR modules, attributes on a Tile IR module, and the
// generic op form of modules, functions, returns and other ops.
module attributes {cuda_tile.target = "sm_100a", gpu.container_module} {
  cuda_tile.module @outer attributes {cuda_tile.version = "13.4"} {
    entry @k(%a: tile<2xf32>) {
      %h = ftof %a : tile<2xf32> -> tile<2xf16>
      return
    }
  }
}
"cuda_tile.module"() <{sym_name = "generic"}> ({
  "cuda_tile.testing$func"() <{arg_attrs = [{}, {}], function_type = (!cuda_tile.tile<2x4xf32>, !cuda_tile.tile<2x4xf32>) -> (), sym_name = "func"}> ({
  ^bb0(%arg0: !cuda_tile.tile<2x4xf32>, %arg1: !cuda_tile.tile<2x4xf32>):
    %0 = "cuda_tile.addf"(%arg0, %arg1) <{rounding_mode = #cuda_tile.rounding<nearest_even>}> : (!cuda_tile.tile<2x4xf32>, !cuda_tile.tile<2x4xf32>) -> !cuda_tile.tile<2x4xf32>
    %1 = ftof %arg0 rounding<zero> : tile<2x4xf32> -> tile<2x4xbf16>
    "cuda_tile.return"() : () -> ()
  }) : () -> ()
  "cuda_tile.entry"() <{function_type = (!cuda_tile.tile<i8>) -> (), sym_name = "e"}> ({
  ^bb0(%x: !cuda_tile.tile<i8>):
    %w = exti %x signed : tile<i8> -> tile<i32>
    "cuda_tile.return"() : () -> ()
  }) : () -> ()
}) : () -> ()
module {
  cuda_tile.module @plain {
    entry @k() {
      return
    }
  }
}
"cuda_tile.module"() <{sym_name = "generic_conversions"}> ({
  "cuda_tile.testing$func"() <{function_type = (!cuda_tile.tile<4xf32>, !cuda_tile.tile<4xi16>) -> (), sym_name = "convs"}> ({
  ^bb0(%a: !cuda_tile.tile<4xf32>, %n: !cuda_tile.tile<4xi16>):
    %0 = "cuda_tile.ftof"(%a) <{rounding_mode = #cuda_tile.rounding<zero>}> : (!cuda_tile.tile<4xf32>) -> !cuda_tile.tile<4xf16>
    %1 = "cuda_tile.ftoi"(%a) <{rounding_mode = #cuda_tile.rounding<nearest_int_to_zero>, signedness = #cuda_tile.signedness<signed>}> : (!cuda_tile.tile<4xf32>) -> !cuda_tile.tile<4xi32>
    %2 = "cuda_tile.trunci"(%n) <{overflow = #cuda_tile.overflow<no_wrap>}> : (!cuda_tile.tile<4xi16>) -> !cuda_tile.tile<4xi8>
    %3 = "cuda_tile.exti"(%2) <{signedness = #cuda_tile.signedness<unsigned>}> : (!cuda_tile.tile<4xi8>) -> !cuda_tile.tile<4xi64>
    "cuda_tile.return"() : () -> ()
  }) : () -> ()
}) : () -> ()
