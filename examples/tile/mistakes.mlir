// Deliberate mistakes: each line breaks one verifier rule.
cuda_tile.module @mistakes {
  entry @k(%x: tile<4xf32>, %n: tile<4xi32>) {
    %a = bitcast %n : tile<4xi32> -> tile<4xi16>
    %b = exti %n signed : tile<4xi32> -> tile<4xi16>
    %c = ftof %x : tile<4xf32> -> tile<4xf32>
    %d = itof %n signed : tile<4xi32> -> tile<4xf8E8M0FNU>
    return
  }
}
