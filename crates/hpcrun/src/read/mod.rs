//! Readers: version detection, the epoch versions (02.00l .. 03.00b) into the owned model, the
//! 04.00 view ([`V4View`]) over borrowed bytes, and the trace view ([`TraceView`]).

use binrw::BinRead;
use profcodec_common::{Cursor, checked_capacity};

use crate::model::*;
use crate::raw::{self, MetricAuxRaw, MetricFlagsRaw};
use crate::{Error, Text};

mod epochs;
mod trace;
mod v4;

pub use trace::{TraceRecords, TraceStream, TraceView, read_trace};
pub use v4::V4View;

/// The version named by a measurement file's magic.
///
/// `02.00b` is returned as [`Version::V0200B`]; whether its metric descriptors carry the four
/// auxiliary fields is only known after reading them ([`read_measurement`] finds out).
pub fn detect_version(data: &[u8]) -> Result<Version, Error> {
    if data.starts_with(b"HPCRUN____") {
        return match data.get(10..16) {
            Some(b"02.00l") => Ok(Version::V0200L),
            Some(v) => Err(unsupported(10, v)),
            None => Err(Cursor::new(data, 0).truncated("magic", 16).into()),
        };
    }
    if data.starts_with(raw::PROFILE_PREFIX) {
        return match data.get(18..24) {
            Some(b"01.98b") => Ok(Version::V0198B),
            Some(b"02.00b") => Ok(Version::V0200B),
            Some(b"03.00b") => Ok(Version::V0300B),
            Some(b"04.00b") => Ok(Version::V0400B),
            Some(v) => Err(unsupported(18, v)),
            None => Err(Cursor::new(data, 0).truncated("magic", 24).into()),
        };
    }
    Err(bad_magic(data))
}

pub(crate) fn unsupported(offset: u64, v: &[u8]) -> Error {
    let mut found = [0u8; 6];
    found[..v.len().min(6)].copy_from_slice(&v[..v.len().min(6)]);
    Error::UnsupportedVersion { offset, found }
}

pub(crate) fn bad_magic(data: &[u8]) -> Error {
    let mut found = [0u8; 18];
    let n = data.len().min(18);
    found[..n].copy_from_slice(&data[..n]);
    Error::BadMagic { found }
}

/// Reads a measurement file of any version into the owned model.
///
/// The file must end where the measurement ends: bytes after a 04.00 footer or after the last
/// epoch are [`Error::TrailingData`] ([`read_measurement_prefix`] reads such a file and says
/// where the measurement ends).
///
/// Time and memory are linear in the input: every count is checked against the bytes left
/// before anything is allocated for it, and each byte is decoded once (a 02.00b file at most
/// twice, once per metric layout).
pub fn read_measurement(data: &[u8]) -> Result<Measurement, Error> {
    let (m, end) = read_measurement_prefix(data)?;
    no_trailing(data, end)?;
    Ok(m)
}

/// Reads the measurement at the start of `data` and returns it with the offset where it ends:
/// the end of the 04.00 footer ([`V4View::parse_prefix`]), or of the last epoch (epochs end
/// where the next bytes do not start with `EPOCH___`). Bytes after that offset are trailing
/// data, which hpcrun never writes.
pub fn read_measurement_prefix(data: &[u8]) -> Result<(Measurement, u64), Error> {
    match detect_version(data)? {
        Version::V0400B => {
            let view = V4View::parse_prefix(data)?;
            Ok((view.to_model()?, view.end()))
        }
        Version::V0200B => {
            // `crate::format`, 02.00b gotcha: releases 2016.12 and 2017.06 wrote 02.00b without the
            // four auxiliary metric fields. Try the later layout first, then the earlier one;
            // a layout that reads the whole file wins, else the one that got further (a
            // layout that stops early on bytes it takes for trailing data loses to one that
            // reads on to a cut epoch).
            let len = data.len() as u64;
            let with_aux = epochs::read_prefix(data, Version::V0200B);
            if matches!(with_aux, Ok((_, end)) if end == len) {
                return with_aux;
            }
            let without = epochs::read_prefix(data, Version::V0200BNoAux);
            // How far a layout got: where its epochs end, or where its damage is.
            let reach = |r: &Result<(Measurement, u64), Error>| match r {
                Ok((_, end)) => (*end, true),
                Err(e) => (e.offset().unwrap_or(0), false),
            };
            if reach(&without) > reach(&with_aux) {
                without
            } else {
                with_aux
            }
        }
        v => epochs::read_prefix(data, v),
    }
}

