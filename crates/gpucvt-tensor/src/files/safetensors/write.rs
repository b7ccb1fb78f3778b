//! Writing a `.safetensors` output from its layout: the header, then each tensor copied or
//! streamed through its plan, scales written in place after it by a second handle.

use crate::chunk::Plan;
use crate::error::{Error, Result};
use crate::files::checkpoint::stacks::{self, Storage};
use crate::files::output::Temp;
use crate::files::safetensors::layout::{StAction, StConvert, StLayout};
use crate::files::selfcheck::{self, Hashing, Region};
use crate::files::{nan_scale_note, refuse_nan_scales, short_region, Ctx, Plans, Scaled};
use crate::stream::quantized::QuantJob;
use crate::{Kept, Stats, Summary, TensorSummary};
use std::fs::File;
use std::io::{BufWriter, Read, Seek, SeekFrom, Write};
use std::path::Path;

/// The output file's writer: hashes what it writes ([`Hashing`]), buffered.
type Writer<'f> = Hashing<BufWriter<&'f mut File>>;

/// What has been written so far: the regions for the self-check, where the next tensor
/// starts in the data section, and the summary's lists.
#[derive(Default)]
struct Written {
    regions: Vec<Region>,
    at: u64,
    tensors: Vec<TensorSummary>,
    copied: Vec<String>,
    kept: Vec<Kept>,
    notes: Vec<String>,
    total: Stats,
}

