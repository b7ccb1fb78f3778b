//! Writing a `.safetensors` output from its layout: the header, then each tensor copied or
//! streamed through its plan, scales written in place after it by a second handle.

use crate::error::{Error, Result};
use crate::files::safetensors::layout::{StAction, StLayout};
use crate::files::selfcheck::{self, Hashing, Region};
use crate::files::{short_region, Ctx, Plans};
use crate::output::Temp;
use crate::{Kept, Stats, Summary, TensorSummary};
use std::fs::File;
use std::io::{BufWriter, Read, Seek, SeekFrom, Write};

impl Ctx<'_> {
    pub(crate) fn safetensors(&mut self, f: &mut File, mut layout: StLayout) -> Result<Summary> {
        let file = self.input.display().to_string();
        let out_path = self.output.to_path_buf();
        let mut tmp = Temp::new(self.output)?;
        let data_start = layout.header.len() as u64;
        // The scales of a tensor come out while its elements stream and go after them: a
        // second handle writes them in place while the first moves on past them.
        let mut scale_file = if layout
            .entries
            .iter()
            .any(|e| matches!(&e.action, StAction::Convert(c) if c.scale.is_some()))
        {
            Some(
                tmp.file
                    .reopen()
                    .map_err(|e| Error::io("write", &out_path, e))?,
            )
        } else {
            None
        };
        let mut w = Hashing::new(BufWriter::with_capacity(1 << 20, tmp.file.as_file_mut()));
        w.write_all(&layout.header)
            .map_err(|e| Error::io("write", &out_path, e))?;
        w.take();
        // (A header can be 100 MB: it is not needed again, the self-check reads it back.)
        layout.header = Vec::new();
        self.tick(layout.in_data_start);
        let mut regions = Vec::with_capacity(layout.entries.len());
        let mut plans = Plans::default();
        let (mut tensors, mut copied, mut kept) = (Vec::new(), Vec::new(), Vec::new());
        tensors.reserve_exact(
            layout
                .entries
                .iter()
                .filter(|e| matches!(e.action, StAction::Convert(_)))
                .count(),
        );
        let mut total = Stats::default();
        let mut at = 0u64;
        let mut buf = Vec::new();
        for mut e in layout.entries {
            let mut scale_region = None;
            match e.action {
                StAction::Copy | StAction::Keep(_) => {
                    let mut left = e.in_bytes;
                    buf.resize((1 << 20).min(e.in_bytes as usize), 0);
                    while left > 0 {
                        let m = left.min(buf.len() as u64) as usize;
                        f.read_exact(&mut buf[..m]).map_err(|err| {
                            if err.kind() == std::io::ErrorKind::UnexpectedEof {
                                Error::Corrupt(format!(
                                    "{file}: the data ends early (truncated file)"
                                ))
                            } else {
                                Error::io("read", self.input, err)
                            }
                        })?;
                        w.write_all(&buf[..m])
                            .map_err(|err| Error::io("write", &out_path, err))?;
                        left -= m as u64;
                        self.tick(m as u64);
                    }
                    match e.action {
                        StAction::Keep(reason) => kept.push(Kept {
                            name: e.name.clone(),
                            reason,
                        }),
                        _ => copied.push(e.name.clone()),
                    }
                }
                StAction::Convert(c) => {
                    let key = layout.keys[c.key as usize];
                    let plan = plans.get(key, c.stream);
                    let mut sw = match (&c.scale, scale_file.as_mut()) {
                        (Some(_), Some(sf)) => {
                            sf.seek(SeekFrom::Start(data_start + at + e.out_bytes))
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
                    let stats = self.stream(plan, f, c.n, &mut w, &mut scales)?;
                    if let Some((sname, sbytes)) = &c.scale {
                        let mut sw = sw.expect("a scale writer for each scaled tensor");
                        sw.flush()
                            .map_err(|err| Error::io("write", &out_path, err))?;
                        let (hash, written) = sw.take();
                        if written != *sbytes {
                            return Err(short_region(&out_path, sname, *sbytes, written));
                        }
                        scale_region = Some(Region {
                            name: sname.clone(),
                            start: at + e.out_bytes,
                            len: *sbytes,
                            hash,
                        });
                    }
                    total.merge(&stats);
                    tensors.push(TensorSummary {
                        name: e.name.clone(),
                        from: key.conv.src.name.to_string(),
                        to: key.conv.dst.name.to_string(),
                        dtype: format!("{:?}", e.out_dtype),
                        shape: std::mem::take(&mut e.shape),
                        scale: c.scale.map(|s| s.0),
                        stats,
                    });
                }
            }
            let (hash, written) = w.take();
            if written != e.out_bytes {
                return Err(short_region(&out_path, &e.name, e.out_bytes, written));
            }
            regions.push(Region {
                name: e.name,
                start: at,
                len: e.out_bytes,
                hash,
            });
            at += e.out_bytes;
            if let Some(r) = scale_region {
                // The scale tensor follows: step over the bytes the second handle wrote.
                w.get_mut()
                    .seek(SeekFrom::Current(r.len as i64))
                    .map_err(|err| Error::io("write", &out_path, err))?;
                at += r.len;
                regions.push(r);
            }
        }
        w.flush().map_err(|e| Error::io("write", &out_path, e))?;
        drop(w.into_inner());
        drop(scale_file);
        selfcheck::verify_safetensors(tmp.file.path(), &out_path, &regions)?;
        tmp.finish()?;
        Ok(Summary {
            kind: "safetensors",
            tensors,
            copied,
            kept,
            notes: Vec::new(),
            total,
        })
    }
}
