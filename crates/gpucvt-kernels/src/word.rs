//! The word types that hold encodings.

/// Keeps [`Word`] to the four types the kernels are written for: the slice casts and the
/// kernels' dispatch assume them, and another type would reach an internal `expect`.
mod sealed {
    pub trait Sealed {}
    impl Sealed for u8 {}
    impl Sealed for u16 {}
    impl Sealed for u32 {}
    impl Sealed for u64 {}
}

/// An unsigned integer type that holds encodings: `u8`, `u16`, `u32` or `u64` (sealed: no
/// other type can implement it).
///
/// ```compile_fail
/// use gpucvt_kernels::Word;
/// #[derive(Clone, Copy, Default)]
/// struct Mine(u32);
/// impl Word for Mine {
///     const BITS: u32 = 32;
///     fn to_u64(self) -> u64 { self.0 as u64 }
///     fn from_u64(v: u64) -> Self { Mine(v as u32) }
///     fn from_u32(v: u32) -> Self { Mine(v) }
/// }
/// ```
pub trait Word: sealed::Sealed + Copy + Default + Send + Sync + 'static {
    /// Its width.
    const BITS: u32;
    /// Widens to `u64`.
    fn to_u64(self) -> u64;
    /// Truncates from `u64`.
    fn from_u64(v: u64) -> Self;
    /// Truncates from `u32`.
    fn from_u32(v: u32) -> Self;
    /// The slice as `&[u32]`, if `Self` is `u32`.
    fn as_u32_slice(s: &[Self]) -> Option<&[u32]> {
        let _ = s;
        None
    }
    /// The slice as `&[u8]`, if `Self` is `u8`.
    #[doc(hidden)]
    fn as_u8_slice(s: &[Self]) -> Option<&[u8]> {
        let _ = s;
        None
    }
    /// The slice as `&[u16]`, if `Self` is `u16`.
    #[doc(hidden)]
    fn as_u16_slice(s: &[Self]) -> Option<&[u16]> {
        let _ = s;
        None
    }
    /// The slice as `&mut [u8]`, if `Self` is `u8` (lets kernels write their natural word).
    #[doc(hidden)]
    fn as_u8_slice_mut(s: &mut [Self]) -> Option<&mut [u8]> {
        let _ = s;
        None
    }
    /// The slice as `&mut [u16]`, if `Self` is `u16`.
    #[doc(hidden)]
    fn as_u16_slice_mut(s: &mut [Self]) -> Option<&mut [u16]> {
        let _ = s;
        None
    }
    /// The slice as `&mut [u32]`, if `Self` is `u32`.
    #[doc(hidden)]
    fn as_u32_slice_mut(s: &mut [Self]) -> Option<&mut [u32]> {
        let _ = s;
        None
    }
    /// The slice as `&mut [u64]`, if `Self` is `u64`.
    #[doc(hidden)]
    fn as_u64_slice_mut(s: &mut [Self]) -> Option<&mut [u64]> {
        let _ = s;
        None
    }
}

macro_rules! word {
    ($t:ty, $bits:expr $(, $m:ident $(, $c:ident)?)?) => {
        impl Word for $t {
            const BITS: u32 = $bits;
            #[inline(always)]
            fn to_u64(self) -> u64 {
                self as u64
            }
            #[inline(always)]
            fn from_u64(v: u64) -> Self {
                v as $t
            }
            #[inline(always)]
            fn from_u32(v: u32) -> Self {
                v as $t
            }
            $(
                fn $m(s: &mut [$t]) -> Option<&mut [$t]> {
                    Some(s)
                }
                $(
                    fn $c(s: &[$t]) -> Option<&[$t]> {
                        Some(s)
                    }
                )?
            )?
        }
    };
}
word!(u8, 8, as_u8_slice_mut, as_u8_slice);
word!(u16, 16, as_u16_slice_mut, as_u16_slice);
word!(u64, 64, as_u64_slice_mut);
impl Word for u32 {
    const BITS: u32 = 32;
    #[inline(always)]
    fn to_u64(self) -> u64 {
        self as u64
    }
    #[inline(always)]
    fn from_u64(v: u64) -> Self {
        v as u32
    }
    #[inline(always)]
    fn from_u32(v: u32) -> Self {
        v
    }
    fn as_u32_slice(s: &[u32]) -> Option<&[u32]> {
        Some(s)
    }
    fn as_u32_slice_mut(s: &mut [u32]) -> Option<&mut [u32]> {
        Some(s)
    }
}