impl Ctx<'_> {
    /// `.safetensors`: the header, then every tensor in the input's order (copied or
    /// converted, a scale tensor after each scaled one); the output read back and checked
    /// before it is renamed into place.
    pub(crate) fn safetensors(&mut self, f: &mut File, mut layout: StLayout) -> Result<Summary> {
        let out_path = self.output.to_path_buf();
        let mut tmp = Temp::new(self.output)?;
        let data_start = layout.header.len() as u64;
        let mut scale_file = second_handle(&tmp, &layout, &out_path)?;
        let mut w = Hashing::new(BufWriter::with_capacity(1 << 20, tmp.file.as_file_mut()));
        w.write_all(&layout.header)
            .map_err(|e| Error::io("write", &out_path, e))?;
        w.take();
        // (A header can be 100 MB: it is not needed again, the self-check reads it back.)
        layout.header = Vec::new();
        self.tick(layout.in_data_start);
        let mut done = Written {
            regions: Vec::with_capacity(layout.entries.len()),
            ..Written::default()
        };
        done.tensors.reserve_exact(
            layout
                .entries
                .iter()
                .filter(|e| matches!(e.action, StAction::Convert(_)))
                .count(),
        );
        let mut plans = Plans::default();
        let mut buf = Vec::new();
        for mut e in layout.entries {
            crate::check_cancel(self.opts.cancel.as_deref())?;
            let scale_region = match e.action {
                StAction::Copy | StAction::Keep(_) | StAction::Default(_) => {
                    self.copy_tensor(f, &mut w, e.in_bytes, &mut buf)?;
                    let (reason, by_default) = match e.action {
                        StAction::Keep(reason) => (reason, false),
                        StAction::Default(reason) => (reason.to_string(), true),
                        _ => {
                            done.copied.push(e.name.clone());
                            (String::new(), false)
                        }
                    };
                    if !reason.is_empty() {
                        done.kept.push(Kept {
                            name: e.name.clone(),
                            reason,
                            by_default,
                        });
                    }
                    Vec::new()
                }
                StAction::Convert(c) => {
                    let key = layout.keys[c.key as usize];
                    let scales_at = data_start + done.at + e.out_bytes;
                    let (stats, regions) = match key.scaled {
                        Scaled::General(b) => {
                            let tensor = QuantJob {
                                key: &key,
                                scaling: b,
                                shape: &e.shape,
                                stream: c.stream,
                                amax: c.amax,
                            };
                            let qd = self.quantize_streamed(f, &tensor, &mut w, &out_path)?;
                            let sf = scale_file.as_mut().expect("a second handle for scales");
                            sf.seek(SeekFrom::Start(scales_at))
                                .map_err(|err| Error::io("write", &out_path, err))?;
                            let mut sw = Hashing::new(BufWriter::with_capacity(1 << 20, sf));
                            let second = stored_second(layout.storage.as_ref(), qd.scale_2);
                            let parts = [Some(&qd.scales[..]), second.as_ref().map(|b| &b[..])];
                            let mut regions = Vec::new();
                            let names = c.scale.iter().chain(&c.scale_2);
                            for (part, (name, bytes)) in parts.into_iter().flatten().zip(names) {
                                sw.write_all(part)
                                    .and_then(|_| sw.flush())
                                    .map_err(|err| Error::io("write", &out_path, err))?;
                                let (hash, len) = sw.take();
                                if len != *bytes {
                                    return Err(short_region(&out_path, name, *bytes, len));
                                }
                                regions.push(Region {
                                    name: name.clone(),
                                    start: 0,
                                    len,
                                    hash,
                                });
                            }
                            (qd.stats, regions)
                        }
                        _ => {
                            let plan = plans.get(key, c.stream);
                            let (stats, region) = self.convert_tensor(
                                f,
                                &mut w,
                                scale_file.as_mut(),
                                plan,
                                &c,
                                scales_at,
                            )?;
                            (stats, region.into_iter().collect::<Vec<_>>())
                        }
                    };
                    let mut at = done.at + e.out_bytes;
                    let regions: Vec<Region> = regions
                        .into_iter()
                        .map(|mut r| {
                            r.start = at;
                            at += r.len;
                            r
                        })
                        .collect();
                    done.total.merge(&stats);
                    refuse_nan_scales(self.opts, &e.name, &stats)?;
                    done.notes.extend(nan_scale_note(&e.name, &stats));
                    done.tensors.push(TensorSummary {
                        name: e.name.clone(),
                        from: key.conv.src.name.to_string(),
                        to: key.conv.dst.name.to_string(),
                        dtype: format!("{:?}", e.out_dtype),
                        shape: std::mem::take(&mut e.shape),
                        scale: c.scale.map(|s| s.0),
                        scale_2: c.scale_2.map(|s| s.0),
                        stats,
                    });
                    regions
                }
            };
            done.end_tensor(&mut w, e.out_name, e.out_bytes, scale_region, &out_path)?;
        }
        w.flush().map_err(|e| Error::io("write", &out_path, e))?;
        drop(w.into_inner());
        drop(scale_file);
        selfcheck::verify_safetensors(tmp.file.path(), &out_path, &done.regions)?;
        crate::check_cancel(self.opts.cancel.as_deref())?;
        tmp.finish(self.opts.force)?;
        Ok(Summary {
            kind: "safetensors",
            tensors: done.tensors,
            copied: done.copied,
            kept: done.kept,
            notes: done.notes,
            total: done.total,
        })
    }

    /// Copies the next `bytes` bytes of the input to the output unchanged.
    fn copy_tensor(
        &mut self,
        f: &mut File,
        w: &mut Writer<'_>,
        bytes: u64,
        buf: &mut Vec<u8>,
    ) -> Result<()> {
        let mut left = bytes;
        buf.resize((1 << 20).min(bytes as usize), 0);
        while left > 0 {
            crate::check_cancel(self.opts.cancel.as_deref())?;
            let m = left.min(buf.len() as u64) as usize;
            f.read_exact(&mut buf[..m]).map_err(|err| {
                if err.kind() == std::io::ErrorKind::UnexpectedEof {
                    Error::Corrupt(format!(
                        "{}: the data ends early (truncated file)",
                        self.input.display()
                    ))
                } else {
                    Error::io("read", self.input, err)
                }
            })?;
            w.write_all(&buf[..m])
                .map_err(|err| Error::io("write", self.output, err))?;
            left -= m as u64;
            self.tick(m as u64);
        }
        Ok(())
    }

    /// Streams the next tensor's elements through `plan` into `w`, and its block scales (if
    /// any) through the second handle at byte `scales_at` of the output. Returns the
    /// statistics and the scale tensor's region (its start relative to the data section is
    /// the caller's to set).
    fn convert_tensor(
        &mut self,
        f: &mut File,
        w: &mut Writer<'_>,
        scale_file: Option<&mut File>,
        plan: &Plan,
        c: &StConvert,
        scales_at: u64,
    ) -> Result<(Stats, Option<Region>)> {
        let out_path = self.output.to_path_buf();
        let mut sw = match (&c.scale, scale_file) {
            (Some(_), Some(sf)) => {
                sf.seek(SeekFrom::Start(scales_at))
                    .map_err(|err| Error::io("write", &out_path, err))?;
                Some(Hashing::new(BufWriter::with_capacity(1 << 20, sf)))
            }
            _ => None,
        };
        let op = out_path.clone();
        let mut scales = |b: &[u8]| -> Result<()> {
            if let Some(sw) = sw.as_mut() {
                sw.write_all(b)
                    .map_err(|err| Error::io("write", &op, err))?;
            }
            Ok(())
        };
        let stats = self.stream(plan, f, c.n, w, &mut scales)?;
        let Some((sname, sbytes)) = &c.scale else {
            return Ok((stats, None));
        };
        let mut sw = sw.expect("a scale writer for each scaled tensor");
        sw.flush()
            .map_err(|err| Error::io("write", &out_path, err))?;
        let (hash, written) = sw.take();
        if written != *sbytes {
            return Err(short_region(&out_path, sname, *sbytes, written));
        }
        let region = Region {
            name: sname.clone(),
            start: 0,
            len: *sbytes,
            hash,
        };
        Ok((stats, Some(region)))
    }
}

