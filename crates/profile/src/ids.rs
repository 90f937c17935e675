//! Typed handles into the tables of one [`Profile`](crate::Profile).
//!
//! A handle is a `u32` index. Handles are only made by a
//! [`ProfileBuilder`](crate::ProfileBuilder) or handed out by a profile's own iterators, so a
//! handle always names an entry of the profile it came from; using it with another profile is a
//! logic error (the accessors then panic or return an unrelated entry).

macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        #[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
        #[cfg_attr(feature = "serde", serde(transparent))]
        pub struct $name(pub(crate) u32);

        impl $name {
            /// The position of this entry in its table (creation order).
            pub fn index(self) -> usize {
                self.0 as usize
            }
        }
    };
}

id_type!(
    /// An interned string: [`Profile::string`](crate::Profile::string).
    StringId
);
id_type!(
    /// A distinct frame: [`Profile::frame`](crate::Profile::frame).
    FrameId
);
id_type!(
    /// A call-tree node, one per distinct (parent, frame): [`Profile::node`](crate::Profile::node).
    NodeId
);
id_type!(
    /// A value type (metric): [`Profile::value_type`](crate::Profile::value_type).
    ValueTypeId
);
id_type!(
    /// A measurement context (thread, rank, process, summary):
    /// [`Profile::context`](crate::Profile::context).
    ContextId
);
id_type!(
    /// A call edge between two frames at a call site: [`Profile::call_edge`](crate::Profile::call_edge).
    EdgeId
);

/// Handles are `u32`; `u32::MAX` is kept free so that no table's length overflows.
pub(crate) const MAX_ENTRIES: u32 = u32::MAX - 1;