/// [`Error::TrailingData`] when the stream ends at `end` before the end of `data`.
pub(crate) fn no_trailing(data: &[u8], end: u64) -> Result<(), Error> {
    let len = data.len() as u64;
    if end < len {
        return Err(Error::TrailingData {
            offset: end,
            size: len - end,
        });
    }
    Ok(())
}

/// Reads a measurement as far as it is intact: the epochs (or, for 04.00, nothing) read before the
/// first damage, and that damage. Epoch versions are a stream of epochs, so a truncated file keeps
/// every complete epoch; bytes after the last epoch that do not start another are
/// [`Error::TrailingData`], with every epoch kept.
pub fn read_measurement_partial(data: &[u8]) -> (Option<Measurement>, Option<Error>) {
    match read_measurement(data) {
        Ok(m) => (Some(m), None),
        Err(e) => match detect_version(data) {
            Ok(v) if v.has_epochs() => {
                let partial = |v| {
                    let (m, err, end) = epochs::read_partial(data, v);
                    let err = err.or_else(|| no_trailing(data, end).err());
                    (m, err)
                };
                if v == Version::V0200B {
                    // The layout that kept more epochs read more.
                    let a = partial(Version::V0200B);
                    let b = partial(Version::V0200BNoAux);
                    if b.0.as_ref().map_or(0, |m| m.epochs.len())
                        > a.0.as_ref().map_or(0, |m| m.epochs.len())
                    {
                        return b;
                    }
                    return a;
                }
                partial(v)
            }
            _ => (None, Some(e)),
        },
    }
}

/// A byte reader of one byte order over a cursor: the primitives of `crate::format`.
pub(crate) struct Rd<'a> {
    pub(crate) c: Cursor<'a>,
    pub(crate) le: bool,
}

impl<'a> Rd<'a> {
    pub(crate) fn new(data: &'a [u8], base: u64, le: bool) -> Self {
        Rd {
            c: Cursor::new(data, base),
            le,
        }
    }

    pub(crate) fn u16(&mut self, what: &'static str) -> Result<u16, Error> {
        Ok(if self.le {
            self.c.u16_le(what)?
        } else {
            self.c.u16_be(what)?
        })
    }

    pub(crate) fn u32(&mut self, what: &'static str) -> Result<u32, Error> {
        Ok(if self.le {
            self.c.u32_le(what)?
        } else {
            self.c.u32_be(what)?
        })
    }

    pub(crate) fn u64(&mut self, what: &'static str) -> Result<u64, Error> {
        Ok(if self.le {
            self.c.u64_le(what)?
        } else {
            self.c.u64_be(what)?
        })
    }

    /// `str` = u32 length + bytes.
    pub(crate) fn text(&mut self, what: &'static str) -> Result<Text, Error> {
        let len = self.u32(what)?;
        Ok(Text(self.c.bytes_u64(u64::from(len), what)?.to_vec()))
    }

    /// `nvpairs` = u32 count, then count x (str, str).
    pub(crate) fn nvpairs(&mut self, what: &'static str) -> Result<Vec<NvPair>, Error> {
        let at = self.c.offset();
        let n = self.u32(what)?;
        let cap = checked_capacity(u64::from(n), 8, self.c.remaining(), at, what)?;
        let mut out = Vec::with_capacity(cap);
        for _ in 0..n {
            let name = self.text("nvpair name")?;
            let value = self.text("nvpair value")?;
            out.push(NvPair { name, value });
        }
        Ok(out)
    }

