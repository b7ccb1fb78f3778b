// Arguments whose types are not tiles: pointers, tensor views, partition views, tokens.
cuda_tile.module @types {
  testing$func @views(%ptr: !cuda_tile.ptr<f32>,
                      %tv: !cuda_tile.tensor_view<?x2xf32, strides=[1,?]>,
                      %pv: !cuda_tile.partition_view<tile=(2x2), padding_value = zero, tensor_view<16x16xf32, strides=[16,1]>, dim_map=[1, 0]>,
                      %t: tile<4xptr<f32>>,
                      %tok: token,
                      %x: tile<2x2xf32>) {
    %i = ptr_to_int %t : tile<4xptr<f32>> -> tile<4xi64>
    %q = int_to_ptr %i : tile<4xi64> -> tile<4xptr<f16>>
    %h = ftof %x : tile<2x2xf32> -> tile<2x2xf16>
    %tv2 = make_tensor_view %ptr, shape = [16, 16], strides = [16, 1] : tensor_view<16x16xf32, strides=[16,1]>
    return
  }
  entry @ptr_arg(%p: ptr<f32>, %v: tensor_view<f32>) {
    return
  }
}
