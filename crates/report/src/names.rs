//! Function names as the report shows them: shortened as `profcodec top` shortens them
//! ([`profcodec_profile::distinct_short_names`]), told apart where two functions would look
//! alike, and cut at the end when still too long; the full name stays in `data-name` and the
//! `title` a pointer shows.

use std::collections::HashMap;

use profcodec_profile::{ShownName, distinct_short_names};

/// The most characters of a name a table cell shows; the rest is cut at the end, so that the
/// namespaces and the function's own name stay readable.
const MAX_SHOWN: usize = 120;

/// A function as the report names it: its full name and where it is defined.
type Place = (String, Option<String>, Option<u32>);

/// The functions one page names, gathered before their shown names are chosen together.
#[derive(Debug, Default)]
pub(crate) struct Names {
    places: Vec<Place>,
    index: HashMap<Place, usize>,
    shown: Vec<String>,
    /// The first place of each name, for names met without a file or line.
    by_name: HashMap<String, usize>,
}

impl Names {
    /// Adds the function `name` defined at `file`:`line` (each once).
    pub(crate) fn add(&mut self, name: &str, file: Option<&str>, line: Option<u32>) {
        let place = (name.to_owned(), file.map(str::to_owned), line);
        if !self.index.contains_key(&place) {
            self.by_name
                .entry(name.to_owned())
                .or_insert(self.places.len());
            self.index.insert(place.clone(), self.places.len());
            self.places.push(place);
        }
    }

    /// Adds the function `name` where it is not known where it is defined: it is shown as the
    /// first function of that name added.
    pub(crate) fn add_name(&mut self, name: &str) {
        if !self.by_name.contains_key(name) {
            self.add(name, None, None);
        }
    }

    /// Chooses the shown names of the functions added, all together.
    pub(crate) fn choose(&mut self) {
        let shown: Vec<ShownName<'_>> = self
            .places
            .iter()
            .map(|(name, file, line)| ShownName::new(name).at(file.as_deref(), *line))
            .collect();
        self.shown = distinct_short_names(&shown)
            .into_iter()
            .map(|s| cut(&s, MAX_SHOWN))
            .collect();
    }

    /// The shown name of the function `name` at `file`:`line`, or of the first function of
    /// that name, or `name` cut.
    pub(crate) fn shown(&self, name: &str, file: Option<&str>, line: Option<u32>) -> String {
        let place = (name.to_owned(), file.map(str::to_owned), line);
        self.index
            .get(&place)
            .or_else(|| self.by_name.get(name))
            .and_then(|&i| self.shown.get(i))
            .cloned()
            .unwrap_or_else(|| cut(name, MAX_SHOWN))
    }
}

/// The shown names of `labels` (distinct labels), as [`Names::choose`] chooses them.
pub(crate) fn short_labels(labels: &[String]) -> Vec<String> {
    let shown: Vec<ShownName<'_>> = labels.iter().map(|l| ShownName::new(l)).collect();
    distinct_short_names(&shown)
}

/// `name` cut at the end to at most `chars` characters, the cut marked with `…`.
pub(crate) fn cut(name: &str, chars: usize) -> String {
    match name.char_indices().nth(chars.saturating_sub(1)) {
        Some((end, _)) if name[end..].chars().nth(1).is_some() => format!("{}…", &name[..end]),
        _ => name.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_cut_at_the_end() {
        assert_eq!(cut("abcdef", 4), "abc…");
        assert_eq!(cut("abcd", 4), "abcd");
        assert_eq!(cut("ünïcödé", 3), "ün…");
    }

    #[test]
    fn alike_functions_are_told_apart() {
        let mut names = Names::default();
        names.add("Exec<For<0, Lambda<1> > >::run(Data<int>&)", None, None);
        names.add("Exec<For<0, Lambda<2> > >::run(Data<int>&)", None, None);
        names.add_name("main");
        names.choose();
        let one = names.shown("Exec<For<0, Lambda<1> > >::run(Data<int>&)", None, None);
        let two = names.shown("Exec<For<0, Lambda<2> > >::run(Data<int>&)", None, None);
        assert_ne!(one, two);
        assert_eq!(names.shown("main", Some("a.c"), Some(3)), "main");
    }
}
