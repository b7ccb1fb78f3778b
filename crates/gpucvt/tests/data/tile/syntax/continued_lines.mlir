// Ops continued on the next line: conversion ops, constants, returns and skipped ops.
cuda_tile.module @continued {
  entry @k(%a: tile<4xf32>, %p: tile<4xptr<f32>>, %m: tile<4xi1>) {
    %h = ftof %a
        rounding<zero>
        : tile<4xf32>
        -> tile<4xf16>
    %c = constant <f32: [1.0, 2.0,
                         3.0, 4.0]>
        : tile<4xf32>
    %v, %tok = load_ptr_tko weak %p, %m
        : tile<4xptr<f32>>, tile<4xi1> -> tile<4xf32>, token
    %s = addf %v,
              %c : tile<4xf32>
    %r = reduce %s dim=0 identities=[0.000000e+0 : f32] : tile<4xf32> -> tile<f32>
    (%x: tile<f32>, %acc: tile<f32>) {
      %y = addf %x, %acc : tile<f32>
      yield %y : tile<f32>
    }
    %i = ftoi %r signed
        : tile<f32> -> tile<i32>
    return
  }
}
