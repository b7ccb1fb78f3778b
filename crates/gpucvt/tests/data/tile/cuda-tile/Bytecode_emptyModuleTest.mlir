// RUN: %round_trip_test %s %t

cuda_tile.module @kernels {
}
