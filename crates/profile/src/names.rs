//! Function names made short enough to read in a table.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::ops::Range;

/// `name` with its template arguments and parameter lists elided, as pprof's web view shows C++
/// names: `std::vector<int, std::allocator<int> >::push_back(int const&)` becomes
/// `std::vector<…>::push_back(…)`. What a reader needs to tell functions apart stays: the
/// namespaces and class names, operator names (`operator<<`, `operator()`), a trailing
/// `const`, a lambda's number, and the empty lists `()` and `<>`.
///
/// A `<` or `(` counts as the start of a list only after a name (a letter, digit, `_`, or the
/// closing `>` of a template); others (`(anonymous namespace)`, Rust's `<impl Trait for T>`)
/// are kept, with what they contain shortened. Names without lists, and names whose brackets
/// do not balance, are returned as they are.
///
/// ```
/// use profcodec_profile::short_name;
/// assert_eq!(
///     short_name("void Kripke::Kernel_3d_DGZ<Kripke::Grid_Data, 16>::LTimes(Kripke::Grid_Data*, int)"),
///     "void Kripke::Kernel_3d_DGZ<…>::LTimes(…)"
/// );
/// assert_eq!(short_name("operator<<(std::ostream&, Foo const&)"), "operator<<(…)");
/// assert_eq!(short_name("(anonymous namespace)::run()"), "(anonymous namespace)::run()");
/// assert_eq!(short_name("main"), "main");
/// ```
pub fn short_name(name: &str) -> Cow<'_, str> {
    if !name.contains(['<', '(']) {
        return Cow::Borrowed(name);
    }
    match shorten(name) {
        Some(short) if short != name => Cow::Owned(short),
        _ => Cow::Borrowed(name),
    }
}

/// The operator symbols that contain brackets, longest first.
const OPERATORS: &[&str] = &[
    "<<=", "<=>", ">>=", "->*", "<<", "<=", ">>", ">=", "->", "()", "[]", "<", ">",
];

fn shorten(name: &str) -> Option<String> {
    let mut out = String::with_capacity(name.len());
    render(name, 0..name.len(), &Opened::new(), &mut out, None)?;
    Some(out)
}

/// For each list shown in part, the indices of the arguments shown, by the byte offset of the
/// list's opening bracket; lists not named here are elided whole (`<…>`).
type Opened = HashMap<usize, Vec<usize>>;

/// A non-empty list that a rendering elides in whole or in part.
#[derive(Debug, Clone)]
struct Elided {
    /// The byte offset of its opening bracket.
    open: usize,
    /// Its arguments' byte ranges, blanks trimmed.
    args: Vec<Range<usize>>,
    /// The arguments shown.
    shown: Vec<usize>,
}

/// Appends to `out` the part `range` of `name` as a table shows it: lists elided as `<…>` and
/// `(…)`, but for the arguments `opened` names, each shown with its own lists elided likewise
/// (runs of hidden arguments as one `…`). The lists it elides in whole or in part are pushed
/// onto `elided`, in the order they are printed. `None` when a bracket in `range` does not
/// balance.
fn render(
    name: &str,
    range: Range<usize>,
    opened: &Opened,
    out: &mut String,
    mut elided: Option<&mut Vec<Elided>>,
) -> Option<()> {
    let bytes = name.as_bytes();
    let mut i = range.start;
    // Just after an operator's symbol (and blanks): `operator< <int>` has a template list.
    let mut after_operator = false;
    while i < range.end {
        let c = bytes[i];
        // `operator<`, `operator()`: the operator's own symbol, copied.
        if out.ends_with("operator")
            && let Some(op) = OPERATORS
                .iter()
                .find(|op| name[i..range.end].starts_with(**op))
        {
            out.push_str(op);
            i += op.len();
            after_operator = true;
            continue;
        }
        let after_name = after_operator
            || out
                .chars()
                .next_back()
                .is_some_and(|p| p.is_alphanumeric() || p == '_' || p == '>');
        after_operator &= c == b' ';
        if (c == b'<' || c == b'(') && after_name {
            let close = if c == b'<' { '>' } else { ')' };
            let end = matching(&bytes[..range.end], i)?;
            out.push(c as char);
            let shown = opened.get(&i);
            if end == i + 1 {
                // `()` and `<>` say something: no arguments.
            } else if shown.is_none() && elided.is_none() {
                out.push('…');
            } else {
                let args = split_args(bytes, i, end);
                let shown = shown.map_or(&[][..], Vec::as_slice);
                if let Some(elided) = elided.as_deref_mut()
                    && shown.len() < args.len()
                {
                    elided.push(Elided {
                        open: i,
                        args: args.clone(),
                        shown: shown.to_vec(),
                    });
                }
                let mut hidden_before = false;
                for (j, arg) in args.into_iter().enumerate() {
                    let show = shown.contains(&j);
                    if !show && hidden_before {
                        continue;
                    }
                    if j > 0 {
                        out.push_str(", ");
                    }
                    if show {
                        render(name, arg, opened, out, elided.as_deref_mut())?;
                    } else {
                        out.push('…');
                    }
                    hidden_before = !show;
                }
            }
            out.push(close);
            i = end + 1;
            continue;
        }
        // Copy one character (names are UTF-8).
        let ch = name.get(i..)?.chars().next()?;
        out.push(ch);
        i += ch.len_utf8();
    }
    Some(())
}

