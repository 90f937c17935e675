//! HPCToolkit's program structure files (`.hpcstruct`): the procedures, loops, inlined code and
//! source lines of a load module by address range, as hpcprof reads them (feature `symbolize`).
//!
//! hpcstruct (HPCToolkit's `src/tool/hpcstruct`) analyses a binary's machine code and debugging
//! information and writes one XML file per binary (`Struct-Output.cpp`); `hpcstruct
//! MEASUREMENTS` puts them in the measurement folder's `structs/` folder, named after each
//! binary's file name (`pmake.txt`). The file belongs to HPCToolkit's measurement, so it is read
//! here; [`crate::symbols`] prefers it to the binary's own DWARF, as hpcprof does. Its grammar:
//!
//! ```text
//! <HPCToolkitStructure i="0" version="4.9" n="">
//! <LM i="2" n="/path/of/the/binary" has-calls="0" v="{}">           a load module
//!   <F i="3" n="/src/prog.c">                                       a source file
//!     <P i="4" n="leaf" l="6" v="{[0x1149-0x114a)}">                a procedure: name, line, entry
//!       <S i="5" l="6" v="{[0x1149-0x1158)}"/>                      a statement: line, ranges
//!       <L i="6" l="8" f="/src/prog.c" v="{[0x1161-0x1162)}">       a loop: line, file, entry
//!         <A i="7" l="9" f="/src/prog.c" n="" v="{}">               an inlined call's site...
//!           <A i="8" l="4" f="/src/prog.c" n="square" v="{}">       ...and the inlined callee
//!             <S i="9" l="4" v="{[0x1170-0x1178) [0x1180-0x1184)}"/>
//! ```
//!
//! Address ranges are `{[lo-hi) [lo-hi) ...}` in hexadecimal, half-open. An `<A>` that is not
//! directly inside another `<A>` only sets the file of what it holds (hpcstruct's "guard
//! alien", for statements from another file); when it holds an `<A>`, the two are an inlined
//! call: the outer one's file and line are the call site, the inner one names the callee.
//!
//! Reading follows hpcprof's reader (`src/lib/profile/finalizers/struct.cpp`,
//! `StructFileParser::parse`): every range of an `<S>` (or `<C>`, a call statement) belongs to
//! that statement and the scopes around it; a range that overlaps a range met earlier in the
//! file is ignored, as hpcprof ignores it ("code regions may be shared by multiple functions");
//! `<P>` inside `<P>`, a statement outside any `<P>` and an unknown element are errors. Two
//! leniencies: a `<P>`'s entry is the start of its first range (hpcprof requires a single-byte
//! range, which every hpcstruct since 2017 writes), and a statement directly inside an inlined
//! callee takes the callee's file (hpcstruct prints a statement there without a guard alien when
//! it is in the callee's file; hpcprof's reader keeps the call site's file for it).
//!
//! Hostile files: reading is a single streaming pass ([`quick_xml`]) without recursion; nesting
//! deeper than [`MAX_DEPTH`] elements is an error; memory is linear in the file (one entry per
//! statement, range and distinct string); no entity is expanded but XML's five and character
//! references; errors say what is wrong and at which byte.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::io::BufRead;
use std::path::Path;

use quick_xml::Reader;
use quick_xml::events::{BytesStart, Event};

/// The deepest nesting of elements read; hpcstruct nests a loop or an inlined call one or two
/// elements deeper than its parent, so real files stay far below.
pub const MAX_DEPTH: usize = 1024;

/// The most characters of a value an error message quotes.
const QUOTED: usize = 64;

/// "No string", "no parent".
const NONE: u32 = u32::MAX;

