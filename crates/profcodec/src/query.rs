//! What `top` and `diff` are asked, as every face asks it (feature `profile`): the options the
//! command line's flags and the Python package's keyword arguments share, the model's
//! [`Query`] and the [`TableOptions`] they make, and the names of the orderings and groupings
//! (`--by self`, `group="line"`).
//!
//! ```
//! use profcodec::query::{TopOptions, group_named};
//!
//! let mut options = TopOptions::new();
//! options.group = group_named("line").unwrap();
//! options.limit = Some(5);
//! let query = options.query();
//! assert_eq!(query.limit, Some(5));
//! assert_eq!(query.group, profcodec::profile::GroupBy::Line);
//! ```

use profcodec_profile::{Combine, ContextFilter, GroupBy, Order, Query, Selection};

use crate::text::TableOptions;

/// The options of `top` and `diff`: which metric, ordered and grouped how, how many rows, which
/// threads, ranks and processes, summed or averaged, and whether names are shown whole.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct TopOptions {
    /// The metric (value type) by name; `None` for the profile's main one.
    pub metric: Option<String>,
    /// The value that orders the rows.
    pub order: Order,
    /// How rows are grouped.
    pub group: GroupBy,
    /// The most rows; `None` for all.
    pub limit: Option<usize>,
    /// The threads, ranks and processes read (all when it keeps all).
    pub selection: Selection,
    /// Average over the contexts read instead of summing them: over the selected ones, or,
    /// without a selection, over every context measured (never a summary).
    pub mean: bool,
    /// Names whole in tables, not shortened (`<…>`, `(…)`).
    pub full_names: bool,
}

impl TopOptions {
    /// Every function of every context by self value of the main metric, all rows.
    pub fn new() -> TopOptions {
        TopOptions::default()
    }

    /// The model's query for these options.
    pub fn query(&self) -> Query {
        let mut query = Query::new().by(self.order).group(self.group);
        if let Some(metric) = &self.metric {
            query = query.value_type(metric.clone());
        }
        if let Some(limit) = self.limit {
            query = query.limit(limit);
        }
        if !self.selection.keeps_all() {
            query = query.contexts(ContextFilter::Select(self.selection.clone()));
        } else if self.mean {
            // The whole program of a profile with a summary (an HPCToolkit database's) is its
            // one summary context, whose mean is its sum: a mean is over the threads, ranks or
            // processes measured.
            query = query.contexts(ContextFilter::All);
        }
        if self.mean {
            query = query.combine(Combine::Mean);
        }
        query
    }

    /// How the tables of `top` and `diff` are shown for these options, without a width limit
    /// (the command line adds its terminal's); a selection is named in the table's heading.
    pub fn table_options(&self) -> TableOptions {
        let options = TableOptions::new()
            .order(self.order)
            .group(self.group)
            .mean(self.mean)
            .full_names(self.full_names);
        match self.selection.keeps_all() {
            true => options,
            false => options.only(self.selection.to_string()),
        }
    }
}

/// The ordering called `name`: `self` or `inclusive`.
pub fn order_named(name: &str) -> Option<Order> {
    match name {
        "self" => Some(Order::SelfValue),
        "inclusive" => Some(Order::Inclusive),
        _ => None,
    }
}

/// The grouping called `name`: `function`, `line`, `module`, or `path` (also `context`: a
/// call path is a calling context).
pub fn group_named(name: &str) -> Option<GroupBy> {
    match name {
        "function" => Some(GroupBy::Function),
        "line" => Some(GroupBy::Line),
        "module" => Some(GroupBy::Module),
        "path" | "context" => Some(GroupBy::Path),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_cover_every_ordering_and_grouping() {
        assert_eq!(order_named("inclusive"), Some(Order::Inclusive));
        assert_eq!(order_named("total"), None);
        assert_eq!(group_named("context"), group_named("path"));
        assert_eq!(group_named("module"), Some(GroupBy::Module));
        assert_eq!(group_named("file"), None);
    }

    #[test]
    fn a_selection_filters_contexts_and_names_the_table() {
        let mut options = TopOptions::new();
        assert_eq!(options.query(), Query::new());
        options.selection = Selection::new().ranks([1]);
        options.mean = true;
        let query = options.query();
        assert!(matches!(query.contexts, ContextFilter::Select(_)));
        assert_eq!(query.combine, Combine::Mean);
        assert_eq!(
            options.table_options(),
            TableOptions::new()
                .mean(true)
                .only(options.selection.to_string())
        );
    }
}
