// Regions of skipped ops: their arguments, the conversion ops inside them (verified, with
// outer values in scope), and `return`/`yield` of values that skipped ops define.
cuda_tile.module @regions {
  testing$func @reduce(%arg0: !cuda_tile.tile<8xf32>) -> tile<f16> {
    %0 = reduce %arg0 dim=0 identities=[0.000000e+0 : f32] : tile<8xf32> -> tile<f32>
    (%in: tile<f32>, %identity: tile<f32>) {
      %h = ftof %in rounding<zero> : tile<f32> -> tile<f16>
      %back = ftof %h : tile<f16> -> tile<f32>
      %add = addf %back, %identity : tile<f32>
      yield %add : tile<f32>
    }
    %1 = ftof %0 : tile<f32> -> tile<f16>
    return %1 : tile<f16>
  }
  testing$func @scan(%arg0: tile<8xf32>) -> tile<8xf32> {
    %0 = scan %arg0 dim=0 reverse=false identities=[0.000000e+0 : f32] : tile<8xf32> -> tile<8xf32>
    (%a: tile<f32>, %b: tile<f32>) {
      %m = mulf %a, %b : tile<f32>
      yield %m : tile<f32>
    }
    return %0 : tile<8xf32>
  }
  entry @loops(%n: tile<i32>, %x: tile<f32>) {
    %c0 = constant <i32: 0> : tile<i32>
    %c1 = constant <i32: 1> : tile<i32>
    %r = for %iv in (%c0 to %n, step %c1) : tile<i32>
        iter_values(%acc = %x) -> (tile<f32>) {
      %f = itof %iv signed : tile<i32> -> tile<f32>
      %s = addf %acc, %f : tile<f32>
      %cond = cmpi less_than %iv, %c1, signed : tile<i32> -> tile<i1>
      %t = if %cond -> (tile<f32>) {
        %h = ftof %s : tile<f32> -> tile<bf16>
        %w = ftof %h : tile<bf16> -> tile<f32>
        yield %w : tile<f32>
      } else {
        yield %s : tile<f32>
      }
      continue %t : tile<f32>
    }
    %out = ftof %r : tile<f32> -> tile<f16>
    return
  }
  testing$func @addf_result(%a: tile<4xf32>) -> tile<4xf32> {
    %s = addf %a, %a : tile<4xf32>
    %p = mulf %s, %s rounding<nearest_even> : tile<4xf32>
    return %p : tile<4xf32>
  }
}
