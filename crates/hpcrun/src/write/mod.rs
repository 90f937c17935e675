//! Writers for every version the reader supports, and for `.hpctrace`.
//!
//! The layouts are those of the readers (`crate::format`); the 04.00 writer lays sections out as
//! hpcrun's `write_data.c` does (each at the next multiple of 1024, gaps zero, the footer last), so
//! a file hpcrun wrote comes back byte for byte.

use binrw::BinWrite;
use zerocopy::IntoBytes;
use zerocopy::byteorder::{BigEndian, I32, U16, U64};

use crate::Text;
use crate::model::*;
use crate::raw::{
    self, CctRecord, EpochFixedNew, EpochFixedOld, Footer, MetricAuxRaw, MetricFlagsRaw,
};

/// Why a model could not be written in its version.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WriteError {
    /// The model does not fit the version's layout.
    #[error("{what}: cannot be written as {version}: {why}")]
    Model {
        /// The version being written.
        version: &'static str,
        /// The part of the model.
        what: &'static str,
        /// What is wrong.
        why: &'static str,
    },
    /// The output failed.
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

fn model_err(version: Version, what: &'static str, why: &'static str) -> WriteError {
    WriteError::Model {
        version: version.as_str(),
        what,
        why,
    }
}

/// A growing output in one byte order.
pub(crate) struct W {
    pub(crate) buf: Vec<u8>,
    le: bool,
}

impl W {
    fn new(le: bool, capacity: usize) -> Self {
        W {
            buf: Vec::with_capacity(capacity),
            le,
        }
    }
    fn u16(&mut self, v: u16) {
        self.buf.extend_from_slice(&if self.le {
            v.to_le_bytes()
        } else {
            v.to_be_bytes()
        });
    }
    fn u32(&mut self, v: u32) {
        self.buf.extend_from_slice(&if self.le {
            v.to_le_bytes()
        } else {
            v.to_be_bytes()
        });
    }
    fn u64(&mut self, v: u64) {
        self.buf.extend_from_slice(&if self.le {
            v.to_le_bytes()
        } else {
            v.to_be_bytes()
        });
    }
    fn count(&mut self, n: usize, version: Version, what: &'static str) -> Result<(), WriteError> {
        let n =
            u32::try_from(n).map_err(|_| model_err(version, what, "more than u32::MAX items"))?;
        self.u32(n);
        Ok(())
    }
    fn text(&mut self, t: &Text, version: Version) -> Result<(), WriteError> {
        self.count(t.0.len(), version, "string")?;
        self.buf.extend_from_slice(&t.0);
        Ok(())
    }
    fn nvpairs(&mut self, pairs: &[NvPair], version: Version) -> Result<(), WriteError> {
        self.count(pairs.len(), version, "name/value pairs")?;
        for p in pairs {
            self.text(&p.name, version)?;
            self.text(&p.value, version)?;
        }
        Ok(())
    }
    fn fixed<T>(&mut self, value: &T) -> Result<(), WriteError>
    where
        T: for<'x> BinWrite<Args<'x> = ()>,
    {
        let endian = if self.le {
            binrw::Endian::Little
        } else {
            binrw::Endian::Big
        };
        let mut cur = std::io::Cursor::new(Vec::new());
        value
            .write_options(&mut cur, endian, ())
            .map_err(|e| WriteError::Io(std::io::Error::other(e.to_string())))?;
        self.buf.extend_from_slice(&cur.into_inner());
        Ok(())
    }
    /// Zero-fills to the next multiple of 1024 (write_data.c, `MULTIPLE_1024`).
    fn align(&mut self) {
        let len = self.buf.len() as u64;
        let next = len.div_ceil(raw::SECTION_ALIGN) * raw::SECTION_ALIGN;
        self.buf.resize(next as usize, 0);
    }
    fn pos(&self) -> u64 {
        self.buf.len() as u64
    }
}

/// The 16 flag bytes for a 02.00b+ descriptor; legacy flags become a raw metric of the same value
/// format (shown, with percentages).
pub fn flag_fields(flags: MetricFlags) -> MetricFlagFields {
    match flags {
        MetricFlags::Fields(f) => f,
        MetricFlags::Legacy(bits) => MetricFlagFields {
            kind: 1,
            value_type: 0,
            value_format: if bits & raw::LEGACY_METRIC_FLAG_REAL != 0 {
                2
            } else {
                1
            },
            move2proc: 0,
            partner: 0,
            show: 1,
            show_percent: 1,
            unused: 0,
        },
    }
}

