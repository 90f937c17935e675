//! [`Name`]: the bytes of a name or text field, shown as lossy UTF-8.

use std::fmt;

/// A name or text as the file holds it (the C++ library writes whatever `char*` it was given, so
/// it need not be UTF-8), without its final NUL.
///
/// It shows as UTF-8 with U+FFFD for invalid sequences (`Display`, and `Serialize` with the
/// `serde` or `inspect` feature) without allocating, and derefs to the bytes.
///
/// ```
/// use profcodec_easyprofiler::Name;
/// let name = Name(b"frame \xff");
/// assert_eq!(name.to_string(), "frame \u{fffd}");
/// assert_eq!(name, b"frame \xff");
/// assert_eq!(name.len(), 7);
/// assert_eq!(format!("[{:<6}]", Name(b"leaf")), "[leaf  ]");
/// // An owned name (the model's `Vec<u8>`):
/// let owned: Vec<u8> = b"stage".to_vec();
/// assert_eq!(Name::from(&owned).to_string(), "stage");
/// ```
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Name<'a>(pub &'a [u8]);

impl<'a> Name<'a> {
    /// The bytes.
    pub fn as_bytes(&self) -> &'a [u8] {
        self.0
    }
}

impl fmt::Display for Name<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Valid UTF-8 (the usual case) honours width and alignment (`{name:<24}`).
        if let Ok(s) = std::str::from_utf8(self.0) {
            return f.pad(s);
        }
        for chunk in self.0.utf8_chunks() {
            f.write_str(chunk.valid())?;
            if !chunk.invalid().is_empty() {
                f.write_str("\u{fffd}")?;
            }
        }
        Ok(())
    }
}

impl fmt::Debug for Name<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&String::from_utf8_lossy(self.0), f)
    }
}

impl std::ops::Deref for Name<'_> {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        self.0
    }
}

impl AsRef<[u8]> for Name<'_> {
    fn as_ref(&self) -> &[u8] {
        self.0
    }
}

impl<'a> From<&'a [u8]> for Name<'a> {
    fn from(bytes: &'a [u8]) -> Self {
        Name(bytes)
    }
}

/// The owned model keeps names as `Vec<u8>`: `Name::from(&descriptor.name)` shows one.
impl<'a> From<&'a Vec<u8>> for Name<'a> {
    fn from(bytes: &'a Vec<u8>) -> Self {
        Name(bytes)
    }
}

impl PartialEq<[u8]> for Name<'_> {
    fn eq(&self, other: &[u8]) -> bool {
        self.0 == other
    }
}

impl PartialEq<&[u8]> for Name<'_> {
    fn eq(&self, other: &&[u8]) -> bool {
        self.0 == *other
    }
}

impl<const N: usize> PartialEq<[u8; N]> for Name<'_> {
    fn eq(&self, other: &[u8; N]) -> bool {
        self.0 == other
    }
}

impl<const N: usize> PartialEq<&[u8; N]> for Name<'_> {
    fn eq(&self, other: &&[u8; N]) -> bool {
        self.0 == *other
    }
}

impl PartialEq<str> for Name<'_> {
    fn eq(&self, other: &str) -> bool {
        self.0 == other.as_bytes()
    }
}

impl PartialEq<&str> for Name<'_> {
    fn eq(&self, other: &&str) -> bool {
        self.0 == other.as_bytes()
    }
}

// The dump of `inspect` writes names too.
#[cfg(any(feature = "serde", feature = "inspect"))]
impl serde::Serialize for Name<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}