/// Why a structure file could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum StructError {
    /// The file could not be opened or read.
    #[error("cannot read the structure file: {0}")]
    Io(String),
    /// The file is not well-formed XML.
    #[error("not well-formed XML: at byte {offset:#x}: {message}")]
    Xml {
        /// Where the parser stopped.
        offset: u64,
        /// The XML parser's words.
        message: String,
    },
    /// An attribute holds a value the format does not allow.
    #[error(
        "a structure attribute holds a value the format does not allow: <{element}> {attribute}: \
         at byte {offset:#x}: expected {expected} but found {found:?}"
    )]
    Attribute {
        /// The element.
        element: &'static str,
        /// The attribute.
        attribute: &'static str,
        /// Where the element starts.
        offset: u64,
        /// What the format allows.
        expected: &'static str,
        /// The value (its first 64 characters).
        found: String,
    },
    /// An element where the format allows none.
    #[error(
        "a structure element out of place: <{element}>: at byte {offset:#x}: expected {expected}"
    )]
    Misplaced {
        /// The element's name (its first 64 characters).
        element: String,
        /// Where it starts.
        offset: u64,
        /// What the format allows there.
        expected: &'static str,
    },
    /// Elements nested deeper than [`MAX_DEPTH`].
    #[error(
        "structure nested too deep: <{element}>: at byte {offset:#x}: expected at most {max} \
         nested elements but found more"
    )]
    TooDeep {
        /// The element one too deep.
        element: String,
        /// Where it starts.
        offset: u64,
        /// [`MAX_DEPTH`].
        max: usize,
    },
    /// The file ends before an element is closed, or without a root element.
    #[error(
        "the structure file ends too early: at byte {offset:#x}: expected {expected} but found \
         the end of the file"
    )]
    Unclosed {
        /// The end of the file.
        offset: u64,
        /// What was still expected.
        expected: String,
    },
}

/// What a [`Scope`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ScopeKind {
    /// A procedure (`<P>`): its name, file and line, and its entry address.
    Procedure,
    /// A loop (`<L>`): its file and line, and its entry address.
    Loop,
    /// The call site of an inlined call (the outer `<A>` of a pair): its file and line.
    CallSite,
    /// An inlined callee (the inner `<A>`): its name, file and line.
    Inlined,
    /// A statement (`<S>` or `<C>`): its file and line.
    Statement,
}

/// One scope around an address ([`ModuleStructure::lookup`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Scope<'a> {
    /// What it is.
    pub kind: ScopeKind,
    /// The procedure's or inlined callee's name.
    pub name: Option<&'a str>,
    /// The source file.
    pub file: Option<&'a str>,
    /// The line (none when the file says 0).
    pub line: Option<u32>,
    /// A procedure's or loop's entry address.
    pub entry: Option<u64>,
    /// Which element of the module's structure it is: the same for every address the element
    /// holds, different for two elements alike (hpcprof tells two inlined copies of one
    /// function apart by it).
    pub element: u32,
}

#[derive(Debug, Clone, Copy)]
struct Node {
    kind: ScopeKind,
    name: u32,
    file: u32,
    line: u32,
    parent: u32,
    entry: Option<u64>,
}

/// An address range of a statement: `[lo, hi)`.
#[derive(Debug, Clone, Copy)]
struct Range {
    lo: u64,
    hi: u64,
    statement: u32,
}

/// The structure of one load module (one `<LM>` of a structure file).
#[derive(Debug, Clone)]
pub struct ModuleStructure {
    path: String,
    strings: Vec<Box<str>>,
    nodes: Vec<Node>,
    /// Sorted by `lo`, disjoint.
    ranges: Vec<Range>,
}

impl ModuleStructure {
    /// The load module's path, as the file names it (`<LM n=...>`).
    pub fn path(&self) -> &str {
        &self.path
    }

    /// How many disjoint address ranges of statements it knows.
    pub fn ranges(&self) -> usize {
        self.ranges.len()
    }

    fn statement_at(&self, address: u64) -> Option<u32> {
        let at = self.ranges.partition_point(|r| r.lo <= address);
        let r = self.ranges.get(at.checked_sub(1)?)?;
        (address < r.hi).then_some(r.statement)
    }

    /// Whether `address` lies in a statement.
    pub fn contains(&self, address: u64) -> bool {
        self.statement_at(address).is_some()
    }