/// The byte ranges of the arguments of the list between `open` and `close` (its brackets),
/// split at the commas outside nested lists, blanks trimmed.
fn split_args(bytes: &[u8], open: usize, close: usize) -> Vec<Range<usize>> {
    let trim = |mut r: Range<usize>| {
        while r.start < r.end && bytes[r.start] == b' ' {
            r.start += 1;
        }
        while r.end > r.start && bytes[r.end - 1] == b' ' {
            r.end -= 1;
        }
        r
    };
    let mut args = Vec::new();
    let mut stack = Vec::new();
    let mut start = open + 1;
    let mut i = open + 1;
    while i < close {
        if bytes[..i].ends_with(b"operator") {
            let rest = &bytes[i..close];
            if let Some(op) = OPERATORS.iter().find(|op| rest.starts_with(op.as_bytes())) {
                i += op.len();
                continue;
            }
            if rest.starts_with(b",") {
                i += 1;
                continue;
            }
        }
        match bytes[i] {
            b @ (b'<' | b'(') => stack.push(b),
            b'>' if stack.last() == Some(&b'<') => {
                stack.pop();
            }
            b')' if stack.last() == Some(&b'(') => {
                stack.pop();
            }
            b',' if stack.is_empty() => {
                args.push(trim(start..i));
                start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    args.push(trim(start..close));
    args
}

/// The index of the bracket closing the one at `open`, counting `<>` and `()` (and skipping
/// operator symbols inside, such as `operator>` in a template argument).
fn matching(bytes: &[u8], open: usize) -> Option<usize> {
    let mut stack = vec![bytes[open]];
    let mut i = open + 1;
    while i < bytes.len() {
        if bytes[..i].ends_with(b"operator") {
            let rest = &bytes[i..];
            if let Some(op) = OPERATORS.iter().find(|op| rest.starts_with(op.as_bytes())) {
                i += op.len();
                continue;
            }
        }
        match bytes[i] {
            b @ (b'<' | b'(') => stack.push(b),
            b'>' if stack.last() == Some(&b'<') => {
                stack.pop();
            }
            // A comparison in a parenthesized template argument (`Tpl<(1 > 0)>`), or `->`.
            b'>' if stack.last() == Some(&b'(') => {}
            b')' if stack.last() == Some(&b'(') => {
                stack.pop();
            }
            // A `>` or `)` closing nothing open: unbalanced.
            b'>' | b')' => return None,
            _ => {}
        }
        if stack.is_empty() {
            return Some(i);
        }
        i += 1;
    }
    None
}

/// A function as a table row shows it: its full name and where it is defined, for
/// [`distinct_short_names`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ShownName<'a> {
    /// The function's full name.
    pub name: &'a str,
    /// The file it is defined in, if known.
    pub file: Option<&'a str>,
    /// Its line there, if known.
    pub line: Option<u32>,
}

impl<'a> ShownName<'a> {
    /// The function `name`, defined nowhere known.
    pub fn new(name: &'a str) -> Self {
        ShownName {
            name,
            file: None,
            line: None,
        }
    }

    /// This function, defined in `file` at `line`.
    pub fn at(mut self, file: Option<&'a str>, line: Option<u32>) -> Self {
        self.file = file;
        self.line = line;
        self
    }
}

/// The deepest a search for a distinguishing argument goes into nested lists in one step.
const MAX_DEPTH: usize = 8;
/// The most candidate arguments a step compares at one depth.
const MAX_CANDIDATES: usize = 256;
/// The most steps that reveal arguments: each splits some rows that looked alike.
const MAX_ROUNDS: usize = 16;

/// The names of the functions `shown` (one table's rows), shortened as [`short_name`] does,
/// and made distinct where [`short_name`] would show two different functions alike: the
/// template argument or parameter that tells them apart is shown, its own lists elided, with
/// the arguments around it as `…` (the shallowest such argument, then the first); rows whose
/// full names are equal, or whose names do not tell them apart (unbalanced brackets), get
/// their file's name and line (`[StatementList.hpp:40]`), then the whole path, then a number.
/// Names shown alike by nothing but their text stay alike only if the functions' names,
/// files and lines are all the same and the rows are one.
///
/// The cost is bounded by the rows' total name length times a constant (a few steps, each
/// over the names that still look alike, to a bounded depth), whatever the names hold.
///
/// ```
/// use profcodec_profile::{ShownName, distinct_short_names};
/// let names = distinct_short_names(&[
///     ShownName::new("Exec<For<0, Lambda<1> > >::run(Data<int>&)"),
///     ShownName::new("Exec<For<0, Lambda<2> > >::run(Data<int>&)"),
///     ShownName::new("Exec<Tile<3> >::run(Data<int>&)"),
///     ShownName::new("main"),
/// ]);
/// assert_eq!(
///     names,
///     [
///         "Exec<For<…, Lambda<1>>>::run(…)",
///         "Exec<For<…, Lambda<2>>>::run(…)",
///         "Exec<Tile<…>>::run(…)",
///         "main",
///     ]
/// );
/// ```
pub fn distinct_short_names(shown: &[ShownName<'_>]) -> Vec<String> {
    let mut opened: Vec<Opened> = vec![Opened::new(); shown.len()];
    let display = |i: usize, opened: &Opened| {
        let name = shown[i].name;
        let mut out = String::with_capacity(name.len().min(1 << 16));
        match render(name, 0..name.len(), opened, &mut out, None) {
            Some(()) => out,
            None => name.to_owned(),
        }
    };
    let mut names: Vec<String> = (0..shown.len()).map(|i| display(i, &opened[i])).collect();
    let mut unsplittable: HashSet<String> = HashSet::new();
    for _ in 0..MAX_ROUNDS {
        let groups: Vec<Vec<usize>> = alike(&names)
            .into_iter()
            .filter(|g| !unsplittable.contains(&names[g[0]]))
            .filter(|g| g.iter().any(|&i| shown[i].name != shown[g[0]].name))
            .collect();
        if groups.is_empty() {
            break;
        }
        for group in groups {
            let full: Vec<&str> = group.iter().map(|&i| shown[i].name).collect();
            let now: Vec<&Opened> = group.iter().map(|&i| &opened[i]).collect();
            match find_split(&full, &now) {
                Some(reveal) => {
                    for (&i, openings) in group.iter().zip(reveal) {
                        for (open, arg) in openings.into_iter().flatten() {
                            let args = opened[i].entry(open).or_default();
                            if !args.contains(&arg) {
                                args.push(arg);
                            }
                        }
                        names[i] = display(i, &opened[i]);
                    }
                }
                None => {
                    unsplittable.insert(names[group[0]].clone());
                }
            }
        }
    }
    locate(shown, &mut names);
    names
}

/// The rows (indices into `names`) whose names are equal, in groups of two or more, in the
/// order of their first row.
fn alike(names: &[String]) -> Vec<Vec<usize>> {
    let mut by_name: HashMap<&str, usize> = HashMap::new();
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for (i, name) in names.iter().enumerate() {
        let g = *by_name.entry(name).or_insert_with(|| {
            groups.push(Vec::new());
            groups.len() - 1
        });
        groups[g].push(i);
    }
    groups.retain(|g| g.len() > 1);
    groups
}

/// The lists to open in one row, outermost first: each list's opening bracket and the
/// argument of it to show.
type Openings = Vec<(usize, usize)>;

/// One argument to reveal in each row of a group (`None` where a row has no such argument):
/// the lists to open, and the argument's range.
type Candidate = Vec<Option<(Openings, Range<usize>)>>;

/// The arguments to reveal in the rows `names` (shown alike with `opened`) so that they are
/// no longer all alike: among the hidden arguments whose text differs between rows, the
/// shallowest one whose shortened form differs (the first of equal depth). `None` when no
/// argument within [`MAX_DEPTH`] lists tells the rows apart.
fn find_split(names: &[&str], opened: &[&Opened]) -> Option<Vec<Option<Openings>>> {
    let mut lists: Vec<Vec<Elided>> = Vec::with_capacity(names.len());
    for (name, opened) in names.iter().zip(opened) {
        let mut elided = Vec::new();
        let mut out = String::new();
        render(name, 0..name.len(), opened, &mut out, Some(&mut elided))?;
        lists.push(elided);
    }
    let mut frontier = candidates(&lists, &[]);
    for _ in 0..MAX_DEPTH {
        let mut next = Vec::new();
        for candidate in frontier.into_iter().take(MAX_CANDIDATES) {
            let text = |r: usize| candidate[r].as_ref().map(|(_, arg)| &names[r][arg.clone()]);
            if (1..names.len()).all(|r| text(r) == text(0)) {
                continue;
            }
            let short = |r: usize| text(r).map(short_name);
            if (1..names.len()).any(|r| short(r) != short(0)) {
                return Some(
                    candidate
                        .into_iter()
                        .map(|c| c.map(|(openings, _)| openings))
                        .collect(),
                );
            }
            // Alike when shortened: the difference is inside the argument's own lists.
            let mut inner: Vec<Vec<Elided>> = Vec::with_capacity(names.len());
            for (r, slot) in candidate.iter().enumerate() {
                let mut elided = Vec::new();
                if let Some((_, arg)) = slot {
                    let mut out = String::new();
                    render(
                        names[r],
                        arg.clone(),
                        &Opened::new(),
                        &mut out,
                        Some(&mut elided),
                    )?;
                }
                inner.push(elided);
            }
            next.extend(candidates(&inner, &candidate));
        }
        if next.is_empty() {
            break;
        }
        frontier = next;
    }
    None
}

/// The hidden arguments of `lists` (each row's elided lists, in the order printed) as
/// candidates, the k-th list of each row aligned with the others' k-th, each opening added
/// to the row's openings in `parent` (none when empty).
fn candidates(
    lists: &[Vec<Elided>],
    parent: &[Option<(Openings, Range<usize>)>],
) -> Vec<Candidate> {
    let most_lists = lists.iter().map(Vec::len).max().unwrap_or(0);
    let mut out = Vec::new();
    for k in 0..most_lists {
        let most_args = lists
            .iter()
            .filter_map(|l| l.get(k))
            .map(|e| e.args.len())
            .max()
            .unwrap_or(0);
        for j in 0..most_args {
            let candidate: Candidate = lists
                .iter()
                .enumerate()
                .map(|(r, l)| {
                    let e = l.get(k)?;
                    let arg = e.args.get(j).filter(|_| !e.shown.contains(&j))?;
                    let mut openings = match parent.get(r) {
                        Some(Some((openings, _))) => openings.clone(),
                        Some(None) => return None,
                        None => Vec::new(),
                    };
                    openings.push((e.open, j));
                    Some((openings, arg.clone()))
                })
                .collect();
            if candidate.iter().any(Option::is_some) {
                out.push(candidate);
            }
            if out.len() >= MAX_CANDIDATES {
                return out;
            }
        }
    }
    out
}

/// Rows still named alike get where their functions are: the file's name and the line, then
/// the file's whole path, then a number.
fn locate(shown: &[ShownName<'_>], names: &mut [String]) {
    fn place(file: Option<&str>, line: Option<u32>) -> String {
        match (file, line) {
            (Some(file), Some(line)) if line > 0 => format!(" [{file}:{line}]"),
            (Some(file), _) => format!(" [{file}]"),
            (None, Some(line)) if line > 0 => format!(" [line {line}]"),
            _ => String::new(),
        }
    }
    let file_name =
        |s: &ShownName<'_>| place(s.file.and_then(|f| f.rsplit(['/', '\\']).next()), s.line);
    let path = |s: &ShownName<'_>| place(s.file, s.line);
    for group in alike(names) {
        let plain = names[group[0]].clone();
        let mut tagged = group;
        for step in [&file_name as &dyn Fn(&ShownName<'_>) -> String, &path] {
            let tags: Vec<String> = tagged
                .iter()
                .map(|&i| format!("{plain}{}", step(&shown[i])))
                .collect();
            let again: HashSet<usize> = alike(&tags).into_iter().flatten().collect();
            let mut left = Vec::new();
            for (k, (i, tag)) in tagged.iter().zip(tags).enumerate() {
                if again.contains(&k) {
                    left.push(*i);
                } else {
                    names[*i] = tag;
                }
            }
            tagged = left;
        }
        for (n, &i) in tagged.iter().enumerate() {
            names[i] = format!("{plain}{} #{}", path(&shown[i]), n + 1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_are_elided() {
        let cases = [
            (
                "std::vector<int, std::allocator<int> >::push_back(int const&)",
                "std::vector<…>::push_back(…)",
            ),
            ("ns::Foo::bar() const", "ns::Foo::bar() const"),
            ("ns::Foo::bar(int) const &&", "ns::Foo::bar(…) const &&"),
            ("Foo::operator()(int)", "Foo::operator()(…)"),
            ("Foo::operator<(Foo const&)", "Foo::operator<(…)"),
            ("bool operator< <int>(int, int)", "bool operator< <…>(…)"),
            (
                "std::less<void>::operator()<int&, int&>(int&, int&) const",
                "std::less<…>::operator()<…>(…) const",
            ),
            (
                "main::{lambda(int)#1}::operator()(int) const",
                "main::{lambda(…)#1}::operator()(…) const",
            ),
            ("f(void (*)(int), char)", "f(…)"),
            (
                "<impl core::fmt::Debug for alloc::vec::Vec<T>>::fmt",
                "<impl core::fmt::Debug for alloc::vec::Vec<…>>::fmt",
            ),
            ("[0x114c]", "[0x114c]"),
            ("small.c:3", "small.c:3"),
            ("unbalanced<int(", "unbalanced<int("),
            ("Tpl<(1 > 0)>::f(int)", "Tpl<…>::f(…)"),
        ];
        for (full, short) in cases {
            assert_eq!(short_name(full), short, "{full}");
        }
    }

    #[test]
    fn names_without_lists_are_borrowed() {
        assert!(matches!(short_name("spinsleep"), Cow::Borrowed(_)));
        assert!(matches!(short_name("f()"), Cow::Borrowed(_)));
    }

    fn distinct(names: &[&str]) -> Vec<String> {
        let shown: Vec<ShownName<'_>> = names.iter().map(|n| ShownName::new(n)).collect();
        distinct_short_names(&shown)
    }

    /// RAJA's executors differ deep in their first template argument, then in the lambda
    /// they run: the shallowest argument that differs when shortened is shown, the rest
    /// elided; the rows split by one step show the same argument.
    #[test]
    fn a_differing_template_argument_is_shown() {
        let exec = |inner: &str, kernel: &str| {
            format!(
                "void RAJA::internal::StatementExecutor<RAJA::statement::For<1l, RAJA::seq_exec, \
                 {inner}>, RAJA::internal::ForTypes<>>::exec<RAJA::internal::LoopData<camp::tuple<int>, \
                 Kripke::Kernel::{kernel}(Kripke::Core::DataStore&)::{{lambda(int)#1}}> >(int&)"
            )
        };
        let names = distinct(&[
            &exec("RAJA::statement::Lambda<0l>", "LTimes"),
            &exec("RAJA::statement::Lambda<0l>", "LPlusTimes"),
            &exec("RAJA::statement::Tile<2l>", "LTimes"),
            "main",
        ]);
        assert_eq!(
            names,
            [
                "void RAJA::internal::StatementExecutor<RAJA::statement::For<…, \
                 RAJA::statement::Lambda<…>>, …>::exec<RAJA::internal::LoopData<…, \
                 Kripke::Kernel::LTimes(…)::{lambda(…)#1}>>(…)",
                "void RAJA::internal::StatementExecutor<RAJA::statement::For<…, \
                 RAJA::statement::Lambda<…>>, …>::exec<RAJA::internal::LoopData<…, \
                 Kripke::Kernel::LPlusTimes(…)::{lambda(…)#1}>>(…)",
                "void RAJA::internal::StatementExecutor<RAJA::statement::For<…, \
                 RAJA::statement::Tile<…>>, …>::exec<…>(…)",
                "main",
            ]
        );
    }

    #[test]
    fn a_differing_parameter_is_shown() {
        let names = distinct(&[
            "ns::solve(ns::Grid<double>&, int, ns::Mode)",
            "ns::solve(ns::Grid<double>&, long, ns::Mode)",
            "ns::solve(ns::Grid<float>&, int, ns::Mode)",
        ]);
        assert_eq!(
            names,
            [
                "ns::solve(ns::Grid<double>&, int, …)",
                "ns::solve(…, long, …)",
                "ns::solve(ns::Grid<float>&, int, …)",
            ]
        );
        // Those whose short names already differ are left as they are.
        assert_eq!(
            distinct(&["f(int)", "g(int)", "f<int>()"]),
            ["f(…)", "g(…)", "f<…>()"]
        );
    }

    /// Equal full names in different files are told apart by their file's name and line,
    /// then by the whole path, then by a number.
    #[test]
    fn equal_names_get_their_file_and_line() {
        let shown = [
            ShownName::new("helper(int)").at(Some("/src/a/util.c"), Some(10)),
            ShownName::new("helper(int)").at(Some("/src/b/io.c"), Some(10)),
            ShownName::new("helper(int)").at(Some("/src/c/io.c"), Some(10)),
            ShownName::new("helper(long)").at(None, None),
            ShownName::new("helper(long)").at(None, None),
            ShownName::new("other"),
        ];
        assert_eq!(
            distinct_short_names(&shown),
            [
                "helper(int) [util.c:10]",
                "helper(int) [/src/b/io.c:10]",
                "helper(int) [/src/c/io.c:10]",
                "helper(long) #1",
                "helper(long) #2",
                "other",
            ]
        );
    }

    /// Hostile names: unbalanced brackets, lone closers, deep nesting and multi-byte text
    /// neither panic nor take long, and rows stay distinct.
    #[test]
    fn hostile_names_are_bounded_and_distinct() {
        let deep = |leaf: &str| format!("{}{leaf}{}", "f<".repeat(50_000), ">".repeat(50_000));
        let wide = |leaf: &str| format!("g<{}{leaf}>()", "a, ".repeat(50_000));
        let many: Vec<String> = (0..200)
            .map(|i| format!("h<{}, {i}>(x)", "<".repeat(i % 3)))
            .collect();
        let mut names: Vec<String> = vec![
            deep("1"),
            deep("2"),
            wide("1"),
            wide("2"),
            "unbalanced<int(".into(),
            "unbalanced<int(".into(),
            "a>b)c(".into(),
            "a>b)c(".into(),
            "op::operator<(é<ü>)".into(),
            "op::operator<(é<ö>)".into(),
            "x<(,)>(,,)".into(),
            "x<(,,)>(,,)".into(),
        ];
        names.extend(many);
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        let start = std::time::Instant::now();
        let shown = distinct(&refs);
        assert!(start.elapsed().as_secs() < 20, "{:?}", start.elapsed());
        let unique: HashSet<&String> = shown.iter().collect();
        assert_eq!(unique.len(), shown.len(), "{:?}", &shown[4..12]);
        assert_eq!(shown[4], "unbalanced<int( #1");
        assert_eq!(shown[8], "op::operator<(é<ü>)");
    }
}
