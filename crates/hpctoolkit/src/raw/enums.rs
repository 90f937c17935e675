//! The enumerations of meta.db, one representation for the reader, the model and the writers.
//!
//! FORMATS.md (Reader compatibility) lets later minor versions add values to every enumeration,
//! so each is an open newtype over the stored integer with named constants, as gimli does for
//! DWARF constants: an unknown value is kept as it is, never rejected, and written back unchanged.

macro_rules! open_enum {
    (
        $(#[$doc:meta])*
        $name:ident($repr:ty) {
            $($(#[$vdoc:meta])* $konst:ident = $val:expr, $label:literal;)*
        }
    ) => {
        $(#[$doc])*
        ///
        /// Unknown values (from newer minor versions) are kept as they are, never rejected
        /// (FORMATS.md, Reader compatibility).
        ///
        /// `Debug` prints the constant's path (`Relation::CALL`), and an unknown value as the
        /// type around its number (`Relation(7)`), as gimli prints DWARF constants.
        #[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
        #[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
        #[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
        pub struct $name(pub $repr);

        impl $name {
            $($(#[$vdoc])* pub const $konst: $name = $name($val);)*

            /// The name of a known value, as `hpctesttool.formats.print` spells it (`None` for a
            /// value this crate does not know).
            pub const fn name(self) -> Option<&'static str> {
                match self.0 {
                    $($val => Some($label),)*
                    _ => None,
                }
            }

            /// The name of a known value's constant (`"INLINED_CALL"`; `None` for a value this
            /// crate does not know).
            pub const fn constant_name(self) -> Option<&'static str> {
                match self.0 {
                    $($val => Some(stringify!($konst)),)*
                    _ => None,
                }
            }
        }

        impl std::fmt::Debug for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                match self.constant_name() {
                    Some(konst) => write!(f, "{}::{konst}", stringify!($name)),
                    None => write!(f, "{}({})", stringify!($name), self.0),
                }
            }
        }

        /// The name of a known value (`name()`), else `unknown_<value>`.
        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                match self.name() {
                    Some(name) => f.write_str(name),
                    None => write!(f, "unknown_{}", self.0),
                }
            }
        }
    };
}

open_enum!(
    /// The type of a propagation scope (meta.db, {PS} `type`).
    ScopeType(u8) {
        /// Custom scope, not defined in meta.db (e.g. `lex_aware`).
        CUSTOM = 0, "custom";
        /// No propagation (`point`).
        POINT = 1, "point";
        /// Propagation from every descendant (`execution`).
        EXECUTION = 2, "execution";
        /// Propagation along contexts whose `propagation` bit is set (e.g. `function`).
        TRANSITIVE = 3, "transitive";
    }
);

open_enum!(
    /// How summary statistics combine per-profile values (meta.db, {SS} `combine`).
    Combine(u8) {
        /// Sum of the inputs.
        SUM = 0, "sum";
        /// Minimum of the inputs.
        MIN = 1, "min";
        /// Maximum of the inputs.
        MAX = 2, "max";
    }
);

open_enum!(
    /// The kind of an entry point (meta.db, {Entry} `entryPoint`).
    EntryPointKind(u16) {
        /// No recognised outside caller.
        UNKNOWN = 0, "unknown_entry";
        /// Setup code of the main thread.
        MAIN_THREAD = 1, "main_thread";
        /// Setup code of application threads.
        APPLICATION_THREAD = 2, "application_thread";
    }
);

open_enum!(
    /// The relation of a context to its parent (meta.db, {Ctx} `relation`).
    Relation(u8) {
        /// Enclosing lexical context, no call.
        LEXICAL = 0, "lexical";
        /// A normal call.
        CALL = 1, "call";
        /// An inlined call.
        INLINED_CALL = 2, "inlined_call";
    }
);

open_enum!(
    /// What a context represents (meta.db, {Ctx} `lexicalType`).
    LexicalType(u8) {
        /// A function-like construct.
        FUNCTION = 0, "function";
        /// A loop.
        LOOP = 1, "loop";
        /// A source line.
        LINE = 2, "line";
        /// A single instruction.
        INSTRUCTION = 3, "instruction";
    }
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_values_have_names_and_unknown_ones_stay_numbers() {
        assert_eq!(ScopeType::TRANSITIVE.name(), Some("transitive"));
        assert_eq!(EntryPointKind(1), EntryPointKind::MAIN_THREAD);
        assert_eq!(LexicalType(9).name(), None);
        assert_eq!(Relation(200).0, 200);
    }

    #[test]
    fn names_display_and_unknown_values_show_their_number() {
        assert_eq!(ScopeType::TRANSITIVE.to_string(), "transitive");
        assert_eq!(Combine(9).to_string(), "unknown_9");
        assert_eq!(Relation::INLINED_CALL.to_string(), "inlined_call");
    }

    #[test]
    fn debug_prints_the_constant_and_unknown_values_their_number() {
        assert_eq!(format!("{:?}", Relation::CALL), "Relation::CALL");
        assert_eq!(format!("{:?}", Relation(2)), "Relation::INLINED_CALL");
        assert_eq!(format!("{:?}", LexicalType(0)), "LexicalType::FUNCTION");
        assert_eq!(format!("{:?}", Relation(7)), "Relation(7)");
        assert_eq!(
            format!("{:?}", ScopeType::EXECUTION),
            "ScopeType::EXECUTION"
        );
        assert_eq!(format!("{:?}", Combine(9)), "Combine(9)");
        assert_eq!(
            format!("{:?}", EntryPointKind::MAIN_THREAD),
            "EntryPointKind::MAIN_THREAD"
        );
        // Inside a derived Debug, as a context prints.
        assert_eq!(
            format!("{:?}", Some(LexicalType::LOOP)),
            "Some(LexicalType::LOOP)"
        );
    }
}