    /// The scopes around `address`, outermost first: its procedure, then the loops, inlined
    /// calls (a [`ScopeKind::CallSite`] and its [`ScopeKind::Inlined`] callee) and the
    /// statement, last. `None` when no statement holds the address.
    pub fn lookup(&self, address: u64) -> Option<Vec<Scope<'_>>> {
        let mut at = self.statement_at(address)?;
        let mut scopes = Vec::new();
        // Parents come before their children in `nodes`, so the walk ends.
        while at != NONE {
            let node = self.nodes[at as usize];
            scopes.push(Scope {
                kind: node.kind,
                name: self.string(node.name),
                file: self.string(node.file),
                line: (node.line != 0).then_some(node.line),
                entry: node.entry,
                element: at,
            });
            at = node.parent;
        }
        scopes.reverse();
        Some(scopes)
    }

    fn string(&self, id: u32) -> Option<&str> {
        self.strings.get(id as usize).map(|s| &**s)
    }
}

/// Reads the structure file at `path`: one [`ModuleStructure`] per `<LM>`.
pub fn read(path: &Path) -> Result<Vec<ModuleStructure>, StructError> {
    let file = std::fs::File::open(path).map_err(|e| StructError::Io(e.to_string()))?;
    parse_from(std::io::BufReader::new(file))
}

/// Reads a structure file's bytes: one [`ModuleStructure`] per `<LM>`.
pub fn parse(xml: &[u8]) -> Result<Vec<ModuleStructure>, StructError> {
    parse_from(xml)
}

/// The elements of the format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tag {
    Root,
    Lm,
    File,
    Procedure,
    Loop,
    /// An `<A>` not directly inside another: a guard, or an inlined call's site.
    Alien,
    /// An `<A>` directly inside an [`Tag::Alien`]: the inlined callee.
    Callee,
    Statement,
    /// A call statement (`<C>`), read as a statement.
    Call,
}

impl Tag {
    fn of(name: &[u8]) -> Option<Tag> {
        Some(match name {
            b"HPCToolkitStructure" => Tag::Root,
            b"LM" => Tag::Lm,
            b"F" => Tag::File,
            b"P" => Tag::Procedure,
            b"L" => Tag::Loop,
            b"A" => Tag::Alien,
            b"S" => Tag::Statement,
            b"C" => Tag::Call,
            _ => return None,
        })
    }

    fn name(self) -> &'static str {
        match self {
            Tag::Root => "HPCToolkitStructure",
            Tag::Lm => "LM",
            Tag::File => "F",
            Tag::Procedure => "P",
            Tag::Loop => "L",
            Tag::Alien | Tag::Callee => "A",
            Tag::Statement => "S",
            Tag::Call => "C",
        }
    }
}

/// An open element and what it gives the elements inside it.
#[derive(Debug, Clone, Copy)]
struct Open {
    tag: Tag,
    /// The file of what it holds.
    file: u32,
    /// The innermost scope (`NONE` outside a procedure or loop).
    node: u32,
    in_procedure: bool,
    /// An [`Tag::Alien`]'s line: the call site, when it holds a callee.
    line: u32,
}

/// The load module being read.
#[derive(Default)]
struct Building {
    path: String,
    strings: Vec<Box<str>>,
    interned: HashMap<Box<str>, u32>,
    nodes: Vec<Node>,
    /// Kept ranges by `lo`: (hi, statement). A range overlapping one of them is ignored.
    ranges: BTreeMap<u64, (u64, u32)>,
}

impl Building {
    fn intern(&mut self, s: &str) -> u32 {
        if let Some(&id) = self.interned.get(s) {
            return id;
        }
        let id = self.strings.len() as u32;
        self.strings.push(s.into());
        self.interned.insert(s.into(), id);
        id
    }

    fn node(&mut self, node: Node) -> u32 {
        self.nodes.push(node);
        (self.nodes.len() - 1) as u32
    }

    /// Keeps `[lo, hi)` for `statement` unless it overlaps a range kept before.
    fn range(&mut self, lo: u64, hi: u64, statement: u32) {
        // Kept ranges are disjoint: the one starting last before `hi` reaches furthest.
        if let Some((_, &(end, _))) = self.ranges.range(..hi).next_back()
            && end > lo
        {
            return;
        }
        self.ranges.insert(lo, (hi, statement));
    }