/// The u64 flags for a 02.00l/01.98b descriptor: only the value format survives.
pub fn legacy_flags(flags: MetricFlags) -> u64 {
    match flags {
        MetricFlags::Legacy(bits) => bits,
        MetricFlags::Fields(f) if f.value_format == 2 => raw::LEGACY_METRIC_FLAG_REAL,
        MetricFlags::Fields(_) => 0,
    }
}

fn metric_table(w: &mut W, metrics: &[MetricDesc], version: Version) -> Result<(), WriteError> {
    w.count(metrics.len(), version, "metric table")?;
    for m in metrics {
        if version.is_legacy() {
            w.text(&m.name, version)?;
            w.u64(legacy_flags(m.flags));
            w.u64(m.period);
            continue;
        }
        w.text(&m.name, version)?;
        w.text(&m.description, version)?;
        let f = flag_fields(m.flags);
        w.fixed(&MetricFlagsRaw {
            ty: f.kind,
            val_ty: f.value_type,
            val_fmt: f.value_format,
            move2proc: f.move2proc,
            partner: f.partner,
            show: f.show,
            show_percent: f.show_percent,
            unused: f.unused,
        })?;
        w.u64(m.period);
        w.text(&m.formula, version)?;
        w.text(&m.format, version)?;
        if version.has_metric_aux() {
            let a = m.aux.unwrap_or_default();
            w.fixed(&MetricAuxRaw {
                is_frequency: a.is_frequency,
                is_multiplexed: a.is_multiplexed,
                threshold_mean: a.threshold_mean,
                num_samples: a.num_samples,
            })?;
        }
    }
    Ok(())
}

fn loadmap(w: &mut W, lms: &[LoadModule], version: Version) -> Result<(), WriteError> {
    w.count(lms.len(), version, "load map")?;
    for lm in lms {
        if version.is_legacy() {
            w.text(&lm.name, version)?;
            w.u64(lm.vaddr);
            w.u64(lm.mapaddr);
        } else {
            w.u16(lm.id);
            w.text(&lm.name, version)?;
            w.u64(lm.flags);
        }
    }
    Ok(())
}

fn epoch(w: &mut W, e: &Epoch, version: Version) -> Result<(), WriteError> {
    let h = e.header.clone().unwrap_or_default();
    w.buf.extend_from_slice(raw::EPOCH_TAG);
    if version.is_legacy() {
        w.fixed(&EpochFixedOld {
            flags: h.flags,
            ra_distance: h.ra_distance,
            granularity: h.granularity,
        })?;
    } else {
        w.fixed(&EpochFixedNew {
            flags: h.flags,
            granularity: h.granularity,
            ra_distance: h.ra_distance,
        })?;
    }
    w.nvpairs(&h.nvpairs, version)?;
    metric_table(w, &e.metrics, version)?;
    loadmap(w, &e.loadmap, version)?;
    let nm = e.metrics.len();
    if e.values.len() != e.cct.len() * nm {
        return Err(model_err(
            version,
            "epoch values",
            "the dense values are not one per node and metric",
        ));
    }
    let lush = version == Version::V0200L || h.is_logical_unwind();
    w.u64(e.cct.len() as u64);
    for (i, n) in e.cct.iter().enumerate() {
        w.u32(n.id as u32);
        w.u32(n.parent as u32);
        let l = n.lush.unwrap_or_default();
        if lush {
            w.u32(l.assoc);
        }
        if !version.is_legacy() {
            w.u16(n.lm_id);
        }
        w.u64(n.ip);
        if lush {
            w.u64(l.lip[0]);
            w.u64(l.lip[1]);
        }
        for &v in &e.values[i * nm..(i + 1) * nm] {
            w.u64(v);
        }
    }
    Ok(())
}

/// Encodes a measurement in the layout of its [`Measurement::version`].
pub fn write_measurement(m: &Measurement) -> Result<Vec<u8>, WriteError> {
    let version = m.version;
    if version == Version::V0400B {
        return write_v4(m);
    }
    let mut w = W::new(version.is_little_endian(), 4096);
    w.buf.extend_from_slice(version.magic());
    w.nvpairs(&m.header, version)?;
    for e in &m.epochs {
        epoch(&mut w, e, version)?;
    }
    Ok(w.buf)
}

