//! Function names made short enough to read in a table.

use std::borrow::Cow;

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
    let bytes = name.as_bytes();
    let mut out = String::with_capacity(name.len());
    let mut i = 0;
    // Just after an operator's symbol (and blanks): `operator< <int>` has a template list.
    let mut after_operator = false;
    while i < bytes.len() {
        let c = bytes[i];
        // `operator<`, `operator()`: the operator's own symbol, copied.
        if out.ends_with("operator")
            && let Some(op) = OPERATORS.iter().find(|op| name[i..].starts_with(**op))
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
            let close = if c == b'<' { b'>' } else { b')' };
            let end = matching(bytes, i)?;
            if end == i + 1 {
                out.push(c as char);
            } else {
                out.push(c as char);
                out.push('…');
            }
            out.push(close as char);
            i = end + 1;
            continue;
        }
        // Copy one character (names are UTF-8).
        let ch = name[i..].chars().next()?;
        out.push(ch);
        i += ch.len_utf8();
    }
    Some(out)
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
}