    fn finish(self) -> ModuleStructure {
        ModuleStructure {
            path: self.path,
            strings: self.strings,
            nodes: self.nodes,
            ranges: self
                .ranges
                .into_iter()
                .map(|(lo, (hi, statement))| Range { lo, hi, statement })
                .collect(),
        }
    }
}

/// The first [`QUOTED`] characters of `s`.
fn quote(s: &str) -> String {
    match s.char_indices().nth(QUOTED) {
        Some((at, _)) => format!("{}…", &s[..at]),
        None => s.to_owned(),
    }
}

/// One element's attributes, unescaped.
struct Attributes<'a> {
    tag: Tag,
    offset: u64,
    values: Vec<(&'static str, Cow<'a, str>)>,
}

impl<'a> Attributes<'a> {
    fn read(e: &'a BytesStart<'_>, tag: Tag, offset: u64) -> Result<Attributes<'a>, StructError> {
        let xml = |e: &dyn std::fmt::Display| StructError::Xml {
            offset,
            message: format!("<{}>: {e}", tag.name()),
        };
        let mut values = Vec::new();
        for a in e.attributes() {
            let a = a.map_err(|e| xml(&e))?;
            // Only the attributes the format reads are kept.
            let key = match a.key.as_ref() {
                b"n" => "n",
                b"f" => "f",
                b"l" => "l",
                b"v" => "v",
                _ => continue,
            };
            let value = a
                .normalized_value(quick_xml::XmlVersion::Implicit1_0)
                .map_err(|e| xml(&e))?;
            values.push((key, value));
        }
        Ok(Attributes {
            tag,
            offset,
            values,
        })
    }

    fn get(&self, key: &str) -> Option<&str> {
        self.values
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, v)| &**v)
    }

    fn error(&self, attribute: &'static str, expected: &'static str) -> StructError {
        StructError::Attribute {
            element: self.tag.name(),
            attribute,
            offset: self.offset,
            expected,
            found: quote(self.get(attribute).unwrap_or_default()),
        }
    }

    /// The line `l` (0 when absent or empty: unknown).
    fn line(&self) -> Result<u32, StructError> {
        match self.get("l").map(str::trim) {
            None | Some("") => Ok(0),
            Some(l) => l
                .parse()
                .map_err(|_| self.error("l", "a line number from 0 to 4294967295")),
        }
    }

    /// The ranges of `v` (none when absent).
    fn ranges(&self) -> Result<Vec<(u64, u64)>, StructError> {
        let Some(v) = self.get("v") else {
            return Ok(Vec::new());
        };
        parse_ranges(v).map_err(|expected| self.error("v", expected))
    }
}

/// `{[lo-hi) [lo-hi) ...}`, hexadecimal with or without `0x`; empty ranges are dropped.
fn parse_ranges(v: &str) -> Result<Vec<(u64, u64)>, &'static str> {
    const SHAPE: &str = "address ranges \"{[0xlo-0xhi) ...}\" in hexadecimal";
    let rest = v.trim();
    let inner = rest
        .strip_prefix('{')
        .and_then(|r| r.strip_suffix('}'))
        .ok_or(SHAPE)?;
    let mut out = Vec::new();
    let mut rest = inner;
    loop {
        rest = rest.trim_start_matches(|c: char| c.is_ascii_whitespace() || c == ',');
        if rest.is_empty() {
            return Ok(out);
        }
        let body = rest.strip_prefix('[').ok_or(SHAPE)?;
        let (range, after) = body.split_once(')').ok_or(SHAPE)?;
        let (lo, hi) = range.split_once('-').ok_or(SHAPE)?;
        let (lo, hi) = (hex(lo).ok_or(SHAPE)?, hex(hi).ok_or(SHAPE)?);
        if hi < lo {
            return Err("address ranges whose ends are not below their starts");
        }
        if lo < hi {
            out.push((lo, hi));
        }
        rest = after;
    }
}

/// A 64-bit hexadecimal number, with or without `0x`.
fn hex(s: &str) -> Option<u64> {
    let s = s.trim();
    let digits = s
        .strip_prefix("0x")
        .or_else(|| s.strip_prefix("0X"))
        .unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    u64::from_str_radix(digits, 16).ok()
}