    /// A fixed-size binrw structure of `size` bytes in this reader's byte order.
    pub(crate) fn fixed<T>(&mut self, size: usize, what: &'static str) -> Result<T, Error>
    where
        T: for<'x> BinRead<Args<'x> = ()>,
    {
        let at = self.c.offset();
        let bytes = self.c.bytes(size, what)?;
        let endian = if self.le {
            binrw::Endian::Little
        } else {
            binrw::Endian::Big
        };
        // The slice holds exactly `size` bytes, so the read cannot run short; map any binrw
        // failure to a truncation at the structure's start all the same.
        T::read_options(&mut std::io::Cursor::new(bytes), endian, ()).map_err(|_| {
            Error::Truncated(profcodec_common::Truncated {
                offset: at,
                what,
                needed: size as u64,
                available: bytes.len() as u64,
            })
        })
    }

    /// A metric table: u32 count, then descriptors in the layout of `version`.
    pub(crate) fn metric_table(&mut self, version: Version) -> Result<Vec<MetricDesc>, Error> {
        let at = self.c.offset();
        let n = self.u32("metric count")?;
        let min = if version.is_legacy() { 20 } else { 40 };
        let cap = checked_capacity(u64::from(n), min, self.c.remaining(), at, "metric count")?;
        let mut out = Vec::with_capacity(cap);
        for _ in 0..n {
            out.push(self.metric_desc(version)?);
        }
        Ok(out)
    }

    fn metric_desc(&mut self, version: Version) -> Result<MetricDesc, Error> {
        if version.is_legacy() {
            // hpcrun-fmt.c at 3e304bf29 / the given spec: str name, u64 flags, u64 period.
            let name = self.text("metric name")?;
            let flags = self.u64("metric flags")?;
            let period = self.u64("metric period")?;
            return Ok(MetricDesc {
                name,
                flags: MetricFlags::Legacy(flags),
                period,
                ..MetricDesc::default()
            });
        }
        let name = self.text("metric name")?;
        let description = self.text("metric description")?;
        let f: MetricFlagsRaw = self.fixed(16, "metric flags")?;
        let period = self.u64("metric period")?;
        let formula = self.text("metric formula")?;
        let format = self.text("metric format")?;
        let aux = if version.has_metric_aux() {
            let a: MetricAuxRaw = self.fixed(20, "metric auxiliary fields")?;
            Some(MetricAux {
                is_frequency: a.is_frequency,
                is_multiplexed: a.is_multiplexed,
                threshold_mean: a.threshold_mean,
                num_samples: a.num_samples,
            })
        } else {
            None
        };
        Ok(MetricDesc {
            name,
            description,
            flags: MetricFlags::Fields(MetricFlagFields {
                kind: f.ty,
                value_type: f.val_ty,
                value_format: f.val_fmt,
                move2proc: f.move2proc,
                partner: f.partner,
                show: f.show,
                show_percent: f.show_percent,
                unused: f.unused,
            }),
            period,
            formula,
            format,
            aux,
        })
    }

    /// A load map: u32 count, then entries in the layout of `version`.
    pub(crate) fn loadmap(&mut self, version: Version) -> Result<Vec<LoadModule>, Error> {
        let at = self.c.offset();
        let n = self.u32("load module count")?;
        let min = if version.is_legacy() { 20 } else { 14 };
        let cap = checked_capacity(
            u64::from(n),
            min,
            self.c.remaining(),
            at,
            "load module count",
        )?;
        let mut out = Vec::with_capacity(cap);
        for _ in 0..n {
            out.push(if version.is_legacy() {
                let name = self.text("load module name")?;
                let vaddr = self.u64("load module vaddr")?;
                let mapaddr = self.u64("load module mapaddr")?;
                LoadModule {
                    name,
                    vaddr,
                    mapaddr,
                    ..LoadModule::default()
                }
            } else {
                let id = self.u16("load module id")?;
                let name = self.text("load module name")?;
                let flags = self.u64("load module flags")?;
                LoadModule {
                    id,
                    name,
                    flags,
                    ..LoadModule::default()
                }
            });
        }
        Ok(out)
    }
}