fn write_v4(m: &Measurement) -> Result<Vec<u8>, WriteError> {
    let version = Version::V0400B;
    let [e] = m.epochs.as_slice() else {
        return Err(model_err(
            version,
            "epochs",
            "04.00 holds exactly one epoch",
        ));
    };
    let empty = SparseMetrics {
        end: SparseContext {
            ctx: raw::CONTEXT_END,
            start: 0,
        },
        ..SparseMetrics::default()
    };
    let sparse = m.sparse.as_ref().unwrap_or(&empty);
    let estimate = 8192
        + e.cct.len() * 19
        + sparse.values.len() * 10
        + sparse.contexts.len() * 12
        + e.metrics.len() * 256;
    let mut w = W::new(false, estimate);
    let mut f = Footer {
        magic: raw::FOOTER_MAGIC,
        ..Footer::default()
    };

    w.buf.extend_from_slice(version.magic());
    w.nvpairs(&m.header, version)?;
    f.hdr_end = w.pos();
    w.align();

    f.loadmap_start = w.pos();
    loadmap(&mut w, &e.loadmap, version)?;
    f.loadmap_end = w.pos();
    w.align();

    f.cct_start = w.pos();
    w.u64(e.cct.len() as u64);
    let records: Vec<CctRecord> = e
        .cct
        .iter()
        .map(|n| CctRecord {
            id: I32::<BigEndian>::new(n.id),
            parent: I32::new(n.parent),
            lm_id: U16::new(n.lm_id),
            lm_ip: U64::new(n.ip),
            flags: n.flags,
        })
        .collect();
    w.buf.extend_from_slice(records.as_bytes());
    f.cct_end = w.pos();
    w.align();

    f.metric_tbl_start = w.pos();
    metric_table(&mut w, &e.metrics, version)?;
    f.metric_tbl_end = w.pos();
    w.align();

    f.dictionary_start = w.pos();
    let n = u16::try_from(m.dictionary.len())
        .map_err(|_| model_err(version, "id-tuple dictionary", "more than u16::MAX entries"))?;
    w.u16(n);
    for d in &m.dictionary {
        w.u16(d.kind);
        w.text(&d.name, version)?;
    }
    f.dictionary_end = w.pos();
    w.align();

    f.sparse_start = w.pos();
    let n = u16::try_from(sparse.id_tuple.len())
        .map_err(|_| model_err(version, "id tuple", "more than u16::MAX elements"))?;
    w.u16(n);
    for id in &sparse.id_tuple {
        w.u16(id.kind);
        w.u64(id.physical);
        w.u64(id.logical);
    }
    w.u64(sparse.values.len() as u64);
    let nnz = u32::try_from(sparse.contexts.len())
        .map_err(|_| model_err(version, "sparse contexts", "more than u32::MAX contexts"))?;
    w.u32(nnz);
    write_sparse_values(&mut w.buf, &sparse.values);
    for c in sparse.contexts.iter().chain(std::iter::once(&sparse.end)) {
        w.u32(c.ctx);
        w.u64(c.start);
    }
    f.sparse_end = w.pos();
    w.align();

    f.footer_start = w.pos();
    w.fixed(&f)?;
    Ok(w.buf)
}

/// Appends sparse values as 10-byte big-endian records, a block at a time.
fn write_sparse_values(out: &mut Vec<u8>, values: &[SparseValue]) {
    let mut block = Vec::with_capacity(4096);
    for chunk in values.chunks(4096) {
        block.clear();
        block.extend(chunk.iter().map(|v| raw::SparseValueRecord {
            value: U64::new(v.value),
            metric: U16::new(v.metric),
        }));
        out.extend_from_slice(block.as_bytes());
    }
}

/// Encodes a trace.
pub fn write_trace(t: &Trace) -> Vec<u8> {
    let dc = t.is_data_centric();
    let mut out = Vec::with_capacity(32 + t.records.len() * if dc { 16 } else { 12 });
    out.extend_from_slice(t.version.magic());
    if t.version == TraceVersion::V0101B {
        out.extend_from_slice(&t.flags.to_be_bytes());
    }
    for r in &t.records {
        out.extend_from_slice(&r.time.to_be_bytes());
        out.extend_from_slice(&r.ctx.to_be_bytes());
        if dc {
            out.extend_from_slice(&r.metric.unwrap_or(0).to_be_bytes());
        }
    }
    out
}

impl Measurement {
    /// Writes this measurement in the layout of its version.
    pub fn write(&self, mut out: impl std::io::Write) -> Result<(), WriteError> {
        out.write_all(&write_measurement(self)?)?;
        Ok(())
    }
}

impl Trace {
    /// Writes this trace.
    pub fn write(&self, mut out: impl std::io::Write) -> std::io::Result<()> {
        out.write_all(&write_trace(self))
    }
}
