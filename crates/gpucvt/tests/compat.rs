//! Every peer's conversions (`gpucvt::compat`) against the big-rational reference: every
//! encoding of each source of at most 16 bits, and boundary-dense plus random `f32` and
//! `f64` sources; a two-step chain against the reference applied twice.

use gpucvt::compat::Peer;
use gpucvt::core::format::{Layout, CATALOGUE, F32, F64};
use gpucvt::core::{Chain, Conversion, Format, Policy, Rounding};
use gpucvt_reference::reference::reference;

fn step_reference(c: &Conversion, bits: u64) -> u64 {
    reference(&c.src, bits, &c.dst, c.rounding, &c.policy).bits
}

fn chain_reference(chain: &Chain, bits: u64) -> u64 {
    let mid = chain
        .first
        .as_ref()
        .map_or(bits, |f| step_reference(f, bits));
    step_reference(&chain.last, mid)
}

/// Sources of `src`: every encoding up to 16 bits; otherwise the neighbours of powers of
/// two, of the destination's values' midpoints, specials and a seeded random stream.
fn inputs(src: &Format, dst: &Format) -> Vec<u64> {
    let w = src.width();
    if w <= 16 {
        return (0..1u64 << w).collect();
    }
    let mut v = Vec::new();
    let to_bits = |x: f64| {
        if *src == F64 {
            x.to_bits()
        } else {
            (x as f32).to_bits() as u64
        }
    };
    for e in -160..140 {
        for m in [
            1.0,
            1.25,
            1.5,
            1.75,
            1.0 + 2f64.powi(-8),
            1.0 + 2f64.powi(-9) + 2f64.powi(-40),
        ] {
            let x = m * 2f64.powi(e);
            for s in [x, -x] {
                let b = to_bits(s);
                v.extend([b, b.wrapping_add(1), b.wrapping_sub(1)]);
            }
        }
    }
    if dst.width() <= 16 {
        // The destination's values and the midpoints beside them (ties).
        let wide = Conversion::new(*dst, F64, Rounding::RN, Policy::default());
        let mut values: Vec<f64> = (0..1u64 << dst.width())
            .map(|b| f64::from_bits(wide.apply(b).bits))
            .filter(|x| x.is_finite())
            .collect();
        values.sort_by(f64::total_cmp);
        for pair in values.windows(2) {
            let mid = (pair[0] + pair[1]) / 2.0; // exact: a few bits of mantissa
            for x in [pair[0], mid] {
                let b = to_bits(x);
                v.extend([b, b.wrapping_add(1), b.wrapping_sub(1)]);
            }
        }
    }
    let mut s = 0x9e37_79b9_7f4a_7c15u64;
    for _ in 0..20_000 {
        s = s
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        v.push(if w == 64 { s } else { s >> 32 });
    }
    let specials: [u64; 8] = if w == 64 {
        [
            0,
            1 << 63,
            0x7ff0 << 48,
            0xfff0 << 48,
            0x7ff8 << 48,
            0xfff8 << 48,
            0x7ff0_0000_0000_0001,
            0xfff4 << 48,
        ]
    } else {
        [
            0,
            1 << 31,
            0x7f80_0000,
            0xff80_0000,
            0x7fc0_0000,
            0xffc0_0000,
            0x7f80_0001,
            0xffa0_0000,
        ]
    };
    v.extend(specials);
    v
}

#[test]
fn every_peer_agrees_with_the_reference() {
    let mut pairs = 0;
    for peer in Peer::ALL {
        for src in CATALOGUE
            .iter()
            .filter(|f| matches!(f.layout, Layout::Float(_)))
        {
            for dst in CATALOGUE
                .iter()
                .filter(|f| matches!(f.layout, Layout::Float(_)))
            {
                let Ok(chain) = peer.chain(src, dst) else {
                    continue;
                };
                pairs += 1;
                assert_eq!(chain.first.is_some(), *src == F64 && chain.last.src == F32);
                for bits in inputs(src, dst) {
                    let (got, want) = (chain.apply(bits).bits, chain_reference(&chain, bits));
                    assert_eq!(
                        got, want,
                        "{peer} {} -> {}: {bits:#x} gives {got:#x}, the reference {want:#x}",
                        src.name, dst.name
                    );
                }
            }
        }
    }
    // ml_dtypes 12 × 12 less NumPy's 6, torch 7 × 7 (9 names with f64 and f32), XLA 13 × 13.
    assert!(pairs > 250, "{pairs} pairs");
}

#[test]
fn refusals_name_the_peer_and_the_pair() {
    use gpucvt::core::format::{E2M1, F16, S32};
    let e = Peer::Torch.chain(&F32, &E2M1).unwrap_err().to_string();
    assert!(
        e.starts_with("PyTorch 2.15 (CPU) has no conversion between f32 and e2m1"),
        "{e}"
    );
    let e = Peer::MlDtypes.chain(&F32, &F16).unwrap_err().to_string();
    assert!(e.contains("NumPy's cast"), "{e}");
    assert!(Peer::Xla.chain(&F32, &S32).is_err());
    assert_eq!("pytorch".parse::<Peer>().unwrap(), Peer::Torch);
}