/// The bytes of the second-level scale as the layout stores it (gpucvt's `f32` `s2`, or a
/// stack's form of it).
fn stored_second(storage: Option<&Storage>, s2: Option<[u8; 4]>) -> Option<[u8; 4]> {
    let s2 = s2?;
    Some(match storage.and_then(|s| s.second) {
        Some((_, how)) => stacks::second_bytes(how, s2),
        None => s2,
    })
}

/// A second handle on the output, which writes the scales of a tensor in place after it
/// while the first moves on past them; `None` when no tensor is scaled. (The scales of a
/// tensor come out while its elements stream, and go after them.)
fn second_handle(tmp: &Temp, layout: &StLayout, out_path: &Path) -> Result<Option<File>> {
    let scaled = layout
        .entries
        .iter()
        .any(|e| matches!(&e.action, StAction::Convert(c) if c.scale.is_some()));
    if !scaled {
        return Ok(None);
    }
    tmp.file
        .reopen()
        .map(Some)
        .map_err(|e| Error::io("write", out_path, e))
}

impl Written {
    /// Records the tensor just written (`bytes` of it, checked against what `w` counted) and
    /// the scale tensor after it, over whose bytes `w` steps.
    fn end_tensor(
        &mut self,
        w: &mut Writer<'_>,
        name: String,
        bytes: u64,
        scales: Vec<Region>,
        out_path: &Path,
    ) -> Result<()> {
        let (hash, written) = w.take();
        if written != bytes {
            return Err(short_region(out_path, &name, bytes, written));
        }
        self.regions.push(Region {
            name,
            start: self.at,
            len: bytes,
            hash,
        });
        self.at += bytes;
        for r in scales {
            // The scale tensors follow: step over the bytes the second handle wrote.
            w.get_mut()
                .seek(SeekFrom::Current(r.len as i64))
                .map_err(|err| Error::io("write", out_path, err))?;
            self.at += r.len;
            self.regions.push(r);
        }
        Ok(())
    }
}