fn parse_from<R: BufRead>(input: R) -> Result<Vec<ModuleStructure>, StructError> {
    let mut reader = Reader::from_reader(input);
    let mut buf = Vec::new();
    let mut stack: Vec<Open> = Vec::new();
    let mut modules = Vec::new();
    let mut building: Option<Building> = None;
    let mut seen_root = false;
    loop {
        buf.clear();
        let offset = reader.buffer_position();
        let event = reader
            .read_event_into(&mut buf)
            .map_err(|e| StructError::Xml {
                offset: reader.error_position(),
                message: e.to_string(),
            })?;
        let (e, empty) = match event {
            Event::Start(e) => (e, false),
            Event::Empty(e) => (e, true),
            Event::End(_) => {
                // quick-xml checks that the end tag closes the open element.
                if let Some(open) = stack.pop()
                    && open.tag == Tag::Lm
                    && let Some(m) = building.take()
                {
                    modules.push(m.finish());
                }
                continue;
            }
            Event::Eof => {
                return match stack.last() {
                    Some(open) => Err(StructError::Unclosed {
                        offset: reader.buffer_position(),
                        expected: format!("</{}>", open.tag.name()),
                    }),
                    None if !seen_root => Err(StructError::Unclosed {
                        offset: reader.buffer_position(),
                        expected: "<HPCToolkitStructure>".to_owned(),
                    }),
                    None => Ok(modules),
                };
            }
            // The declaration, the DTD, comments, text between elements: nothing to read.
            _ => continue,
        };
        let name = e.name();
        let misplaced = |expected: &'static str| StructError::Misplaced {
            element: quote(&String::from_utf8_lossy(name.as_ref())),
            offset,
            expected,
        };
        if stack.len() >= MAX_DEPTH {
            return Err(StructError::TooDeep {
                element: quote(&String::from_utf8_lossy(name.as_ref())),
                offset,
                max: MAX_DEPTH,
            });
        }
        let Some(mut tag) = Tag::of(name.as_ref()) else {
            return Err(misplaced(
                "one of the elements HPCToolkitStructure, LM, F, P, L, A, S, C",
            ));
        };
        let top = stack.last().copied();
        let Some(top) = top else {
            if tag != Tag::Root || seen_root {
                return Err(misplaced("the one root element <HPCToolkitStructure>"));
            }
            seen_root = true;
            stack.push(Open {
                tag,
                file: NONE,
                node: NONE,
                in_procedure: false,
                line: 0,
            });
            if empty {
                stack.pop();
            }
            continue;
        };
        let a = Attributes::read(&e, tag, offset)?;
        let mut open = Open { tag, ..top };
        match tag {
            Tag::Root => return Err(misplaced("the one root element <HPCToolkitStructure>")),
            Tag::Lm => {
                if top.tag != Tag::Root {
                    return Err(misplaced("<LM> directly inside <HPCToolkitStructure>"));
                }
                building = Some(Building {
                    path: a.get("n").unwrap_or_default().to_owned(),
                    ..Building::default()
                });
                open.file = NONE;
                open.node = NONE;
                open.in_procedure = false;
            }
            _ => {
                let Some(m) = building.as_mut() else {
                    return Err(misplaced("an element inside an <LM>"));
                };
                match tag {
                    Tag::File => {
                        let n = a.get("n").unwrap_or_default();
                        if n.is_empty() {
                            return Err(a.error("n", "a file name"));
                        }
                        open.file = m.intern(n);
                    }
                    Tag::Procedure => {
                        if top.in_procedure {
                            return Err(misplaced("a <P> outside every other <P>"));
                        }
                        let node = Node {
                            kind: ScopeKind::Procedure,
                            name: a.get("n").map_or(NONE, |n| m.intern(n)),
                            file: top.file,
                            line: a.line()?,
                            parent: top.node,
                            entry: a.ranges()?.first().map(|r| r.0),
                        };
                        open.node = m.node(node);
                        open.in_procedure = true;
                    }
                    Tag::Loop => {
                        let file = match a.get("f") {
                            Some(f) if !f.is_empty() => m.intern(f),
                            _ => top.file,
                        };
                        let node = Node {
                            kind: ScopeKind::Loop,
                            name: NONE,
                            file,
                            line: a.line()?,
                            parent: top.node,
                            entry: a.ranges()?.first().map(|r| r.0),
                        };
                        open.node = m.node(node);
                        open.file = file;
                    }
                    Tag::Alien if top.tag == Tag::Alien => {
                        // The callee of an inlined call whose site `top` is.
                        tag = Tag::Callee;
                        open.tag = tag;
                        let site = m.node(Node {
                            kind: ScopeKind::CallSite,
                            name: NONE,
                            file: top.file,
                            line: top.line,
                            parent: top.node,
                            entry: None,
                        });
                        let file = match a.get("f") {
                            Some(f) if !f.is_empty() => m.intern(f),
                            _ => top.file,
                        };
                        let name = a.get("n").map_or(NONE, |n| m.intern(n));
                        open.node = m.node(Node {
                            kind: ScopeKind::Inlined,
                            name,
                            file,
                            line: a.line()?,
                            parent: site,
                            entry: None,
                        });
                        open.file = file;
                    }
                    Tag::Alien => {
                        if let Some(f) = a.get("f").filter(|f| !f.is_empty()) {
                            open.file = m.intern(f);
                        }
                        open.line = a.line()?;
                    }
                    Tag::Statement | Tag::Call => {
                        if !top.in_procedure {
                            return Err(misplaced("a statement inside a <P>"));
                        }
                        let (line, ranges) = (a.line()?, a.ranges()?);
                        if !ranges.is_empty() {
                            let statement = m.node(Node {
                                kind: ScopeKind::Statement,
                                name: NONE,
                                file: top.file,
                                line,
                                parent: top.node,
                                entry: None,
                            });
                            for (lo, hi) in ranges {
                                m.range(lo, hi, statement);
                            }
                        }
                        // What a statement holds (old files nest them) reads as its siblings,
                        // as in hpcprof's reader.
                        open = top;
                        open.tag = tag;
                    }
                    Tag::Root | Tag::Lm | Tag::Callee => {}
                }
            }
        }
        if !empty {
            stack.push(open);
        } else if tag == Tag::Lm
            && let Some(m) = building.take()
        {
            modules.push(m.finish());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_read_as_hpcprof_reads_them() {
        assert_eq!(
            parse_ranges("{[0x10-0x20) [0x30-0x31)}"),
            Ok(vec![(0x10, 0x20), (0x30, 0x31)])
        );
        assert_eq!(parse_ranges("{}"), Ok(vec![]));
        assert_eq!(
            parse_ranges("{[10-20), [0X30-0x30)}"),
            Ok(vec![(0x10, 0x20)])
        );
        assert!(parse_ranges("{[0x20-0x10)}").is_err());
        assert!(parse_ranges("{[0x10-0x20}").is_err());
        assert!(parse_ranges("[0x10-0x20)").is_err());
        assert!(parse_ranges("{[0x10-0x1ffffffffffffffff)}").is_err());
        assert!(parse_ranges("{[0x-0x1)}").is_err());
    }

    #[test]
    fn overlapping_ranges_keep_the_first() {
        let xml = br#"<HPCToolkitStructure i="0" version="4.9" n="">
<LM i="2" n="/bin/x" has-calls="0" v="{}"><F i="3" n="x.c">
<P i="4" n="f" l="1" v="{[0x100-0x101)}"><S i="5" l="2" v="{[0x100-0x110)}"/>
<S i="6" l="3" v="{[0x108-0x120) [0x120-0x130)}"/></P>
</F></LM></HPCToolkitStructure>"#;
        let m = &parse(xml).expect("parse")[0];
        assert_eq!(m.path(), "/bin/x");
        let line = |a| m.lookup(a).and_then(|s| s.last().and_then(|s| s.line));
        assert_eq!(line(0x10f), Some(2));
        assert_eq!(line(0x110), None);
        assert_eq!(line(0x125), Some(3));
    }

    #[test]
    fn quotes_are_cut() {
        assert_eq!(quote(&"x".repeat(100)).chars().count(), QUOTED + 1);
        assert_eq!(quote("short"), "short");
    }
}
